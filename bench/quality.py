"""Memory-quality benchmark: NeuroMem's hybrid recall against BM25 and dense-only retrieval
over the same stored conversation turns (issue #14 item 8).

    make bench-quality                                   # the default provider (e5)
    EMBEDDING_PROVIDER=use make bench-quality            # one run = one provider
    EMBEDDING_PROVIDER=hashing make bench-quality ARGS="--limit 300 --json /tmp/q.json"
    RECALL_NOISE_QUANTILE=0.75 make bench-quality        # recall settings come from the env
    make bench-quality ARGS="--sweep RECALL_NOISE_QUANTILE=0.5,0.75,0.97"   # or are swept

Two datasets, both offline:
- the `cri-benchmark` package's persona dataset (cri/datasets/persona-1-base, MIT): one user,
  2,862 timestamped messages over 289 days. Its LLM judge is not used; its ground truth
  (changes, conflicts, signal examples, temporal facts) names the messages that state each
  value, and bench/quality_data/cri_questions.yaml words the questions over them (asked about
  "the user", as an agent asks: Marcus speaks in the first person);
- our own bilingual set, bench/quality_data/conversations.yaml: six synthetic end users
  (three English, three Chinese) over several sessions, with corrections, forget requests,
  similar names, values changing over time, cross-lingual and never-said questions, among
  everyday requests that answer none of them.

Every user turn is written as an episodic memory dated by its message (`memory_add_many`,
one batch a session), with the assistant's question it answers in front ("Q → answer");
its embedding is made ready in process (`memories_embed`, the worker's job), and
`created_at` is set to the message's time, as if each turn had been written when it was said
(`as_of` needs it). The three systems then answer the same questions over the same texts:
- hybrid: `memories_recall` (RecallQuery, limit 10), NeuroMem's recall as the API runs it;
- BM25: bm25s over the user's stored texts; Latin words lower-cased without English stop
  words, Han characters as overlapping bigrams (no segmenter is installed);
- dense: the configured provider's vectors (`embed` for texts, `embed_query` for questions),
  exact cosine top 10.
The baselines know nothing of time: for `as_of` questions they see only the turns said by
then. Prints Markdown for docs/benchmarks.md; --json writes the numbers and every ranking
too; --sweep asks hybrid again under other values of a recall setting, in the same run.
"""

import argparse
import importlib.util
import json
import logging
import math
import os
import platform
import random
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import django
import numpy as np
import yaml

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "neuromem_site.settings")
django.setup()
logging.getLogger("httpx").setLevel(logging.WARNING)

import bm25s  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import override_settings  # noqa: E402

from memories.embeddings import embedding_provider  # noqa: E402
from memories.recall import RecallQuery, memories_recall  # noqa: E402
from memories.services import MemoryInput, memories_embed, memory_add_many  # noqa: E402
from memories.services.embedding_jobs import EMBED_TASK_SIZE  # noqa: E402
from memories.vectors import vector_cursor  # noqa: E402
from neuromem_site.access import SYSTEM  # noqa: E402
from neuromem_site.errors import DomainError  # noqa: E402

logging.getLogger("bm25s").setLevel(logging.WARNING)  # after the import, which sets it

DATA_DIR = Path(__file__).resolve().parent / "quality_data"
CRI_DATASET = "persona-1-base"
PERSONA_NAME = re.compile(r"\bMarcus('s)?\b")
TOP_K = 10
SYSTEMS = ("hybrid", "BM25", "dense")
CATEGORIES = ("en", "zh", "zh→en", "en→zh")
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
SENTENCE = re.compile(r"[^.!?。！？]*[.!?。！？]?")
LATIN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
HAN_RUN = re.compile(rf"(?:{HAN.pattern})+")


# --- Data ------------------------------------------------------------------------------------


@dataclass
class Turn:
    key: str  # "<set>:<user>:<tag or position>", unique in the run
    user_id: str
    text: str  # as stored: "<assistant question> → <user turn>" when it answers one
    said_at: datetime
    language: str  # "en" | "zh"


@dataclass
class Question:
    dataset: str  # "cri" | "own"
    user_id: str
    text: str
    language: str
    memory_language: str
    evidence: list[str] = field(default_factory=list)
    old: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    as_of: datetime | None = None
    kind: str = "evidence"  # "evidence" | "never" | "forget"

    @property
    def category(self) -> str:
        if self.language == self.memory_language:
            return self.language
        return f"{self.language}→{self.memory_language}"


@dataclass
class Dataset:
    turns: list[Turn]
    questions: list[Question]
    sessions: list[list[Turn]]  # the write batches, in time order


def language_of(text: str) -> str:
    return "zh" if len(HAN.findall(text)) >= 2 else "en"


def with_context(assistant: str | None, user: str) -> str:
    """The turn as the service keeps an episode: the assistant's question it answers, if the
    turn before was one, then the user's words."""
    if assistant:
        questions = [s.strip() for s in SENTENCE.findall(assistant) if s.strip()[-1:] in "?？"]
        if questions:
            return f"{questions[-1]} → {user}"
    return user


def cri_dataset_dir() -> Path:
    # find_spec does not import the package (its __init__ pulls in LLM clients).
    spec = importlib.util.find_spec("cri")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("bench-quality needs the cri-benchmark package: pip install cri-benchmark==0.1.2")
    return Path(next(iter(spec.submodule_search_locations))) / "datasets" / CRI_DATASET


def load_cri(user_id: str, max_messages: int | None) -> Dataset:
    directory = cri_dataset_dir()
    messages = [json.loads(line) for line in (directory / "conversations.jsonl").open()]
    truth = json.loads((directory / "ground_truth.json").read_text())
    ours = yaml.safe_load((DATA_DIR / "cri_questions.yaml").read_text())
    if max_messages:
        messages = messages[:max_messages]
    by_id = {m["message_id"]: m for m in messages}

    turns: dict[int, Turn] = {}
    sessions: dict[str, list[Turn]] = defaultdict(list)
    previous: dict | None = None
    for message in messages:
        if message["role"] == "user":
            context = (
                previous["content"]
                if previous
                and previous["role"] == "assistant"
                and previous["session_id"] == message["session_id"]
                else None
            )
            turn = Turn(
                key=f"cri:{message['message_id']}",
                user_id=user_id,
                text=with_context(context, message["content"]),
                said_at=datetime.fromisoformat(message["timestamp"]).replace(tzinfo=UTC),
                language="en",
            )
            turns[message["message_id"]] = turn
            sessions[message["session_id"]].append(turn)
        previous = message

    def keys(ids: Iterable[int]) -> list[str]:
        return [turns[i].key for i in ids if i in turns]

    questions: list[Question] = []

    def ask(text: str, evidence: list[int], old: Iterable[int] = (), **extra: Any) -> None:
        # A question counts only when all its evidence was said within the (limited) data.
        # Asked about "the user", as an agent asks NeuroMem (the memories are Marcus's own,
        # in the first person): by name, it mostly finds the one turn where he gave it.
        text = PERSONA_NAME.sub(lambda m: "the user's" if m[1] else "the user", text)
        if evidence and all(i in turns for i in evidence):
            questions.append(
                Question("cri", user_id, text, "en", "en", keys(evidence), keys(old), **extra)
            )

    # Changes: the latest change of each fact, asked about "now"; earlier values rank below.
    by_fact: dict[str, list[dict]] = defaultdict(list)
    for change in sorted(truth["changes"], key=lambda c: c["changed_around_msg"]):
        by_fact[change["fact"]].append(change)
    for fact, changes in by_fact.items():
        latest = changes[-1]
        new = [m for m in latest["key_messages"] if m >= latest["changed_around_msg"]]
        old = list(ours["first_value_messages"].get(fact, []))
        for earlier in changes[:-1]:
            old += [m for m in earlier["key_messages"] if m >= earlier["changed_around_msg"]]
        ask(f"What is Marcus's {latest['query_topic']}?", sorted(set(new)), sorted(set(old)))

    for conflict in truth["conflicts"]:
        *earlier, later = conflict["introduced_at_messages"]
        ask(ours["conflicts"][conflict["conflict_id"]], [later], earlier)

    for example in truth["signal_examples"]:
        quoted = [m for m in by_id.values() if m["content"].startswith(example["text"][:80])]
        question = ours["signal_examples"].get(example["target_fact"])
        if quoted and question:
            ask(question, [quoted[0]["message_id"]])

    # Temporal facts: as of the middle of the validity window, within the conversation.
    first = min(t.said_at for t in turns.values())
    last = max(t.said_at for t in turns.values())
    for fact in truth["temporal_facts"]:
        mapping = ours["temporal_facts"].get(fact["fact_id"])
        if not mapping or not all(i in turns for i in mapping["evidence"]):
            continue
        start = max(first, window_edge(fact["valid_from"]) or first)
        end = min(last, window_edge(fact["valid_until"]) or last)
        said = max(turns[i].said_at for i in mapping["evidence"]) + timedelta(minutes=1)
        instant = max(start + (end - start) / 2, said)
        ask(mapping["q"], mapping["evidence"], mapping["other"], as_of=instant)

    ordered = [
        sessions[s] for s in dict.fromkeys(m["session_id"] for m in messages) if s in sessions
    ]
    return Dataset(list(turns.values()), questions, ordered)


def window_edge(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value).replace(tzinfo=UTC) if value else None


TURN_LINE = re.compile(r"^(?P<role>[UA])(?:#(?P<tag>\w+))?$")


def load_own(run: str) -> Dataset:
    data = yaml.safe_load((DATA_DIR / "conversations.yaml").read_text())
    turns: list[Turn] = []
    questions: list[Question] = []
    sessions: list[tuple[datetime, list[Turn]]] = []
    for user in data["users"]:
        user_id = f"{user['id']}-{run}"
        tagged: dict[str, str] = {}
        count = len(user["sessions"])
        filler = data["filler"][user["language"]]
        for s, session in enumerate(user["sessions"], 1):
            started = session["at"].replace(tzinfo=UTC)
            batch: list[Turn] = []
            assistant: str | None = None
            lines = session["turns"] + [
                {f"U#filler{i}": text} for i, text in enumerate(filler) if i % count == s - 1
            ]
            for n, line in enumerate(lines, 1):
                ((head, text),) = line.items()
                match = TURN_LINE.match(head)
                if not match:
                    raise ValueError(f"{user['id']} session {s}: bad turn {head!r}")
                if match["role"] == "A":
                    assistant = text
                    continue
                tag = match["tag"] or f"s{s}.{n}"
                if tag in tagged:
                    raise ValueError(f"{user['id']}: tag {tag!r} used twice")
                turn = Turn(
                    key=f"own:{user['id']}:{tag}",
                    user_id=user_id,
                    text=with_context(assistant, text),
                    said_at=started + timedelta(minutes=2 * n),
                    language=user["language"],
                )
                tagged[tag] = turn.key
                batch.append(turn)
                assistant = None
            turns += batch
            sessions.append((started, batch))
        for item in user["questions"]:
            evidence = [tagged[t] for t in item.get("evidence", [])]
            forgotten = [tagged[t] for t in item.get("forgotten", [])]
            kind = "forget" if forgotten else "evidence" if evidence else "never"
            as_of = item.get("as_of")
            questions.append(
                Question(
                    dataset="own",
                    user_id=user_id,
                    text=item["q"],
                    language=language_of(item["q"]),
                    memory_language=user["language"],
                    evidence=evidence,
                    old=[tagged[t] for t in item.get("old", [])],
                    forgotten=forgotten,
                    as_of=as_of.replace(tzinfo=UTC) if as_of else None,
                    kind=kind,
                )
            )
    ordered = [batch for _, batch in sorted(sessions, key=lambda pair: pair[0])]
    return Dataset(turns, questions, ordered)


# --- Systems ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    """One recalled item, as turns: those written as it (a NOOP repeat is written as the
    memory it repeats), and those it stands for now (also the turns of the memories it
    superseded as a near duplicate)."""

    own: frozenset[str]
    stands_for: frozenset[str]


Ranking = list[Hit]  # best first


@dataclass
class Stored:
    """Which memory each turn ended up as."""

    written: dict[str, str]  # turn → the memory its write returned (ADD, UPDATE or NOOP)
    current: dict[str, str]  # turn → that memory's current successor
    operations: dict[str, int]
    seconds_write: float
    seconds_embed: float


def store(datasets: list[Dataset]) -> Stored:
    """Write every turn as an episodic memory, a session a batch, in time order, then make the
    embeddings ready as the worker would, and date the rows by their messages."""
    sessions = sorted(
        (batch for dataset in datasets for batch in dataset.sessions if batch),
        key=lambda batch: batch[0].said_at,
    )
    written: dict[str, str] = {}
    successor: dict[str, str] = {}
    operations: dict[str, int] = defaultdict(int)
    started = time.perf_counter()
    for batch in sessions:
        results = memory_add_many(
            items=[
                MemoryInput(
                    user_id=turn.user_id,
                    content=turn.text,
                    memory_type="episodic",
                    valid_at=turn.said_at,
                )
                for turn in batch
            ],
            caller=SYSTEM,
        )
        for turn, result in zip(batch, results, strict=True):
            if isinstance(result, DomainError):
                raise result
            operations[result.operation.value] += 1
            written[turn.key] = str(result.memory.id)
            if result.superseded is not None:
                successor[str(result.superseded.id)] = str(result.memory.id)
    seconds_write = time.perf_counter() - started

    def current(memory_id: str) -> str:
        while memory_id in successor:
            memory_id = successor[memory_id]
        return memory_id

    started = time.perf_counter()
    ids = sorted(set(written.values()))
    for start in range(0, len(ids), EMBED_TASK_SIZE):
        memories_embed(memory_ids=ids[start : start + EMBED_TASK_SIZE])
    seconds_embed = time.perf_counter() - started
    with connection.cursor() as cursor:
        # As if each turn had been written when it was said: `as_of` recall asks what was
        # known then (created_at not after the instant).
        cursor.execute(
            "UPDATE memories SET created_at = valid_at WHERE id = ANY(%s::uuid[])", [ids]
        )
    return Stored(
        written=written,
        current={key: current(memory_id) for key, memory_id in written.items()},
        operations=dict(operations),
        seconds_write=seconds_write,
        seconds_embed=seconds_embed,
    )


def hybrid_system(stored: Stored) -> Callable[[Question], Ranking]:
    own: dict[str, set[str]] = defaultdict(set)
    stands_for: dict[str, set[str]] = defaultdict(set)
    for key in stored.written:
        own[stored.written[key]].add(key)
        stands_for[stored.written[key]].add(key)
        stands_for[stored.current[key]].add(key)

    def rank(question: Question) -> Ranking:
        hits = memories_recall(
            caller=SYSTEM,
            request=RecallQuery(
                user_id=question.user_id,
                query=question.text,
                limit=TOP_K,
                as_of=question.as_of,
            ),
        )
        return [
            Hit(frozenset(own[str(h.memory.id)]), frozenset(stands_for[str(h.memory.id)]))
            for h in hits
        ]

    return rank


# BM25's English stop words: function words, and "user", which the questions say and the
# user's own turns never do.
ENGLISH_STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves user user's""".split()  # noqa: SIM905
)


def tokens(text: str) -> list[str]:
    """Latin words (lower case, no stop words) and Han bigrams (a lone character as itself)."""
    lowered = text.lower()
    words = [w for w in LATIN_WORD.findall(lowered) if w not in ENGLISH_STOP_WORDS]
    for run in HAN_RUN.findall(lowered):
        words += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
    return words


@dataclass
class UserCorpus:
    keys: list[str]
    said_at: np.ndarray  # epoch seconds
    bm25: bm25s.BM25
    vectors: np.ndarray  # unit rows


def baseline_corpora(turns: list[Turn], stored: Stored) -> dict[str, UserCorpus]:
    """Per user: a BM25 index of the stored texts, and their vectors as the worker stored them
    (same model, same half precision as the hybrid's vector side)."""
    with vector_cursor() as cursor:
        cursor.execute(
            "SELECT id::text, embedding FROM memories WHERE id = ANY(%s::uuid[])",
            [sorted(set(stored.written.values()))],
        )
        vectors = {memory_id: np.asarray(v.to_numpy(), np.float32) for memory_id, v in cursor}
    by_user: dict[str, list[Turn]] = defaultdict(list)
    for turn in turns:
        by_user[turn.user_id].append(turn)
    corpora = {}
    for user_id, user_turns in by_user.items():
        retriever = bm25s.BM25()
        retriever.index([tokens(t.text) for t in user_turns], show_progress=False)
        corpora[user_id] = UserCorpus(
            keys=[t.key for t in user_turns],
            said_at=np.array([t.said_at.timestamp() for t in user_turns]),
            bm25=retriever,
            vectors=unit_rows(np.stack([vectors[stored.written[t.key]] for t in user_turns])),
        )
    return corpora


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def top_k(
    corpus: UserCorpus, scores: np.ndarray, question: Question, floor: float | None
) -> Ranking:
    """The best TOP_K turns said by the question's instant; `floor`: a score a hit must exceed."""
    scores = scores.astype(np.float64)
    if question.as_of is not None:
        scores[corpus.said_at > question.as_of.timestamp()] = -np.inf
    if floor is not None:
        scores[scores <= floor] = -np.inf
    order = np.argsort(-scores, kind="stable")[:TOP_K]
    hits = [frozenset([corpus.keys[i]]) for i in order if np.isfinite(scores[i])]
    return [Hit(hit, hit) for hit in hits]


def bm25_system(corpora: dict[str, UserCorpus]) -> Callable[[Question], Ranking]:
    def rank(question: Question) -> Ranking:
        corpus = corpora[question.user_id]
        # Score 0: no query word in the turn. Not a hit, so BM25 can answer "nothing".
        return top_k(corpus, corpus.bm25.get_scores(tokens(question.text)), question, floor=0.0)

    return rank


def dense_system(corpora: dict[str, UserCorpus]) -> Callable[[Question], Ranking]:
    provider = embedding_provider()

    def rank(question: Question) -> Ranking:
        corpus = corpora[question.user_id]
        query = unit_rows(provider.embed_query(question.text)[None, :])[0]
        return top_k(corpus, corpus.vectors @ query, question, floor=None)

    return rank


# --- Scores ----------------------------------------------------------------------------------


def first_rank(ranking: Ranking, keys: Iterable[str], *, own: bool = False) -> float:
    """The rank of the first hit standing for one of the turns (`own`: written as one of
    them; a superseded turn is no longer found through its successor)."""
    wanted = set(keys)
    return next(
        (n for n, hit in enumerate(ranking, 1) if (hit.own if own else hit.stands_for) & wanted),
        math.inf,
    )


@dataclass
class Score:
    question: Question
    recall5: float | None = None
    recall10: float | None = None
    reciprocal_rank: float | None = None
    current_first: bool | None = None  # change cases without as_of
    as_of_correct: bool | None = None
    empty: bool | None = None  # never-said
    forgotten_out: bool | None = None


def score(question: Question, ranking: Ranking) -> Score:
    result = Score(question)
    if question.kind == "never":
        result.empty = not ranking
        return result
    if question.kind == "forget":
        result.forgotten_out = first_rank(ranking, question.forgotten) > TOP_K
        return result
    ranks = [first_rank(ranking, [key]) for key in question.evidence]
    result.recall5 = sum(r <= 5 for r in ranks) / len(ranks)
    result.recall10 = sum(r <= TOP_K for r in ranks) / len(ranks)
    best = min(ranks)
    result.reciprocal_rank = 0.0 if math.isinf(best) else 1 / best
    if question.old:
        correct = best <= TOP_K and best < first_rank(ranking, question.old, own=True)
        if question.as_of is None:
            result.current_first = correct
        else:
            result.as_of_correct = correct
    return result


@dataclass
class Summary:
    questions: int = 0
    recall5: float | None = None
    recall10: float | None = None
    mrr: float | None = None
    current_first: tuple[int, int] = (0, 0)  # (correct, cases)
    as_of: tuple[int, int] = (0, 0)
    empty: tuple[int, int] = (0, 0)
    forgotten_out: tuple[int, int] = (0, 0)


def summarise(scores: list[Score]) -> Summary:
    def mean(values: list[float]) -> float | None:
        return sum(values) / len(values) if values else None

    def tally(values: list[bool | None]) -> tuple[int, int]:
        counted = [v for v in values if v is not None]
        return sum(counted), len(counted)

    with_evidence = [s for s in scores if s.recall10 is not None]
    return Summary(
        questions=len(scores),
        recall5=mean([s.recall5 for s in with_evidence]),
        recall10=mean([s.recall10 for s in with_evidence]),
        mrr=mean([s.reciprocal_rank for s in with_evidence]),
        current_first=tally([s.current_first for s in scores]),
        as_of=tally([s.as_of_correct for s in scores]),
        empty=tally([s.empty for s in scores]),
        forgotten_out=tally([s.forgotten_out for s in scores]),
    )


# --- Report ----------------------------------------------------------------------------------


def number(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def share(pair: tuple[int, int], *, applies: bool = True) -> str:
    correct, cases = pair
    if not cases:
        return "–"
    return f"{correct / cases:.0%} ({correct}/{cases})" if applies else "n/a"


def groups(scores: list[Score]) -> dict[tuple[str, str], list[Score]]:
    """(dataset, category) → scores, plus each dataset's "all"."""
    grouped: dict[tuple[str, str], list[Score]] = defaultdict(list)
    for item in scores:
        grouped[(item.question.dataset, item.question.category)].append(item)
        grouped[(item.question.dataset, "all")].append(item)
    return grouped


def report(results: dict[str, list[Score]], header: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    grouped = {system: groups(scores) for system, scores in results.items()}
    keys = sorted(
        grouped["hybrid"],
        key=lambda k: (k[0] != "cri", ("all", *CATEGORIES).index(k[1])),
    )
    lines = [
        "| set | questions | system | recall@5 | recall@10 | MRR | current > old | as_of correct "
        "| never-said empty | forgotten kept out |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    numbers: dict[str, Any] = {}
    ratios = [
        "| set | hybrid recall@10 | BM25 | dense | hybrid / max(BM25, dense) | ≥ 1.10 |",
        "|---|---|---|---|---|---|",
    ]
    for key in keys:
        label = f"{key[0]} {key[1]}"
        summaries = {system: summarise(grouped[system][key]) for system in SYSTEMS}
        numbers[label] = {system: vars(summary) for system, summary in summaries.items()}
        for system, summary in summaries.items():
            lines.append(
                f"| {label} | {summary.questions} | {system} | {number(summary.recall5)} "
                f"| {number(summary.recall10)} | {number(summary.mrr)} "
                f"| {share(summary.current_first)} | {share(summary.as_of)} "
                f"| {share(summary.empty, applies=system != 'dense')} "
                f"| {share(summary.forgotten_out)} |"
            )
        hybrid = summaries["hybrid"].recall10
        best = max((summaries[s].recall10 or 0.0) for s in ("BM25", "dense"))
        if hybrid is not None:
            ratio = hybrid / best if best else math.inf
            numbers[label]["ratio_recall10"] = ratio
            ratios.append(
                f"| {label} | {hybrid:.3f} | {number(summaries['BM25'].recall10)} "
                f"| {number(summaries['dense'].recall10)} | {ratio:.2f} "
                f"| {'yes' if ratio >= 1.10 else 'no'} |"
            )
    text = "\n".join(
        [
            header["markdown"],
            "",
            *lines,
            "",
            "recall@k: share of a question's evidence turns in the top k; MRR: 1 / rank of the "
            "first one (0 beyond 10). current > old: the new value's turn ranks above every "
            "turn stating the replaced one; as_of correct: the same, recalled as of an instant "
            "(the baselines see only the turns said by then). never-said empty: hybrid answers "
            "no hit; BM25 counts no turn sharing a query word as empty; dense always answers "
            "10 (n/a). forgotten kept out: no turn the user asked to forget in the top 10.",
            "",
            *ratios,
        ]
    )
    return text, numbers


def header_for(
    datasets: dict[str, Dataset], stored: Stored, seconds: dict[str, float]
) -> dict[str, Any]:
    provider = embedding_provider()
    counts = {}
    for name, dataset in datasets.items():
        kinds: dict[str, int] = defaultdict(int)
        categories: dict[str, int] = defaultdict(int)
        for question in dataset.questions:
            kinds[question.kind] += 1
            categories[question.category] += 1
            if question.old:
                kinds["as_of" if question.as_of else "current vs old"] += 1
        counts[name] = {
            "turns": len(dataset.turns),
            "users": len({t.user_id for t in dataset.turns}),
            "questions": len(dataset.questions),
            "kinds": dict(kinds),
            "categories": dict(categories),
        }
    info = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}",
        "provider": settings.EMBEDDING_PROVIDER,
        "model_id": provider.model_id,
        "dimensions": provider.dimensions,
        "settings": {
            name: getattr(settings, name)
            for name in (
                "RECALL_MIN_SIMILARITY",
                "RECALL_NOISE_QUANTILE",
                "RECALL_RELEVANCE_MARGIN",
                "RECALL_MIN_TEXT_COVERAGE",
                "RECALL_BRANCH_LIMIT",
                "DEDUP_SIMILARITY",
            )
            if hasattr(settings, name)  # the relevance settings are newer than the benchmark
        },
        "datasets": counts,
        "writes": stored.operations,
        "seconds": seconds,
    }

    def describe(name: str) -> str:
        c = counts[name]
        k = defaultdict(int, c["kinds"])
        categories = ", ".join(f"{v} {k}" for k, v in c["categories"].items())
        return (
            f"{c['turns']:,} user turns of {c['users']} users; {c['questions']} questions: "
            f"{k['evidence']} with evidence (of which {k['current vs old']} current vs old, "
            f"{k['as_of']} as_of), {k['never']} never said, {k['forget']} after a forget "
            f"request; by language {categories}"
        )

    info["markdown"] = "\n".join(
        [
            f"Provider `{info['provider']}` (`{info['model_id']}`, {info['dimensions']} "
            f"dimensions) on {info['machine']}. "
            + ", ".join(f"{k} {v}" for k, v in info["settings"].items())
            + ".",
            "",
            f"- cri-benchmark `{CRI_DATASET}`: {describe('cri')}" if "cri" in counts else "",
            f"- own bilingual set: {describe('own')}" if "own" in counts else "",
            f"- writes: {', '.join(f'{v} {k}' for k, v in sorted(stored.operations.items()))}; "
            f"write {seconds['write']:.1f} s, worker embedding {seconds['embed']:.1f} s, "
            f"baseline indexing {seconds['baselines']:.1f} s, questions "
            + ", ".join(f"{s} {seconds[s]:.1f} s" for s in SYSTEMS),
        ]
    )
    return info


def sweep(
    specs: list[str], hybrid: Callable[[Question], Ranking], questions: list[Question]
) -> str:
    """Hybrid again under other values of recall settings (read at each recall), one at a
    time: what each value buys, without writing and embedding again."""
    columns = [(d, c) for d in ("cri", "own") for c in ("all", *CATEGORIES)]
    present = {(q.dataset, q.category) for q in questions} | {(q.dataset, "all") for q in questions}
    columns = [c for c in columns if c in present]
    lines = [
        "| setting | "
        + " | ".join(f"{d} {c} R@10" for d, c in columns)
        + " | current > old | as_of | never-said empty |",
        "|---|" + "---|" * (len(columns) + 3),
    ]
    for spec in specs:
        name, _, values = spec.partition("=")
        for raw in values.split(","):
            value = type(getattr(settings, name))(raw)
            with override_settings(**{name: value}):
                scores = [score(q, hybrid(q)) for q in questions]
            grouped = groups(scores)
            overall = summarise(scores)
            recalls = [number(summarise(grouped[column]).recall10) for column in columns]
            lines.append(
                f"| {name}={value} | "
                + " | ".join(recalls)
                + f" | {share(overall.current_first)} | {share(overall.as_of)} "
                f"| {share(overall.empty)} |"
            )
    return "\n".join(lines)


# --- Run -------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--limit",
        type=int,
        help="a quick run: the first N messages of the persona, and at most N of our questions",
    )
    parser.add_argument("--seed", type=int, default=14, help="which of our questions --limit keeps")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    parser.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="SETTING=V1,V2",
        help="ask hybrid again with each value of a recall setting (repeatable), e.g. "
        "RECALL_RELEVANCE_MARGIN=0,0.02,0.05",
    )
    args = parser.parse_args()
    call_command("migrate", verbosity=0)

    run = f"{time.time_ns():x}"  # fresh end users, even on a kept database
    datasets = {"cri": load_cri(f"cri-marcus-{run}", args.limit), "own": load_own(run)}
    if args.limit:
        own = datasets["own"]
        own.questions = random.Random(args.seed).sample(
            own.questions, min(args.limit, len(own.questions))
        )
    print(
        f"  {sum(len(d.turns) for d in datasets.values()):,} turns, "
        f"{sum(len(d.questions) for d in datasets.values())} questions",
        file=sys.stderr,
    )

    seconds: dict[str, float] = {}
    stored = store(list(datasets.values()))
    seconds["write"], seconds["embed"] = stored.seconds_write, stored.seconds_embed
    print(f"  stored {stored.operations}", file=sys.stderr)
    started = time.perf_counter()
    corpora = baseline_corpora([t for d in datasets.values() for t in d.turns], stored)
    seconds["baselines"] = time.perf_counter() - started

    systems = {
        "hybrid": hybrid_system(stored),
        "BM25": bm25_system(corpora),
        "dense": dense_system(corpora),
    }
    questions = [q for d in datasets.values() for q in d.questions]
    results: dict[str, list[Score]] = {}
    rankings: dict[str, list[Ranking]] = {}
    for name, rank in systems.items():
        started = time.perf_counter()
        rankings[name] = [rank(question) for question in questions]
        seconds[name] = time.perf_counter() - started
        results[name] = [score(q, r) for q, r in zip(questions, rankings[name], strict=True)]

    header = header_for(datasets, stored, seconds)
    text, numbers = report(results, header)
    print(text)
    if args.sweep:
        print("\n" + sweep(args.sweep, systems["hybrid"], questions))
    if args.json:
        details = [
            {
                "dataset": q.dataset,
                "category": q.category,
                "kind": q.kind,
                "question": q.text,
                "as_of": q.as_of.isoformat() if q.as_of else None,
                "evidence": q.evidence,
                "old": q.old,
                **{name: [sorted(hit.stands_for) for hit in rankings[name][n]] for name in SYSTEMS},
            }
            for n, q in enumerate(questions)
        ]
        header.pop("markdown")
        args.json.write_text(
            json.dumps(
                {"run": header, "results": numbers, "questions": details},
                ensure_ascii=False,
                indent=1,
                default=str,
            )
        )


if __name__ == "__main__":
    main()
