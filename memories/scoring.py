"""The activity score: every current memory's `score` (0–100) recomputed from behaviour,
structure and time, and the flags staff review (docs/decay.md).

    raw   = A·ln(1+in_degree) + B·ln(1+out_degree) + C·ln(1+access_count)
            + D·ln(1+traverse_count) + E·exp(−Δt_access/T_access) + F·exp(−Δt_link/T_link)
            − G·age/T_age
    score = 100 / (1 + exp(−raw/S))  =  50 + 50·tanh(raw / 2S),  rounded, clamped to 0–100

Every input is something the service records (links, recall's accesses, bulk reads' traversals,
when a memory was learnt), never a value a client sets. The score is a function of the inputs
and `now` only, so it depends on elapsed time and not on how often the job ran, and a second run
at the same `now` writes nothing. The job only flags: `eligible_for_delete` and
`merge_candidate_of` are for staff; nothing is deleted or merged here.

Every number is a rule with the default below, overridden by name in the SCORE_RULES setting
(JSON), e.g. `{"T_access_hours": 12, "merge_similarity": 0.92}`.
"""

import time
import uuid
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction

from core.models import JobRun, JobStatus
from memories.predicates import current_sql


@dataclass(frozen=True)
class ScoreRules:
    # Weights: links in and out, recall's accesses, bulk reads' traversals, recency of access
    # and of linking, and age against them.
    A: float = 1.0
    B: float = 0.8
    C: float = 1.2
    D: float = 0.8
    E: float = 1.5
    F: float = 1.0
    G: float = 0.3
    T_access_hours: float = 24.0
    T_link_hours: float = 72.0
    T_age_days: float = 30.0
    # The map's scale: raw ±S is 73 / 27, raw ±2S is 88 / 12.
    S: float = 2.0
    # Stored precision. One decimal: an idle memory's score moves ~0.1 a day, so a run rewrites
    # only the rows that moved a step (the changes are bookkeeping writes of a wide row).
    decimals: int = 1
    # A deprecated memory whose lexical vector is this similar to a better-scored current one
    # of its user and type is that one's merge candidate. Below the write path's
    # DEDUP_SIMILARITY (anything above it was superseded at write time, within its window).
    merge_similarity: float = 0.9
    # ... compared with the user's this many most recent current memories of that type (a
    # better-scored memory is nearly always a recent one): bounded work per deprecated memory.
    merge_window: int = 100

    def params(self) -> dict[str, Any]:
        """The rules as the SQL of `score_sql` and the job read them."""
        return {
            **{name: float(getattr(self, name)) for name in "ABCDEFGS"},
            "t_access": self.T_access_hours * 3600.0,
            "t_link": self.T_link_hours * 3600.0,
            "t_age": self.T_age_days * 86400.0,
            "decimals": int(self.decimals),
            "merge_max_distance": 1.0 - float(self.merge_similarity),
            "merge_window": int(self.merge_window),
        }


@cache
def score_rules() -> ScoreRules:
    """The defaults with SCORE_RULES applied. Cached: settings do not change at run time
    (tests that override SCORE_RULES call `score_rules.cache_clear()`)."""
    overrides = dict(getattr(settings, "SCORE_RULES", {}) or {})
    unknown = sorted(set(overrides) - {f.name for f in fields(ScoreRules)})
    if unknown:
        raise ImproperlyConfigured(f"SCORE_RULES: unknown rule(s) {', '.join(unknown)}")
    rules = replace(ScoreRules(), **overrides)
    # Divisors, and a window the lookup can LIMIT by.
    for name in ("T_access_hours", "T_link_hours", "T_age_days", "S", "merge_window"):
        if not getattr(rules, name) > 0:
            raise ImproperlyConfigured(f"SCORE_RULES: {name} must be positive")
    return rules


def _since(alias: str, column: str) -> str:
    """Seconds from `column` to %(now)s, never negative (a stamp after `now` counts as now).
    (GREATEST and LEAST skip NULLs: callers handle a NULL column themselves.)"""
    return f"greatest(0, extract(epoch FROM (%(now)s - {alias}.{column}))::float8)"


def _recency(alias: str, column: str, weight: str, scale: str) -> str:
    """weight·exp(−Δt/scale), 0 when `column` is NULL (never happened). exp's argument is
    capped because PostgreSQL raises on underflow."""
    decay = f"exp(-least({_since(alias, column)} / {scale}, 700))"
    return f"CASE WHEN {alias}.{column} IS NULL THEN 0 ELSE {weight} * {decay} END"


def score_sql(alias: str, in_degree: str, out_degree: str) -> str:
    """The score (float4) of the memory `alias` at %(now)s, given SQL for its link degrees;
    the rules by the names of `ScoreRules.params()`."""
    raw = (
        f"%(A)s * ln(1 + ({in_degree})::float8)"
        f" + %(B)s * ln(1 + ({out_degree})::float8)"
        f" + %(C)s * ln(1 + greatest({alias}.access_count, 0)::float8)"
        f" + %(D)s * ln(1 + greatest({alias}.traverse_count, 0)::float8)"
        f" + {_recency(alias, 'last_accessed_at', '%(E)s', '%(t_access)s')}"
        f" + {_recency(alias, 'last_linked_at', '%(F)s', '%(t_link)s')}"
        f" - %(G)s * {_since(alias, 'created_at')} / %(t_age)s"
    )
    # tanh is the logistic without exp's overflow: 100/(1+e^(−x)) = 50 + 50·tanh(x/2).
    mapped = f"(50 + 50 * tanh(({raw}) / (2 * %(S)s)))"
    return f"greatest(0, least(100, round({mapped}::numeric, %(decimals)s)))::float4"


def _degree(alias: str, column: str) -> str:
    """Links at `column` (target_id: incoming, source_id: outgoing) whose other end is a
    current memory: a deleted memory's links stay on record but link nothing any more."""
    other = "source_id" if column == "target_id" else "target_id"
    end = f"{alias}_end"  # an alias of its own: `alias` may be any outer query's
    return (
        f"(SELECT count(*) FROM memory_links l JOIN memories {end} ON {end}.id = l.{other}"
        f" WHERE l.{column} = {alias}.id AND {current_sql(end)})"
    )


# One batch: score the current memories whose ids are in the batch's key range ({range}),
# find their flags, and write the rows where anything changed; answers what it read and wrote.
# The range is given as constants, also to the UPDATE, so the planner reads each partition's
# slice by its primary key (joined to a 5,000-row batch it otherwise scans whole partitions).
# The flags are computed from this run's scores, the merge target's too, so a re-run at the
# same `now` finds the same and writes nothing.
BATCH_SQL = f"""
WITH batch AS MATERIALIZED (
    SELECT b.*, {score_sql("b", "b.in_degree", "b.out_degree")} AS score
    FROM (
        SELECT m.id, m.memory_type, m.user_id, m.lexical_vector, m.access_count,
               m.traverse_count, m.last_accessed_at, m.last_linked_at, m.created_at,
               {_degree("m", "target_id")} AS in_degree, {_degree("m", "source_id")} AS out_degree
        FROM memories m
        WHERE {current_sql("m")} {{range}}
    ) b
),
deprecated AS (
    SELECT id, user_id, memory_type, lexical_vector, score FROM batch
    WHERE score < %(cold_from)s AND lexical_vector IS NOT NULL
),
-- Each user's and type's window is read once per batch, however many of its deprecated
-- memories the batch holds.
windows AS MATERIALIZED (
    SELECT w.* FROM (SELECT DISTINCT user_id, memory_type FROM deprecated) g
    CROSS JOIN LATERAL (
        SELECT o.id, o.user_id, o.memory_type, o.lexical_vector, o.access_count,
               o.traverse_count, o.last_accessed_at, o.last_linked_at, o.created_at
        FROM memories o
        WHERE o.user_id = g.user_id AND o.memory_type = g.memory_type AND {current_sql("o")}
        ORDER BY o.created_at DESC
        LIMIT %(merge_window)s
    ) w
),
merges AS (
    SELECT DISTINCT ON (d.id) d.id, o.id AS merge_of
    FROM deprecated d
    JOIN windows o ON o.user_id = d.user_id AND o.memory_type = d.memory_type AND o.id <> d.id
    WHERE (o.lexical_vector <=> d.lexical_vector) < %(merge_max_distance)s
      AND {score_sql("o", _degree("o", "target_id"), _degree("o", "source_id"))} > d.score
    ORDER BY d.id, o.lexical_vector <=> d.lexical_vector, o.id
),
flagged AS (
    SELECT b.id, b.memory_type, b.score, mg.merge_of,
           b.score < %(cold_from)s AND b.in_degree = 0
           AND coalesce(b.last_accessed_at < %(idle_since)s, true)
           AND coalesce(b.last_linked_at < %(idle_since)s, true) AS eligible
    FROM batch b LEFT JOIN merges mg ON mg.id = b.id
),
changed AS (
    UPDATE memories m
    SET score = f.score, eligible_for_delete = f.eligible, merge_candidate_of = f.merge_of
    FROM flagged f
    WHERE m.id = f.id AND m.memory_type = f.memory_type AND {current_sql("m")} {{range}}
      AND (m.score, m.eligible_for_delete, m.merge_candidate_of)
          IS DISTINCT FROM (f.score, f.eligible, f.merge_of)
    RETURNING 1
)
SELECT (SELECT count(*) FROM batch),
       (SELECT count(*) FROM changed),
       count(*) FILTER (WHERE eligible),
       count(merge_of)
FROM flagged
"""
# Where a batch of SCORE_BATCH_SIZE ids after %(after)s ends (no row: the rest is the last
# batch). Expired rows count: the primary key alone answers, without the heap.
BATCH_END_SQL = """
SELECT m.id FROM memories m {after} ORDER BY m.id OFFSET %(limit)s - 1 LIMIT 1
"""


@dataclass
class ScoreRun:
    """What a run of the score job did. `resume_after` is the last id of the last batch when
    the deadline stopped the run (the next run continues after it), else None."""

    scored: int = 0
    changed: int = 0
    batches: int = 0
    eligible_for_delete: int = 0
    merge_candidates: int = 0
    seconds: float = 0.0
    stopped_early: bool = False
    resume_after: uuid.UUID | None = None

    def detail(self) -> dict[str, Any]:
        """JSON-able, for the job's record."""
        return {
            **asdict(self),
            "seconds": round(self.seconds, 3),
            "resume_after": str(self.resume_after) if self.resume_after else None,
        }


def memories_score(
    *,
    now: datetime,
    after: uuid.UUID | None = None,
    deadline: float | None = None,
    batch_size: int | None = None,
) -> ScoreRun:
    """Score the current memories with ids above `after` (all of them by default) as of `now`,
    in batches of SCORE_BATCH_SIZE ids (keyset, each batch its own transaction); expired and
    invalidated memories are left as they are. Stops between batches once time.monotonic() passes
    `deadline` (after one batch at least, so every run makes progress)."""
    limit = batch_size or settings.SCORE_BATCH_SIZE
    if limit < 1:  # OFFSET limit - 1 below: 0 would be a SQL error on every run
        raise ImproperlyConfigured(f"SCORE_BATCH_SIZE must be at least 1 (got {limit})")
    started = time.perf_counter()
    rules = score_rules()
    params = {
        **rules.params(),
        "now": now,
        "cold_from": settings.SCORE_COLD_FROM,
        "idle_since": now - timedelta(days=settings.SCORE_DELETE_IDLE_DAYS),
        "limit": limit,
    }
    run = ScoreRun()
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                BATCH_END_SQL.format(after="WHERE m.id > %(after)s" if after else ""),
                {"after": after, "limit": params["limit"]},
            )
            end = cursor.fetchone()
            upto = end[0] if end else None
            bounds = [("m.id > %(after)s", after), ("m.id <= %(upto)s", upto)]
            cursor.execute(
                BATCH_SQL.format(range="".join(f" AND {b}" for b, v in bounds if v)),
                {**params, "after": after, "upto": upto},
            )
            scored, changed, eligible, merges = cursor.fetchone()
        run.batches += bool(scored)  # the last range may hold nothing
        run.scored += scored
        run.changed += changed
        run.eligible_for_delete += eligible
        run.merge_candidates += merges
        if upto is None:
            break
        after = upto
        if deadline is not None and time.monotonic() >= deadline:
            run.stopped_early, run.resume_after = True, upto
            break
    run.seconds = time.perf_counter() - started
    return run


def score_resume_point(*, job: str) -> uuid.UUID | None:
    """Where the last completed run of `job` stopped early, if it did."""
    detail = (
        JobRun.objects.filter(job=job, status=JobStatus.DONE)
        .order_by("-id")
        .values_list("detail", flat=True)
        .first()
    )
    resume_after = (detail or {}).get("resume_after")
    return uuid.UUID(resume_after) if resume_after else None
