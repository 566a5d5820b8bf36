"""Recall: hybrid retrieval of a user's memories, now or "as of" an instant (docs/recall.md).

One query does it all (built by memories/recall_statement.py):
- the vector side, per memory type, on the partition's HNSW index (pgvector 0.8 iterative
  scan, so the `user_id` filter still yields k rows); ranks are given after the LIMIT, over
  all types' candidates together, never by a window over a whole partition, which would
  force a sequential scan; the query is embedded without the names most of the user's
  memories hold (memories/common_names.py), its vector cached in Redis by model and text;
- the text side on `search_vector` (CJK-aware, migration 0003): the memories holding at
  least RECALL_TEXT_CANDIDATE_COVERAGE of the query's words (prefiltered by migration 0006's
  tsquery, on the user's own GIN index when they have one), ranked by BM25 over those
  candidates; a single-turn episode is read with the user's episode just before it (the turn
  it answers), a session's episode with the whole assistant message it answers;
- a relevance floor: a memory comes back only when its vector similarity reaches the query's
  floor (calibrated per query and language, memories/similarity_floors.py) or its text coverage
  reaches RECALL_MIN_TEXT_COVERAGE;
- RRF (k = 60) over both ranks, the vector side's weighted by RECALL_VECTOR_WEIGHT (times
  RECALL_QUESTION_VECTOR_WEIGHT for a memory ending in a question), times
  (1 + recency + importance + trait stage).
Rows still waiting for their embedding are found by text only.
"""

import hashlib
import logging
import re
import uuid
from collections import defaultdict
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timedelta
from functools import partial

import numpy as np
import psycopg
import redis
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from pgvector import HalfVector

from core.access import Caller, user_access_check
from core.db.cursors import row_loader
from core.db.replicas import lagging_read, read_alias, read_connection
from core.metrics import RECALL_STAGE_DURATION
from core.redis_client import app_redis
from memories import statements
from memories.common_names import meaning_query
from memories.embeddings import EmbeddingError, embedding_provider
from memories.extraction import only_asks
from memories.graph.answering import asked, ruling
from memories.graph.models import EntityKind, GraphNode
from memories.hooks import trait_belief
from memories.models import Memory, MemoryType
from memories.plan_cache import RecallPlan, recall_plan_chosen, user_named
from memories.predicates import (
    ANY_ACTIVITY,
    RECALLED_TRAIT_STAGES,
    ActivityFilter,
    score_params,
)
from memories.recall_statement import RECALLED_FIELDS, recall_sql
from memories.sentences import mentions
from memories.similarity_floors import (
    CJK_CHARACTERS,
    SimilarityFloors,
    similarity_floors,
    topic_similarity,
)
from memories.statements.ends import things_given_up
from memories.statements.model import QuestionReading
from memories.user_indexes import KINDS, VALID_INDEXES_SQL, user_index_name
from memories.vectors import ITERATIVE_SCAN_SQL, iterative_scan_params, vector_cursor

log = logging.getLogger("neuromem.recall")

FLOOR_PARAMS = [field.name for field in fields(SimilarityFloors)]
VECTOR_LITERAL = re.compile(r"'\[[^\]]*\]'::halfvec")


@dataclass(frozen=True)
class Boosts:
    recency: float
    importance: float
    trait_stage: float


@dataclass(frozen=True)
class RecallHit:
    memory: Memory
    score: float
    rrf_score: float
    vector_rank: int | None
    text_rank: int | None
    similarity: float | None
    text_coverage: float | None
    boosts: Boosts


@dataclass(frozen=True)
class RecallQuery:
    user_id: str
    query: str
    limit: int = 10
    memory_types: tuple[str, ...] = tuple(MemoryType.values)
    as_of: datetime | None = None
    # Search's filters by activity score and state; recall itself lets everything through.
    activity: ActivityFilter = ANY_ACTIVITY
    # The question rules (memories/graph/answering.py): recall answers a question; search,
    # which browses by words, does not apply them.
    answer_rules: bool = True


def query_vector(query: str) -> np.ndarray | None:
    """The query's embedding, from Redis when this model embedded this text before; None when
    the provider fails (recall goes on, text only). The cache is best effort: with Redis
    unavailable the query is embedded as if never seen, and not stored (one timeout, not two)."""
    provider = embedding_provider()
    key = query_cache_key(provider.model_id, query)
    try:
        cached = app_redis().get(key)
    except redis.RedisError:
        log.warning("query vector cache unavailable", exc_info=True)
        cached, cache_up = None, False
    else:
        cache_up = True
    if cached is not None:
        return np.frombuffer(cached, dtype=np.float16)
    try:
        vector = np.asarray(provider.embed_query(query), dtype=np.float16)
    except EmbeddingError:
        log.warning("recall without the vector side: the embedding provider failed", exc_info=True)
        return None
    if cache_up:
        try:
            app_redis().set(key, vector.tobytes(), ex=settings.RECALL_QUERY_CACHE_TTL)
        except redis.RedisError:
            log.warning("query vector not cached: Redis unavailable", exc_info=True)
    return vector


def query_cache_key(model_id: str, query: str) -> str:
    """Per model and text: another model's vectors live in another space."""
    digest = hashlib.sha256(f"{model_id}\0{query}".encode()).hexdigest()
    return f"neuromem:qvec:{digest}"


@dataclass(frozen=True)
class SearchTerms:
    """The query as the text side uses it (migrations 0003 and 0006)."""

    lexemes: list[str]
    candidates: str


def text_candidate_coverage() -> float:
    """The share of the query's words a memory must hold to be ranked by the text side: never
    more than the floor that recalls it by words alone."""
    return min(settings.RECALL_TEXT_CANDIDATE_COVERAGE, settings.RECALL_MIN_TEXT_COVERAGE)


@dataclass(frozen=True)
class RecallPreparation:
    """What recall's first round trip finds out."""

    terms: SearchTerms
    # The memory types for which the user has a text index of their own.
    text_indexed_types: set[str]
    plan: RecallPlan


def _recall_prepare(
    cursor: psycopg.Cursor, request: RecallQuery, *, outermost: bool
) -> RecallPreparation:
    """Recall's first round trip: the transaction's iterative-scan settings, the query's search
    terms, and the user's own indexes (memories/user_indexes.py) for the request's memory types.
    The terms go to the statement as values: as functions there, the planner evaluated them in
    every text branch. `outermost`: recall's transaction is no part of a caller's."""
    own_indexes = {
        user_index_name(user_id=request.user_id, memory_type=memory_type, kind=kind.name): (
            kind.name,
            memory_type,
        )
        for kind in KINDS
        for memory_type in request.memory_types
    }
    cursor.execute(
        f"""
        SELECT {ITERATIVE_SCAN_SQL},
               neuromem_search_lexemes(%(query)s),
               neuromem_search_candidates(%(query)s, %(candidate_coverage)s)::text,
               {VALID_INDEXES_SQL}
        """,
        {
            **iterative_scan_params(),
            "query": request.query,
            "candidate_coverage": text_candidate_coverage(),
            "index_names": list(own_indexes),
        },
    )
    *_, lexemes, candidates, valid_indexes = cursor.fetchone()
    own = [own_indexes[name] for name in valid_indexes]
    return RecallPreparation(
        terms=SearchTerms(lexemes=lexemes, candidates=candidates),
        text_indexed_types={memory_type for kind, memory_type in own if kind == "search"},
        plan=recall_plan_chosen(
            cursor,
            memory_types=request.memory_types,
            own_indexes=bool(own),
            any_activity=request.activity == ANY_ACTIVITY,
            outermost=outermost,
            as_of=request.as_of,
        ),
    )


def _asks_what_held_before(request: RecallQuery) -> bool:
    """A question about what held before ("Where did the user live before?"; not `as_of` one
    instant): answered from what was once true too, values since invalidated included
    (docs/graph.md, rule 2)."""
    return (
        request.answer_rules
        and request.as_of is None
        and settings.RECALL_CURRENT_RULE
        and statements.asks_what_held_before(request.query)
    )


def _recall_rows(request: RecallQuery, *, history: bool, explain: bool = False) -> list[tuple]:
    with RECALL_STAGE_DURATION.labels("query_embedding").time():
        vector = query_vector(meaning_query(user_id=request.user_id, query=request.query))
    floors = None if vector is None else similarity_floors(vector)
    if floors is None:
        vector = None
    outermost = not read_connection().in_atomic_block
    with transaction.atomic(using=read_alias()), vector_cursor() as cursor:
        preparation = _recall_prepare(cursor, request, outermost=outermost)
        terms = preparation.terms
        sql = recall_sql(
            memory_types=request.memory_types,
            as_of=request.as_of,
            vector=vector is not None,
            text=bool(terms.lexemes),
            text_indexed_types=preparation.text_indexed_types,
            activity=request.activity,
            turn_before=settings.RECALL_EPISODE_CONTEXT_SECONDS > 0,
            answered=settings.RECALL_EPISODE_ANSWERED_MESSAGE,
            history=history,
        )
        params = {
            "user_id": request.user_id,
            "vector": None if vector is None else HalfVector(vector),
            "lexemes": terms.lexemes,
            "candidates": terms.candidates,
            "user_terms": [f"{request.user_id} {lexeme}" for lexeme in terms.lexemes],
            "trait_stages": list(RECALLED_TRAIT_STAGES),
            **trait_belief().recall_params(),
            **score_params(),
            "branch_limit": max(settings.RECALL_BRANCH_LIMIT, request.limit),
            **(asdict(floors) if floors else dict.fromkeys(FLOOR_PARAMS)),
            "min_coverage": settings.RECALL_MIN_TEXT_COVERAGE,
            "candidate_coverage": text_candidate_coverage(),
            "vector_weight": settings.RECALL_VECTOR_WEIGHT,
            "question_vector_weight": settings.RECALL_QUESTION_VECTOR_WEIGHT,
            "context_gap": timedelta(seconds=settings.RECALL_EPISODE_CONTEXT_SECONDS),
            "now": request.as_of or timezone.now(),
            "as_of": request.as_of,
            "limit": request.limit,
        }
        plan = RecallPlan.EACH_RUN if explain else preparation.plan
        if plan is RecallPlan.USER_OWN:
            sql = user_named(sql, user_id=request.user_id, cursor=cursor)
        # Planning is most of the statement's time for a small user: prepared, PostgreSQL keeps
        # a generic plan once it costs about what the plans made for the first runs did. For a
        # user named in the statement it never judges so (it cannot tell how selective the
        # other parameters are), though that plan reads the same indexes of their own and
        # saves the planning (docs/benchmarks.md): the generic plan is asked for, for the rest
        # of the transaction, in which this statement is the last (an unprepared statement
        # with parameters would take it too).
        with RECALL_STAGE_DURATION.labels("search").time():
            if plan is RecallPlan.USER_OWN:
                cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            cursor.execute(
                f"EXPLAIN (ANALYZE, COSTS OFF) {sql}" if explain else sql,
                params,
                prepare=plan is not RecallPlan.EACH_RUN,
            )
            return cursor.fetchall()


def recall_plan(*, request: RecallQuery) -> str:
    """The plan PostgreSQL makes for this recall with its values (EXPLAIN ANALYZE), for tests
    and benchmarks; a prepared statement may run its generic plan instead (`RecallPlan`)."""
    rows = _recall_rows(request, history=_asks_what_held_before(request), explain=True)
    plan = "\n".join(row[0] for row in rows)
    return VECTOR_LITERAL.sub("'[…]'::halfvec", plan)  # 1,024 numbers say nothing here


# Builds a Memory from values of RECALLED_FIELDS' columns, converted as the ORM would.
load_memory = row_loader(Memory, RECALLED_FIELDS)


def memories_recall(*, caller: Caller, request: RecallQuery) -> list[RecallHit]:
    """The user's memories most relevant to the query, best first, with their score parts;
    under the question rules, the asked subject's and current ones only, the held value first
    (docs/graph.md). From a read replica where one may answer (core/db/replicas.py)."""
    user_access_check(caller=caller, user_id=request.user_id, write=False)
    return lagging_read(caller_name=caller.name, read=lambda: _recalled(request))


def _recalled(request: RecallQuery) -> list[RecallHit]:
    # The rules may set hits aside: recall looks further than the limit for them.
    fetched = replace(request, limit=request.limit * 2 + 10) if request.answer_rules else request
    history = _asks_what_held_before(request)  # searched and ruled alike
    hits = [
        RecallHit(
            memory=load_memory(memory),
            score=score,
            rrf_score=rrf_score,
            vector_rank=vector_rank,
            text_rank=text_rank,
            similarity=similarity,
            text_coverage=coverage,
            boosts=Boosts(recency=recency, importance=importance, trait_stage=trait_stage),
        )
        for (
            vector_rank,
            text_rank,
            similarity,
            coverage,
            rrf_score,
            recency,
            importance,
            trait_stage,
            score,
            *memory,
        ) in _recall_rows(fetched, history=history)
    ]
    if request.answer_rules:
        with RECALL_STAGE_DURATION.labels("question_rules").time():
            hits = _question_ruled(request, hits, history=history)
    return hits[: request.limit]


NO_BOOSTS = Boosts(recency=0.0, importance=0.0, trait_stage=0.0)


def _question_ruled(
    request: RecallQuery, hits: list[RecallHit], *, history: bool
) -> list[RecallHit]:
    """The hits the question rules keep, after the facts stating the asked value that recall
    did not find (scored as the best hit: they are the answer). Requests to the assistant
    found by meaning alone are left out before the others apply (docs/graph.md, rule 5);
    `history`: the question asks what held before (`_asks_what_held_before`)."""
    question = asked(user_id=request.user_id, query=request.query, as_of=request.as_of)
    looked_at = len(hits)
    if settings.RECALL_REQUEST_RULE and not ASKS_WHAT_WAS_ASKED.search(request.query):
        hits = [hit for hit in hits if not _request_by_meaning(hit)]
    verdict = ruling(
        asked=question,
        memories=[hit.memory for hit in hits],
        as_of=request.as_of,
        said_by_meaning=partial(_said_by_meaning, looked_at=looked_at),
        history=history,
    )
    best = hits[0].score if hits else 0.0
    answers = [
        RecallHit(memory, best, 0.0, None, None, None, None, NO_BOOSTS)
        for memory in verdict.answers
        if memory.memory_type in request.memory_types
    ]
    by_id = {hit.memory.id: hit for hit in hits}
    kept = [by_id[memory_id] for memory_id in verdict.memory_ids]
    # For what the user says of themself, or what holds now of anyone ("何婧现在在做什么？"):
    # otherwise, of someone else, a later memory more often adds to the earlier one than
    # replaces it, and the subject rule keeps their look-alikes out.
    reading = question.question
    # Of a value the user holds one at a time, asked in the present ("How does the user get to
    # work?"), what holds now is asked, said so or not.
    present = statements.asks_about_the_present(request.query) or (
        reading.subject.is_user
        and bool(reading.attributes)
        # (a name is said again far more often than changed)
        and all(
            statements.single_valued(attribute) and attribute != "name"
            for attribute in reading.attributes
        )
        and not statements.asks_about_the_past(request.query)
    )
    replaces = (reading.subject.is_user and not reading.names) or present
    if (
        settings.RECALL_NEWER_RULE
        and replaces
        and (request.as_of is not None or not statements.asks_about_the_past(request.query))
    ):
        return _followed_last(
            answers + kept,
            nodes=question.nodes,
            held=set(question.answer_memory_ids),
            present=present,
            reading=reading,
        )
    return answers + kept


# "What did the user ask about Hamlet?": the requests themselves are asked for.
ASKS_WHAT_WAS_ASKED = re.compile(r"\b(?:ask|asked|asking|request|requested)\b|问过|问了|请教", re.I)


def _request_by_meaning(hit: RecallHit) -> bool:
    """A request to the assistant found by meaning alone: near the question by its form (a
    question is near any question), it answers one only in the question's words."""
    return (hit.text_coverage or 0.0) < settings.RECALL_MIN_TEXT_COVERAGE and only_asks(
        hit.memory.content
    )


def _said_by_meaning(words: tuple[str, ...], memories: list[Memory], *, looked_at: int) -> bool:
    """Whether one of the memories is as near in meaning to the words ("alcohol") as recall's
    relevance floor asks of a memory recalled for them as a query, made stricter for the
    number of hits recall `looked_at` (those the other rules left, `memories`, are the best of
    them); True when it cannot tell (no embedding): then the hits stay."""
    if not memories:
        return False
    vector = query_vector(" ".join(words))
    # One of many passing is as likely by chance as one memory passing the recall floor: each
    # must beat the background's RECALL_NOISE_QUANTILE ** (1 / n), not its quantile.
    quantile = settings.RECALL_NOISE_QUANTILE ** (1 / looked_at)
    floors = similarity_floors(vector, quantile) if vector is not None else None
    if floors is None:
        return True
    with read_connection().cursor() as cursor:
        cursor.execute(
            f"""
            SELECT 1 FROM memories
            WHERE id = ANY(%(ids)s) AND embedding IS NOT NULL
              AND 1 - (embedding <=> %(vector)s) >= CASE
                  WHEN content ~ '[{CJK_CHARACTERS}]' THEN %(floor_cjk)s::float8
                  ELSE %(floor_latin)s::float8 END
            LIMIT 1
            """,
            {"ids": [memory.id for memory in memories], "vector": HalfVector(vector)}
            | asdict(floors),
        )
        return cursor.fetchone() is not None


# Facts and episodes state values that change; a trait or a document is not replaced by the
# next thing said.
CHANGING_TYPES = [MemoryType.FACT.value, MemoryType.EPISODIC.value]


def _followed_last(
    hits: list[RecallHit],
    *,
    nodes: list[GraphNode],
    held: set[uuid.UUID],
    present: bool,
    reading: QuestionReading,
) -> list[RecallHit]:
    """The hits, those a later hit on the same topic follows after all the others (in order):
    the older of "I live in Austin" and "I'm all settled in Denver now" is likely the value that
    changed. When the question asks what holds now (`present`: "What car does the user drive
    now?" asks for the value since, in whatever words the change was said), the older leaves if
    the later one replaces it: as near the question, or saying nearly the same. Not when the
    later one names a person or pet the older does not ("Jon's birthday…", later "John's
    birthday…": two subjects), nor when the older holds more of the question's words (the
    question names what it says: "violin lessons" asks about them, not the piano lessons
    since) unless the question asks what holds now. `held`: the facts stating a value the
    graph holds, never set back; `reading`: the question: a later memory no more than as near
    it replaces an older one that speaks to what is asked only if it speaks to it too (however
    alike the two: two memories naming one boy are), unless it says it gave up what the older
    names."""
    threshold = topic_similarity()
    changing = [hit.memory for hit in hits if hit.memory.memory_type in CHANGING_TYPES]
    if threshold is None or len(changing) < 2:
        return hits
    with read_connection().cursor() as cursor:
        # The hits read once, then paired: the table joined with itself, over its partitions,
        # took longer to plan than to run (docs/benchmarks.md).
        cursor.execute(
            """
            WITH hit AS MATERIALIZED (
                SELECT id, embedding, coalesce(valid_at, created_at) AS said_at
                FROM memories WHERE id = ANY(%(ids)s) AND memory_type = ANY(%(types)s)
            )
            SELECT older.id, newer.id, 1 - (older.embedding <=> newer.embedding)
            FROM hit older JOIN hit newer ON newer.said_at > older.said_at
            WHERE 1 - (older.embedding <=> newer.embedding) >= %(threshold)s
            """,
            {
                "ids": [memory.id for memory in changing],
                "types": CHANGING_TYPES,
                "threshold": threshold,
            },
        )
        pairs = cursor.fetchall()
    if not pairs:
        return hits
    names = [
        name
        for node in nodes
        if node.kind in (EntityKind.PERSON, EntityKind.PET)
        for name in (node.name, *node.aliases)
        if name
    ]
    named = {memory.id: statements.names_in(memory.content, names) for memory in changing}
    coverage = {hit.memory.id: hit.text_coverage or 0.0 for hit in hits}
    content = {hit.memory.id: hit.memory.content for hit in hits}
    episodes = {hit.memory.id for hit in hits if hit.memory.memory_type == MemoryType.EPISODIC}

    def speaks(memory_id: uuid.UUID) -> tuple[bool, bool]:
        text = content[memory_id]
        return (
            statements.answers_focus(reading, text),
            statements.speaks_to_attribute(reading, text),
        )

    def says_no_less(newer: uuid.UUID, older: uuid.UUID) -> bool:
        # Of the focus and of the attribute each: the later one speaks to it if the older does
        return all(new or not old for new, old in zip(speaks(newer), speaks(older), strict=True))

    def gives_way(older: uuid.UUID, newer: uuid.UUID) -> bool:
        # A held value goes after what the user said of it since, when what holds now is
        # asked: a change in words no rule read ("spring is my favourite season" after "My
        # favourite season is autumn") leaves the old value held. Kept, not left out: the
        # later words may not change it.
        return present and newer in episodes and says_no_less(newer, older)

    follows = [
        (older, newer, alike)
        for older, newer, alike in pairs
        if (older not in held or gives_way(older, newer))
        and named[newer] <= named[older]
        and (present or coverage[newer] >= coverage[older])
    ]
    followed = {older for older, _, _ in follows}
    if present:
        # Left out only when replaced: the later one as near the question, or saying nearly
        # the same (a later memory merely on the topic is no new value of what is asked).
        same = topic_similarity(settings.RECALL_REPLACED_QUANTILE)
        similarity = {hit.memory.id: hit.similarity for hit in hits}

        def nearer(newer: uuid.UUID, older: uuid.UUID) -> bool:
            # A hit found by its words alone has no similarity to compare.
            new, old = similarity[newer], similarity[older]
            return new is not None and old is not None and new >= old

        # Being as near the question, or as alike, is not enough when the later memory is silent
        # on what is asked and the older speaks to it (says_no_less): for "Does the user have a
        # boyfriend now?", "All settled in Bristol" does not replace "Theo and I broke up". Of
        # an asked attribute, the user's own included, in its own words ("怎么去上班": a commute).
        # The later one says it gave up for good what the older names by its proper name ("I
        # bailed on Severance" after "went straight into the second season of Severance"),
        # however near either is.
        given_up = {newer: things_given_up(content[newer]) for _, newer, _ in follows}

        def ends(newer: uuid.UUID, older: uuid.UUID) -> bool:
            return any(mentions(content[older], word, any_case=False) for word in given_up[newer])

        replaced = {
            older
            for older, newer, alike in follows
            if older not in held
            and (
                (
                    ((same is not None and alike >= same) or nearer(newer, older))
                    and says_no_less(newer, older)
                )
                or ends(newer, older)
            )
        }
        hits = [hit for hit in hits if hit.memory.id not in replaced]
    # A held value that gave way goes right after the later words, not to the end: the limit
    # must not cut it.
    gave_way = {older: newer for older, newer, _ in follows if older in held}
    after = defaultdict(list)
    for hit in hits:
        if hit.memory.id in gave_way:
            after[gave_way[hit.memory.id]].append(hit)
    ordered = []
    for hit in hits:
        if hit.memory.id not in followed:
            ordered += [hit, *after.pop(hit.memory.id, [])]
    waiting = [hit for group in after.values() for hit in group]
    return (
        ordered
        + waiting
        + [hit for hit in hits if hit.memory.id in followed and hit.memory.id not in gave_way]
    )
