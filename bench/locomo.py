"""Conversational retrieval benchmark: LoCoMo's long conversations (issue #28), written through
the service two ways, every question asked of `POST /api/v1/recall/` beside BM25 and dense-only
baselines over the same memories, in the same run.

    make bench-locomo ARGS="--locomo ~/data/locomo"                  # both ways, default model
    EMBEDDING_PROVIDER=e5 make bench-locomo ARGS="--locomo DIR"      # one run = one provider
    make bench-locomo ARGS="--locomo DIR --ways turns --json out.json"

The data: LoCoMo (Maharana et al., ACL 2024, CC BY-NC 4.0), conversations in its own JSON format
(`conv-*.json`: `speaker_a`, `speaker_b`, `session_N` turns with `speaker`, `dia_id`, `text` and
an optional `blip_caption` for a shared photo, `session_N_date_time`, and `qa` with each
question's `evidence`, the `dia_id`s of the turns that answer it). Read where they are: never
copied into this repository. Questions of categories 1-4 carry evidence (5, adversarial, has
none and is skipped).

One end user per conversation; each turn is "<speaker>: <text>" (a shared photo adds
"[shares <caption>]"), as a log of a two-person chat names its speakers. Two ways in, over HTTP
(the web service as `make run` starts it):
- `turns`: every turn an `episodic` memory, `POST /api/v1/memories/batch/`, `valid_at` its
  session's date (the turn's position added in seconds, to keep their order);
- `sessions`: as an agent writes its conversation: one session (`POST /api/v1/sessions/`) per
  LoCoMo session, every turn a message with `sent_at` (speaker A's turns as `user`, speaker B's
  as `assistant`), the session ended after. The service keeps each user turn as an episode with
  the assistant turn it answers, and extracts facts: a memory stands for the turns it was
  written from (memory_sources) and for the assistant turn its episode quotes.
The worker's job (`memories_embed`) then makes the embeddings ready, timed (memories/s).

Systems, each over the same stored memories of the user (all visible: nothing in LoCoMo is
superseded in time):
- recall: `POST /api/v1/recall/`, `limit` 10, as a client asks (no `as_of`), timed;
- BM25: bm25s over the memories' texts (Latin words lower-cased without English stop words,
  Han characters as bigrams: bench/quality.py's tokens);
- dense (<model>): exact cosine top 10 with each local model (`use`, `e5`): the configured
  provider's vectors as the worker stored them, the other's computed here.
Scores, per question: evidence recall@5 and @10 (the share of its evidence turns among the
hits), hit@10 (any of them), MRR; by category and over all, and recall@10 as a ratio to BM25.
"""

import argparse
import json
import math
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import bootstrap  # noqa: F401

# isort: split
import httpx
import numpy as np
from common import api_over_http, percentile
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings
from quality import (
    Baselines,
    Question,
    Ranking,
    Stored,
    bm25_system,
    comma_list,
    dense_system,
    embed_pending,
    hit_of,
    output_arguments,
    run_info,
    run_line,
    sweep_grid,
    unit_rows,
)

from core.access import SYSTEM
from memories.embeddings import E5EmbeddingProvider, UniversalSentenceEncoderProvider
from memories.recall import RecallQuery, memories_recall
from neuromem_site.api.services import api_client_create

CATEGORIES = {1: "single-hop", 2: "temporal", 3: "multi-hop", 4: "open-domain"}
WAYS = ("turns", "sessions")
TOP_K = 10
BATCH_SIZE = 500
LOCAL_MODELS = {"use": UniversalSentenceEncoderProvider, "e5": E5EmbeddingProvider}


# --- Data ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    key: str  # "<conversation>:<dia_id>"
    speaker: str
    text: str
    said_at: datetime

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Conversation:
    name: str
    speaker_a: str
    sessions: list[list[Turn]]
    questions: list[tuple[str, int, list[str]]]  # text, category, evidence keys


def session_time(value: str) -> datetime:
    """LoCoMo's session dates: "<h:mm> <am|pm> on <day> <month>, <year>"."""
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load_conversation(path: Path) -> Conversation:
    data = json.loads(path.read_text())
    name = path.stem
    sessions: list[list[Turn]] = []
    numbers = sorted(
        int(key.removeprefix("session_"))
        for key in data
        if key.startswith("session_") and key.removeprefix("session_").isdigit()
    )
    for number in numbers:
        started = session_time(data[f"session_{number}_date_time"])
        turns = []
        for position, turn in enumerate(data[f"session_{number}"]):
            text = turn["text"].strip()
            if turn.get("blip_caption"):
                text = f"{text} [shares {turn['blip_caption']}]".strip()
            turns.append(
                Turn(
                    key=f"{name}:{turn['dia_id']}",
                    speaker=turn["speaker"],
                    text=text,
                    said_at=started + timedelta(seconds=position),
                )
            )
        if turns:
            sessions.append(turns)
    known = {turn.key for session in sessions for turn in session}
    questions = []
    for qa in data["qa"]:
        if qa.get("category") not in CATEGORIES:
            continue
        # A few evidence entries hold two ids separated by ";"; a few name no turn at all.
        evidence = [
            f"{name}:{part.strip()}"
            for entry in qa.get("evidence", [])
            for part in entry.replace(",", ";").split(";")
            if f"{name}:{part.strip()}" in known
        ]
        if evidence:
            questions.append((qa["question"], qa["category"], evidence))
    return Conversation(name, data["speaker_a"], sessions, questions)


# --- Writing ---------------------------------------------------------------------------------


def write_turns(client: httpx.Client, user_id: str, conversation: Conversation) -> dict[str, set]:
    """Every turn an episodic memory through the batch route; memory id → the turns it stands for
    (a repeated turn, answered NOOP, is stood for by the memory it repeats)."""
    turns = [turn for session in conversation.sessions for turn in session]
    sources: dict[str, set] = defaultdict(set)
    for start in range(0, len(turns), BATCH_SIZE):
        chunk = turns[start : start + BATCH_SIZE]
        answer = client.post(
            "/memories/batch/",
            json={
                "items": [
                    {
                        "user_id": user_id,
                        "content": turn.content,
                        "memory_type": "episodic",
                        "valid_at": turn.said_at.isoformat(),
                        "metadata": {"speaker": turn.speaker, "turn": turn.key.split(":", 1)[1]},
                    }
                    for turn in chunk
                ]
            },
        )
        answer.raise_for_status()
        for result, turn in zip(answer.json()["data"]["results"], chunk, strict=True):
            if not result["ok"]:
                raise RuntimeError(f"{turn.key} not written: {result['error']}")
            sources[result["id"]].add(turn.key)
    return sources


def write_sessions(
    client: httpx.Client, user_id: str, conversation: Conversation
) -> dict[str, set]:
    """The conversation as an agent writes it, a session at a time; memory id → the turns it
    was written from, and the assistant turn its episode quotes."""
    sources: dict[str, set] = defaultdict(set)
    for turns in conversation.sessions:
        session = client.post("/sessions/", json={"user_id": user_id})
        session.raise_for_status()
        session_id = session.json()["data"]["id"]
        before: Turn | None = None
        for turn in turns:
            role = "user" if turn.speaker == conversation.speaker_a else "assistant"
            answer = client.post(
                f"/sessions/{session_id}/messages/",
                json={"role": role, "content": turn.content, "sent_at": turn.said_at.isoformat()},
            )
            answer.raise_for_status()
            for result in answer.json()["data"]["memories"]:
                memory = result["memory"]
                sources[memory["id"]].add(turn.key)
                if (
                    memory["memory_type"] == "episodic"
                    and before
                    and before.speaker != turn.speaker
                ):
                    sources[memory["id"]].add(before.key)
            before = turn
        client.post(f"/sessions/{session_id}/end/").raise_for_status()
    return sources


# --- Systems ---------------------------------------------------------------------------------


def recall_system(
    client: httpx.Client, stored: Stored, latencies: list[float]
) -> Callable[[Question], Ranking]:
    def rank(question: Question) -> Ranking:
        started = time.perf_counter()
        answer = client.post(
            "/recall/",
            json={
                "user_id": question.user_id,
                "query": question.text,
                "limit": TOP_K,
                "include_traits": False,
                "fields": "compact",
            },
        )
        latencies.append(time.perf_counter() - started)
        answer.raise_for_status()
        return [hit_of(stored, memory["id"]) for memory in answer.json()["data"]["merged"]]

    return rank


def in_process_recall(stored: Stored) -> Callable[[Question], Ranking]:
    """The same recall in this process, for --sweep (settings read at each recall)."""

    def rank(question: Question) -> Ranking:
        hits = memories_recall(
            caller=SYSTEM, request=RecallQuery(user_id=question.user_id, query=question.text)
        )
        return [hit_of(stored, str(hit.memory.id)) for hit in hits]

    return rank


def other_dense_system(baselines: Baselines, model: str) -> Callable[[Question], Ranking]:
    """Dense-only with a local model other than the configured one: the same memories embedded
    here, in the same run."""
    provider = LOCAL_MODELS[model]()
    vectors: dict[str, np.ndarray] = {}
    for rows in baselines.rows.values():
        embedded = unit_rows(provider.embed(rows["texts"]))
        vectors |= dict(zip(rows["ids"], embedded, strict=True))

    def rank(question: Question) -> Ranking:
        corpus = baselines.corpus(question)
        matrix = np.stack([vectors[memory_id] for memory_id in corpus.memory_ids])
        query = unit_rows(provider.embed_query(question.text)[None, :])[0]
        return baselines.top_k(corpus, matrix @ query, floor=None)

    return rank


# --- Scores ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    category: str
    recall_5: float
    recall_10: float
    hit_10: float
    reciprocal_rank: float


def score(question: Question, category: str, ranking: Ranking) -> Score:
    wanted = set(question.evidence)

    def found(k: int) -> set:
        return wanted & set().union(*(hit.stands_for for hit in ranking[:k]))

    first = next((n for n, hit in enumerate(ranking, 1) if hit.stands_for & wanted), math.inf)
    return Score(
        category=category,
        recall_5=len(found(5)) / len(wanted),
        recall_10=len(found(10)) / len(wanted),
        hit_10=float(first <= TOP_K),
        reciprocal_rank=0.0 if first > TOP_K else 1 / first,
    )


def means(scores: list[Score]) -> dict[str, float]:
    return {
        name: statistics.fmean(getattr(s, name) for s in scores)
        for name in ("recall_5", "recall_10", "hit_10", "reciprocal_rank")
    }


# --- Run -------------------------------------------------------------------------------------


@dataclass
class WayResult:
    way: str
    memories: int
    seconds_write: float
    seconds_embed: float
    scores: dict[str, list[Score]]  # system → per question
    latencies: list[float]
    sweep: list[tuple[str, list[Score]]]  # setting values → recall's scores under them


def run_way(
    way: str, run: str, conversations: list[Conversation], client: httpx.Client, sweeps: list[str]
) -> WayResult:
    writer = write_turns if way == "turns" else write_sessions
    users = {c.name: f"locomo-{way}-{run}-{c.name}" for c in conversations}
    started = time.perf_counter()
    sources: dict[str, set] = {}
    for conversation in conversations:
        sources |= writer(client, users[conversation.name], conversation)
    seconds_write = time.perf_counter() - started
    seconds_embed = embed_pending(list(users.values()))
    frozen = {memory_id: frozenset(keys) for memory_id, keys in sources.items()}
    stored = Stored(
        users=sorted(users.values()),
        sources=frozen,
        stands_for=frozen,
        operations={},
        messages=sum(len(s) for c in conversations for s in c.sessions),
        seconds_write=seconds_write,
        seconds_embed=seconds_embed,
        warnings=[],
    )
    baselines = Baselines(stored)
    asked_at = datetime.now(UTC)
    questions = [
        (
            Question(
                dataset="locomo",
                user_id=users[c.name],
                text=text,
                language="en",
                memory_language="en",
                evidence=evidence,
                asked_at=asked_at,
            ),
            CATEGORIES[category],
        )
        for c in conversations
        for text, category, evidence in c.questions
    ]
    latencies: list[float] = []
    systems = {
        "recall": recall_system(client, stored, latencies),
        "BM25": bm25_system(baselines),
        f"dense ({settings.EMBEDDING_PROVIDER})": dense_system(baselines),
        **{
            f"dense ({model})": other_dense_system(baselines, model)
            for model in LOCAL_MODELS
            if model != settings.EMBEDDING_PROVIDER
        },
    }
    scores = {
        name: [score(q, category, rank(q)) for q, category in questions]
        for name, rank in systems.items()
    }
    memories = sum(len(baselines.rows[u]["ids"]) for u in stored.users)
    swept = []
    recall = in_process_recall(stored)
    for label, values in sweep_grid(sweeps):
        with override_settings(**values):
            swept.append((label, [score(q, category, recall(q)) for q, category in questions]))
    return WayResult(way, memories, seconds_write, seconds_embed, scores, latencies, swept)


def report(result: WayResult, questions: int) -> tuple[str, dict[str, Any]]:
    bm25 = means(result.scores["BM25"])["recall_10"]
    latency_ms = {
        "p50": 1000 * percentile(result.latencies, 0.5),
        "p95": 1000 * percentile(result.latencies, 0.95),
    }
    memories_per_second = result.memories / max(result.seconds_embed, 1e-9)
    by_category: dict[str, dict[str, list[Score]]] = defaultdict(lambda: defaultdict(list))
    for system, scores in result.scores.items():
        for s in scores:
            by_category[s.category][system].append(s)
            by_category["all"][system].append(s)
    lines = [
        f"**{result.way}**: {result.memories:,} memories written in {result.seconds_write:.1f} s, "
        f"embedded by the worker's job in {result.seconds_embed:.1f} s "
        f"({memories_per_second:.0f} memories/s); {questions} questions; `/recall/` over HTTP "
        f"p50 {latency_ms['p50']:.1f} ms, p95 {latency_ms['p95']:.1f} ms.",
        "",
        "| system | category | questions | recall@5 | recall@10 | × BM25 | hit@10 | MRR |",
        "|---|---|---|---|---|---|---|---|",
    ]
    numbers: dict[str, Any] = {}
    for category in [*CATEGORIES.values(), "all"]:
        category_bm25 = means(by_category[category]["BM25"])["recall_10"]
        for system in result.scores:
            scores = by_category[category][system]
            if not scores:
                continue
            m = means(scores)
            ratio = m["recall_10"] / category_bm25 if category_bm25 else math.nan
            numbers.setdefault(system, {})[category] = m | {"ratio_bm25": ratio}
            label = f"**{category}**" if category == "all" else category
            lines.append(
                f"| {system} | {label} | {len(scores)} | {m['recall_5']:.3f} | "
                f"{m['recall_10']:.3f} | {ratio:.2f}× | {m['hit_10']:.3f} | "
                f"{m['reciprocal_rank']:.3f} |"
            )
    recall_all = numbers["recall"]["all"]["recall_10"]
    lines += [
        "",
        f"Recall@10 of `/recall/`: {recall_all:.3f} = {recall_all / bm25:.2f}× BM25 (target "
        f"≥ 1.10×), dense-only best "
        f"{max(v['all']['recall_10'] for k, v in numbers.items() if k.startswith('dense')):.3f}.",
    ]
    if result.sweep:
        lines += [
            "",
            "| recall in process, with | " + " | ".join(CATEGORIES.values()) + " | all | × BM25 |",
            "|---|" + "---|" * (len(CATEGORIES) + 2),
        ]
    for label, scores in result.sweep:
        per = [
            means([s for s in scores if s.category == c] or [Score(c, 0, 0, 0, 0)])["recall_10"]
            for c in CATEGORIES.values()
        ]
        overall = means(scores)["recall_10"]
        lines.append(
            f"| {label} | " + " | ".join(f"{v:.3f}" for v in per) + f" | {overall:.3f} | "
            f"{overall / bm25:.2f}× |"
        )
    numbers["latency_ms"] = latency_ms
    numbers["worker_memories_per_second"] = memories_per_second
    return "\n".join(lines), numbers


def conversations_in(directory: Path) -> list[Conversation]:
    paths = sorted(directory.expanduser().glob("conv-*.json"))
    if not paths:
        raise SystemExit(f"no LoCoMo conversations (conv-*.json) in {directory}")
    return [load_conversation(path) for path in paths]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--locomo", type=Path, required=True, help="a folder of LoCoMo conversations (conv-*.json)"
    )
    parser.add_argument(
        "--ways", type=comma_list(WAYS), default=list(WAYS), help="turns, sessions or both"
    )
    output_arguments(
        parser,
        sweep_help="ask recall again (in process) under each value of a recall setting "
        "(repeatable; several in one --sweep: their grid)",
    )
    args = parser.parse_args()
    conversations = conversations_in(args.locomo)
    call_command("migrate", verbosity=0)
    run = f"{time.time_ns():x}"  # fresh end users, even on a kept database
    _, token = api_client_create(name=f"bench-{run}", user_prefixes=[], is_staff=True)
    questions = sum(len(c.questions) for c in conversations)
    turns = sum(len(s) for c in conversations for s in c.sessions)
    print(
        f"{run_line(run_info())}\n\nLoCoMo from `{args.locomo.name}`: {len(conversations)} "
        f"conversations, {turns:,} turns, {questions} questions with evidence (categories 1-4).",
    )
    output: dict[str, Any] = {"run": run_info(), "ways": {}}
    with api_over_http(token, timeout=120) as client:
        for way in args.ways:
            print(f"  writing {way}…", file=sys.stderr)
            result = run_way(way, run, conversations, client, args.sweep)
            text, output["ways"][way] = report(result, questions)
            print(f"\n{text}")
    if args.json:
        args.json.write_text(json.dumps(output, indent=1, default=str))


if __name__ == "__main__":
    main()
