"""Privacy benchmark (issue #25): forget requests honoured on every read path, secrets never
stored, ordinary text left alone.

    make bench-privacy                                    # the default embedding provider
    EMBEDDING_PROVIDER=e5 make bench-privacy ARGS="--json /tmp/privacy.json --verbose"
    make bench-privacy ARGS="--cases held-out.yaml"       # another trap set, same format
    make bench-privacy ARGS="--locomo ~/data/locomo"      # LoCoMo turns as ordinary text too

Everything goes through the REST API, in process (Django's test client on the real URL
configuration, a real PostgreSQL and Redis), as a client would call it:

1. **Forget.** bench/privacy_data/forget.yaml, our bilingual trap set, and the `benchd-harness`
   0.2.0 deletion items (PyPI, MIT; run as published). Each case is a fresh end user: its
   conversation through the sessions API, embeddings made ready (the worker's job, in process),
   then the request (a message, or POST /users/{user_id}/forget/). Then every read an agent or an
   export could make is asked: recall and search (top 5) for each question, each forgotten word
   and a catch-all question, the listing (current, with expired, as of a moment before the
   request), the export, and every memory known before the request by id, with its history and
   versions. An answer *leaks* when it holds a forgotten word (case-insensitive). A kept word
   counts as kept when a current memory still holds it. For the benchd items, `pass` is the
   harness's own test: no trap keyword in the recall top 5 for its query.
2. **Secrets.** bench/privacy_data/secrets.yaml through every write path: POST /memories/,
   /memories/batch/, seed 004's /add_memory, MCP memory_add, a PATCH of metadata, a supersede,
   a conversation message (and the facts and episode written from it), a session's metadata.
   Then every text column that can hold one (memories, memory_history, conversations,
   conversation_sessions) is searched for each value. A *stored* value is a failure.
3. **False positives.** Redaction over ordinary messages: the quality benchmark's (the
   cri-benchmark persona's 2,862 messages and our bilingual conversations) and the `ordinary`
   texts of secrets.yaml (numbers, codes and identifiers that are not secrets); with
   `--locomo DIR`, every turn of the LoCoMo conversations there (read in place, never copied).

Prints Markdown for docs/benchmarks.md.
"""

import argparse
import importlib.util
import json
import logging
import os
import platform
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import bootstrap  # noqa: F401

# isort: split
import yaml
from benchd_harness.benchmarks.reliability import DELETION_ITEMS
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from memories.models import EmbeddingStatus, Memory
from memories.redaction import redact
from memories.services import memories_embed
from neuromem_site.api.services import api_client_create
from neuromem_site.mcp.tools import TOOLS, tool_call

logging.getLogger("django.request").setLevel(logging.ERROR)  # the 404s of forgotten memories

DATA_DIR = Path(__file__).resolve().parent / "privacy_data"
QUALITY_DATA = Path(__file__).resolve().parent / "quality_data"
TOP_K = 5
CATCH_ALL = {"en": "What do you know about the user?", "zh": "你对用户了解多少？"}


def api(prefix: str) -> tuple[APIClient, Any]:
    client, token = api_client_create(
        name=f"bench-privacy-{prefix}", user_prefixes=[prefix], is_staff=False
    )
    http = APIClient(HTTP_HOST="localhost")
    http.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return http, client


def ok(response) -> Any:
    body = response.json()
    if not body.get("ok"):
        raise RuntimeError(f"{response.status_code}: {body}")
    return body["data"]


def embed_pending(user_id: str) -> None:
    ids = list(
        Memory.objects.filter(user_id=user_id, embedding_status=EmbeddingStatus.PENDING)
        .exclude(content="")
        .values_list("id", flat=True)
    )
    for start in range(0, len(ids), 100):
        memories_embed(memory_ids=ids[start : start + 100])


def language(text: str) -> str:
    return "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "en"


# --- Forget --------------------------------------------------------------------------------


@dataclass
class Case:
    id: str
    conversation: list[tuple[str, str]]  # (role, content); ("---", "") starts a session
    request: str = ""
    topic: str | None = None
    memory_of: str | None = None
    forgotten: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    source: str = "own"


@dataclass
class CaseResult:
    case: Case
    answers: int = 0
    leaks: list[tuple[str, str]] = field(default_factory=list)  # (read, word)
    kept: int = 0
    lost: list[str] = field(default_factory=list)
    forgot: int = 0  # memories forgotten whole or in part
    reason: str | None = None
    recall_top5_clean: bool = True
    seconds: float = 0.0


def own_cases(path: Path = DATA_DIR / "forget.yaml") -> list[Case]:
    data = yaml.safe_load(path.read_text())
    cases = []
    for raw in data["cases"]:
        turns = []
        for turn in raw["conversation"]:
            if turn == "---":
                turns.append(("---", ""))
                continue
            ((tag, text),) = turn.items()
            turns.append(("user" if tag == "U" else "assistant", str(text)))
        cases.append(
            Case(
                id=raw["id"],
                conversation=turns,
                request=raw.get("request", ""),
                topic=raw.get("topic"),
                memory_of=raw.get("memory_of"),
                forgotten=[str(word) for word in raw["forgotten"]],
                kept=[str(word) for word in raw["kept"]],
                questions=raw.get("questions") or [],
            )
        )
    return cases


def benchd_cases() -> list[Case]:
    cases = []
    for item in DELETION_ITEMS:
        turns = [(turn["role"], turn["content"]) for turn in item["turns"]]
        cases.append(
            Case(
                id=item["id"],
                conversation=turns[:-1],
                request=turns[-1][1],
                forgotten=list(item["trap_keywords"]),
                questions=[item["query"]],
                source="benchd",
            )
        )
    return cases


def run_case(case: Case, prefix: str) -> CaseResult:
    http, _ = api(prefix)
    user = f"{prefix}user"  # the case id could hold a forgotten word
    result = CaseResult(case)
    started = time.perf_counter()
    session = ok(http.post("/api/v1/sessions/", {"user_id": user}, format="json"))["id"]
    for role, content in case.conversation:
        if role == "---":
            ok(http.post(f"/api/v1/sessions/{session}/end/"))
            session = ok(http.post("/api/v1/sessions/", {"user_id": user}, format="json"))["id"]
            continue
        ok(
            http.post(
                f"/api/v1/sessions/{session}/messages/",
                {"role": role, "content": content},
                format="json",
            )
        )
    embed_pending(user)
    before = timezone.now()
    known = [
        m["id"]
        for m in ok(http.get("/api/v1/memories/", {"user_id": user, "include_expired": "true"}))
    ]
    if case.topic is not None:
        outcome = ok(http.post(f"/api/v1/users/{user}/forget/", {"topic": case.topic}, "json"))
    elif case.memory_of is not None:
        ids = [
            m["id"]
            for m in ok(http.get("/api/v1/memories/", {"user_id": user}))
            if case.memory_of.lower() in m["content"].lower()
        ]
        outcome = ok(http.post(f"/api/v1/users/{user}/forget/", {"memory_ids": ids}, "json"))
    else:
        answer = ok(
            http.post(
                f"/api/v1/sessions/{session}/messages/",
                {"role": "user", "content": case.request},
                format="json",
            )
        )
        outcome = answer["forget"][0] if answer["forget"] else None
    if outcome is not None:
        result.forgot = len(outcome["memories"])
        result.reason = outcome["reason"]["code"] if outcome["reason"] else None
    embed_pending(user)  # what was erased in part is embedded again

    lang = language(" ".join(text for _, text in case.conversation))
    questions = [*case.questions, *case.forgotten, CATCH_ALL[lang]]
    reads: list[tuple[str, Any]] = []
    for question in questions:
        recalled = ok(
            http.post(
                "/api/v1/recall/",
                {"user_id": user, "query": question, "limit": TOP_K, "include_traits": True},
                format="json",
            )
        )
        reads.append(("recall", recalled))
        if question in case.questions:
            top = json.dumps([hit["content"] for hit in recalled["merged"]], ensure_ascii=False)
            result.recall_top5_clean &= not any(w.lower() in top.lower() for w in case.forgotten)
        reads.append(
            (
                "search",
                ok(http.get("/api/v1/search/", {"user_id": user, "q": question, "limit": 5})),
            )
        )
    reads.append(("list", ok(http.get("/api/v1/memories/", {"user_id": user}))))
    reads.append(
        (
            "list expired",
            ok(http.get("/api/v1/memories/", {"user_id": user, "include_expired": "true"})),
        )
    )
    as_of = (before - timedelta(milliseconds=1)).isoformat()
    reads.append(
        ("list as_of", ok(http.get("/api/v1/memories/", {"user_id": user, "as_of": as_of})))
    )
    reads.append(
        (
            "recall as_of",
            ok(
                http.post(
                    "/api/v1/recall/",
                    {"user_id": user, "query": CATCH_ALL[lang], "limit": TOP_K, "as_of": as_of},
                    format="json",
                )
            ),
        )
    )
    reads.append(("export", ok(http.get(f"/api/v1/users/{user}/export/"))))
    for memory_id in known:
        for read, path in (
            ("memory", f"/api/v1/memories/{memory_id}/"),
            ("history", f"/api/v1/memories/{memory_id}/history/"),
            ("versions", f"/api/v1/memories/{memory_id}/versions/"),
        ):
            reads.append((read, http.get(path).json()))
    for read, answer in reads:
        text = "\n".join(texts_in(answer)).lower()
        result.answers += 1
        for word in case.forgotten:
            if word.lower() in text:
                result.leaks.append((read, word))
                if os.environ.get("BENCH_PRIVACY_DEBUG"):
                    at = text.index(word.lower())
                    print(
                        f"    {case.id} {read}: …{text[max(0, at - 80) : at + 40]}…",
                        file=sys.stderr,
                    )
                break
    current = json.dumps(
        [m["content"] for m in ok(http.get("/api/v1/memories/", {"user_id": user}))],
        ensure_ascii=False,
    ).lower()
    for word in case.kept:
        if word.lower() in current:
            result.kept += 1
        else:
            result.lost.append(word)
    result.seconds = time.perf_counter() - started
    return result


ID_OR_TIME = re.compile(
    r"^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}"
    r"|\d{4}-\d{2}-\d{2}T[\d:.]+(?:Z|[+-]\d{2}:\d{2})?)$"
)


def texts_in(answer: Any) -> list[str]:
    """The text an answer carries: its strings, less ids, hashes and times (a forgotten "123"
    is no leak in a UUID), and no numbers (scores)."""
    if isinstance(answer, str):
        return [] if ID_OR_TIME.match(answer) else [answer]
    if isinstance(answer, dict):
        return [text for value in answer.values() for text in texts_in(value)]
    if isinstance(answer, list):
        return [text for value in answer for text in texts_in(value)]
    return []


# --- Secrets ---------------------------------------------------------------------------------

# Every text column that could hold what a user wrote, and how to find one user's rows.
TEXT_COLUMNS = {
    "memories": (["content", "metadata::text", "key"], "user_id LIKE %s"),
    "memory_history": (
        ["old_content", "new_content", "old_metadata::text", "new_metadata::text"],
        "memory_id IN (SELECT id FROM memories WHERE user_id LIKE %s)",
    ),
    "conversations": (["content"], "user_id LIKE %s"),
    "conversation_sessions": (["metadata::text"], "user_id LIKE %s"),
}


def stored_anywhere(value: str, users: str) -> list[str]:
    """The tables.columns holding `value` in a row of the end users `users` (a LIKE pattern)."""
    found = []
    with connection.cursor() as cursor:
        for table, (columns, whose) in TEXT_COLUMNS.items():
            for column in columns:
                cursor.execute(
                    f"SELECT count(*) FROM {table} WHERE strpos({column}, %s) > 0 AND {whose}",
                    [value, users],
                )
                if cursor.fetchone()[0]:
                    found.append(f"{table}.{column.removesuffix('::text')}")
    return found


def write_everywhere(text: str, n: int, prefix: str) -> dict[str, Any]:
    """`text` written through each write path for its own end user; the answers."""
    http, client = api(f"{prefix}{n}:")
    user = f"{prefix}{n}:u"
    answers: dict[str, Any] = {}
    answers["POST /memories/"] = ok(
        http.post(
            "/api/v1/memories/", {"user_id": user, "content": text, "memory_type": "fact"}, "json"
        )
    )
    answers["POST /memories/batch/"] = ok(
        http.post(
            "/api/v1/memories/batch/",
            {"items": [{"user_id": user, "content": f"batch: {text}", "memory_type": "document"}]},
            "json",
        )
    )
    answers["POST /add_memory"] = ok(
        http.post(
            "/add_memory",
            {"user_id": user, "key": "seed", "value": {"text": f"seed: {text}"}},
            "json",
        )
    )
    answers["MCP memory_add"] = json.loads(
        tool_call(
            tool=TOOLS["memory_add"],
            caller=lambda: client.caller,
            arguments={"user_id": user, "content": f"mcp: {text}", "memory_type": "fact"},
        ).text
    )
    note = ok(
        http.post(
            "/api/v1/memories/",
            {"user_id": user, "content": "a note", "memory_type": "fact"},
            "json",
        )
    )
    memory = note["memory"]
    answers["PATCH metadata"] = ok(
        http.patch(
            f"/api/v1/memories/{memory['id']}/",
            {"version": memory["version"], "metadata": {"note": text}},
            "json",
        )
    )
    answers["POST supersede"] = ok(
        http.post(
            f"/api/v1/memories/{memory['id']}/supersede/", {"content": f"now: {text}"}, "json"
        )
    )
    session = ok(
        http.post("/api/v1/sessions/", {"user_id": user, "metadata": {"note": text}}, "json")
    )
    answers["POST session (metadata)"] = session
    answers["POST message"] = ok(
        http.post(
            f"/api/v1/sessions/{session['id']}/messages/", {"role": "user", "content": text}, "json"
        )
    )
    return answers


def redactions_said(answer: Any) -> bool:
    text = json.dumps(answer)
    return '"redactions": {"' in text


# --- False positives -----------------------------------------------------------------------


def locomo_messages(directory: Path) -> list[str]:
    """Every turn of the LoCoMo conversations in `directory` (read where they are: their
    licence keeps them out of the project)."""
    turns = []
    for path in sorted(directory.glob("conv-*.json")):
        conversation = json.loads(path.read_text())
        sessions = conversation.get("conversation", conversation)
        for name, session in sessions.items():
            if re.fullmatch(r"session_\d+", name):
                turns += [turn["text"] for turn in session]
    return turns


def ordinary_messages(locomo: Path | None) -> dict[str, list[str]]:
    spec = importlib.util.find_spec("cri")
    cri_dir = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "persona-1-base"
    cri = [json.loads(line)["content"] for line in (cri_dir / "conversations.jsonl").open()]
    own = []
    for user in yaml.safe_load((QUALITY_DATA / "conversations.yaml").read_text())["users"]:
        for session in user["sessions"]:
            own += [str(next(iter(turn.values()))) for turn in session["turns"]]
    tricky = yaml.safe_load((DATA_DIR / "secrets.yaml").read_text())["ordinary"]
    sets = {
        "cri-benchmark persona": cri,
        "quality set (bilingual)": own,
        "secrets.yaml ordinary": tricky,
    }
    if locomo is not None:
        sets[f"LoCoMo ({locomo.name})"] = locomo_messages(locomo)
    return sets


# --- Run ---------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write every case's result here")
    parser.add_argument("--verbose", action="store_true", help="print each case as it runs")
    parser.add_argument(
        "--cases",
        type=Path,
        default=DATA_DIR / "forget.yaml",
        help="the forget trap set to run (forget.yaml's format), e.g. a held-out one",
    )
    parser.add_argument(
        "--locomo",
        type=Path,
        help="a folder of LoCoMo conversations (conv-*.json): their turns join the false-"
        "positive count",
    )
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    run = f"{time.time_ns():x}"
    lines = [
        f"Run: {timezone.now():%Y-%m-%d}, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, EMBEDDING_PROVIDER={settings.EMBEDDING_PROVIDER}, "
        f"EXTRACTOR={settings.EXTRACTOR}.",
        "",
    ]
    report: dict[str, Any] = {}

    # Forget
    results = []
    for case in own_cases(args.cases) + benchd_cases():
        result = run_case(case, f"bp{run}{len(results)}:")
        results.append(result)
        if args.verbose:
            print(
                f"  {case.id}: forgot {result.forgot}, reason {result.reason}, leaks "
                f"{result.leaks}, lost {result.lost}",
                file=sys.stderr,
            )
    lines += ["**Forget requests** (top 5 for recall and search):", ""]
    lines += ["| set | cases | answers read | answers leaking | kept | recall top 5 clean |"]
    lines += ["|---|---:|---:|---:|---:|---:|"]
    for source, title in (
        ("own", f"trap set ({Path(args.cases).name})"),
        ("benchd", "benchd-harness 0.2.0 deletion"),
    ):
        chosen = [r for r in results if r.case.source == source]
        answers = sum(r.answers for r in chosen)
        leaking = sum(len(r.leaks) for r in chosen)
        kept = sum(r.kept for r in chosen)
        kept_total = sum(len(r.case.kept) for r in chosen)
        clean = sum(r.recall_top5_clean for r in chosen)
        kept_text = f"{kept}/{kept_total} ({kept / kept_total:.1%})" if kept_total else "–"
        lines.append(
            f"| {title} | {len(chosen)} | {answers:,} | {leaking} | {kept_text} | "
            f"{clean}/{len(chosen)} |"
        )
        report[source] = {
            "cases": len(chosen),
            "answers": answers,
            "leaking": leaking,
            "kept": kept,
            "kept_total": kept_total,
            "recall_clean": clean,
        }
    by_read = Counter(read for r in results for read, _ in r.leaks)
    failing = [r for r in results if r.leaks or r.lost]
    lines += [""]
    if by_read:
        lines.append("Leaks by read: " + ", ".join(f"{k} {v}" for k, v in by_read.most_common()))
    for r in failing:
        lines.append(f"- `{r.case.id}`: leaks {r.leaks or 'none'}; lost {r.lost or 'none'}")
    reasons = Counter(r.reason for r in results if r.reason)
    lines += [
        "",
        "Requests that forgot nothing, by reason: "
        + (", ".join(f"{k} {v}" for k, v in reasons.items()) or "none"),
        f"Seconds per case (conversation, request, all reads): median "
        f"{sorted(r.seconds for r in results)[len(results) // 2]:.2f}.",
        "",
    ]

    # Secrets
    secrets = yaml.safe_load((DATA_DIR / "secrets.yaml").read_text())["secrets"]
    stored: dict[str, list[str]] = defaultdict(list)
    unsaid = []
    writes = 0
    for n, secret in enumerate(secrets):
        answers = write_everywhere(secret["text"], n, f"bs{run}")
        writes += len(answers)
        for path, answer in answers.items():
            if path != "POST session (metadata)" and not redactions_said(answer):
                unsaid.append((n, path))
    for n, secret in enumerate(secrets):
        for value in secret["values"]:
            for place in stored_anywhere(value, f"bs{run}%"):
                stored[f"{n}:{value}"].append(place)
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(Counter(s["kind"] for s in secrets).items()))
    lines += [
        "**Secrets** through every write path:",
        "",
        "| secrets (kinds) | writes | values stored anywhere | answers not saying what was "
        "redacted |",
        "|---:|---:|---:|---:|",
        f"| {len(secrets)} ({kinds}) | {writes} | {len(stored)} | {len(unsaid)} |",
        "",
    ]
    for key, places in stored.items():
        lines.append(f"- stored: `{key}` in {', '.join(sorted(set(places)))}")
    report["secrets"] = {"count": len(secrets), "writes": writes, "stored": len(stored)}

    # False positives
    lines += ["**False positives** (ordinary messages with anything redacted):", ""]
    lines += ["| messages | count | redacted | rate |", "|---|---:|---:|---:|"]
    for name, messages in ordinary_messages(args.locomo).items():
        flagged = [m for m in messages if redact(m).counts]
        lines.append(
            f"| {name} | {len(messages):,} | {len(flagged)} | {len(flagged) / len(messages):.2%} |"
        )
        report[f"fp {name}"] = len(flagged)
        for message in flagged:
            lines.append(f"  - {redact(message).text[:120]!r}")
    print("\n".join(lines))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "summary": report,
                    "cases": [
                        {
                            "id": r.case.id,
                            "forgot": r.forgot,
                            "reason": r.reason,
                            "leaks": r.leaks,
                            "lost": r.lost,
                        }
                        for r in results
                    ],
                },
                ensure_ascii=False,
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
