"""Reads for the back-office: the end users (the distinct `user_id`s: there is no user
table), one end user's overview, and the dashboard's numbers.

Nothing here counts `memories` whole. The dashboard shows the planner's estimates once the
table is big (EXPLAIN: pg_class.reltuples scaled to the table's current size per partition,
and pg_statistic's histogram of `score` and null fraction of `expired_at` for the states: a
few catalogue reads, no scan, so there is nothing to cache), counts exactly while it is small,
and counts what an index holds (embeddings waiting or failed, failed reflection cycles, the
redactions) only up to CAPPED_AT rows. One end user's counts are exact: they read that user's
rows only.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from datetime import timedelta

from django.db import connection, models
from django.db.models import Q, QuerySet
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from core.access import Caller, user_access_check
from core.admin_base import planner_estimate
from core.models import JobRun
from core.selectors import job_names
from memories.models import (
    ConversationMessage,
    ConversationSession,
    EmbeddingStatus,
    ForgetRequest,
    ForgetVia,
    Memory,
    MemoryType,
    TraitStage,
)
from memories.predicates import STATES, state_sql, states_q
from memories.redaction import KINDS
from memories.selectors import trait_field
from reflection.models import ReflectionCycle, ReflectionStatus
from reflection.selectors import SUBTYPE_ORDER, decayed_confidence, reflection_cycles

# Below this many memories (the planner's estimate) the dashboard counts exactly, as
# core.admin_base.EstimatedCountPaginator does.
EXACT_BELOW = 10_000
# Counts read from an index stop here ("10,000+").
CAPPED_AT = 10_000
# Columns never loaded for a page: vectors are big and unreadable, the tsvector is derived.
HEAVY_COLUMNS = ("embedding", "lexical_vector", "search_vector")
# End-user search answers, one end user's latest memories, cycles and traits shown.
USERS_FOUND_MAX = 50
LATEST_MEMORIES = 20
LATEST_CYCLES = 20
TRAITS_SHOWN = 300
FAILED_CYCLES_SHOWN = 5
LATEST_FORGET_REQUESTS = 5
# The dashboard's windows: redactions of the last day, forget requests of the last week.
REDACTIONS_RECENT = timedelta(hours=24)
FORGET_REQUESTS_RECENT = timedelta(days=7)


@dataclass(frozen=True)
class Count:
    """A number as the dashboard shows it: exact, estimated (≈), at least (+), or unknown."""

    value: int | None
    estimated: bool = False
    at_least: bool = False

    def __str__(self) -> str:
        if self.value is None:
            return "?"
        text = f"{self.value:,}"
        if self.at_least:
            return f"{text}+"
        return f"≈ {text}" if self.estimated else text


def count_capped(queryset: QuerySet, *, cap: int = CAPPED_AT) -> Count:
    """How many rows `queryset` has, reading at most cap + 1 of them."""
    found = queryset.order_by().values("pk")[: cap + 1].count()
    return Count(min(found, cap), at_least=found > cap)


# --- End users -------------------------------------------------------------------------------

# The distinct user_ids from the prefix on, in byte order: one probe of idx_memories_user_c
# (backoffice migration 0002) per user, stopping at the first id past the prefix.
USERS_BY_PREFIX_SQL = """
WITH RECURSIVE found(user_id, n) AS (
    (SELECT user_id, 1 FROM memories
     WHERE (user_id COLLATE "C") >= %(prefix)s
     ORDER BY (user_id COLLATE "C") LIMIT 1)
    UNION ALL
    SELECT (SELECT m.user_id FROM memories m
            WHERE (m.user_id COLLATE "C") > (found.user_id COLLATE "C")
            ORDER BY (m.user_id COLLATE "C") LIMIT 1),
           found.n + 1
    FROM found
    WHERE starts_with(found.user_id, %(prefix)s) AND found.n <= %(limit)s
)
SELECT user_id FROM found WHERE starts_with(user_id, %(prefix)s) LIMIT %(limit)s
"""


def end_users_find(*, term: str, limit: int = USERS_FOUND_MAX) -> list[str]:
    """End users whose user_id is `term` or starts with it, in byte order (the exact one
    first): those with memories by the index above, and one with only sessions or reflection
    cycles when it is `term` exactly."""
    if not term:
        return []
    with connection.cursor() as cursor:
        cursor.execute(USERS_BY_PREFIX_SQL, {"prefix": term, "limit": limit})
        found = [user_id for (user_id,) in cursor.fetchall()]
    if term in found:
        found.remove(term)
        return [term, *found]
    if (
        ConversationSession.objects.filter(user_id=term).exists()
        or ReflectionCycle.objects.filter(user_id=term).exists()
    ):
        return [term, *found][:limit]
    return found


@dataclass(frozen=True)
class TraitRow:
    """A trait in the tree: its depth (0 for a root), with its live decayed confidence."""

    trait: Memory
    depth: int
    subtype: str | None
    stage: str | None
    confidence: float | None
    decayed: float | None


@dataclass
class EndUserOverview:
    user_id: str
    # memory_type → state → count (every type and state, zeros included)
    counts: dict[str, dict[str, int]]
    sessions: int
    traits: list[TraitRow]
    traits_more: bool  # more current traits than TRAITS_SHOWN
    dissolved_traits: int
    latest: list[Memory]
    cycles: list[ReflectionCycle]
    totals_by_state: dict[str, int] = field(init=False)
    totals_by_type: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.totals_by_state = {
            state: sum(by_state[state] for by_state in self.counts.values()) for state in STATES
        }
        self.totals_by_type = {kind: sum(by.values()) for kind, by in self.counts.items()}

    @property
    def total(self) -> int:
        return sum(self.totals_by_type.values())

    @property
    def holds_anything(self) -> bool:
        return bool(self.total or self.sessions or self.cycles)


def end_user_counts(*, user_id: str) -> dict[str, dict[str, int]]:
    """The user's memories per type and state (memories/predicates.py), exactly."""
    counts = {kind: dict.fromkeys(STATES, 0) for kind in MemoryType.values}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.memory_type, {state_sql('m')}, count(*) FROM memories m "
            "WHERE m.user_id = %s GROUP BY 1, 2",
            [user_id],
        )
        for kind, state, number in cursor.fetchall():
            counts.setdefault(kind, dict.fromkeys(STATES, 0))[state] = number
    return counts


def trait_tree(traits: list[Memory]) -> list[TraitRow]:
    """The traits as a tree by their parent: each root (no parent among `traits`) followed by
    its children, deeper ones indented; core, then preference, then behavior, most confident
    (decayed) first at each level."""
    rows = {
        str(trait.pk): TraitRow(
            trait=trait,
            depth=0,
            subtype=trait_field(trait, "trait_subtype"),
            stage=trait_field(trait, "trait_stage"),
            confidence=trait_field(trait, "confidence"),
            decayed=decayed_confidence(trait),
        )
        for trait in traits
    }
    subtype_rank = {subtype.value: n for n, subtype in enumerate(SUBTYPE_ORDER)}

    def order(row: TraitRow) -> tuple:
        return (
            subtype_rank.get(row.subtype, len(SUBTYPE_ORDER)),
            -(row.decayed or 0.0),
            str(row.trait.pk),
        )

    children: dict[str | None, list[TraitRow]] = defaultdict(list)
    for row in rows.values():
        parent = trait_field(row.trait, "parent_id")
        parent = str(parent) if parent is not None and str(parent) in rows else None
        children[parent].append(row)
    tree: list[TraitRow] = []
    placed: set[str] = set()

    def walk(parent: str | None, depth: int) -> None:
        for row in sorted(children.get(parent, []), key=order):
            key = str(row.trait.pk)
            if key in placed:
                continue
            placed.add(key)
            tree.append(replace(row, depth=depth))
            walk(key, depth + 1)

    walk(None, 0)
    # A parent cycle (a → b → a) has no root: shown flat rather than lost.
    for row in sorted(rows.values(), key=order):
        if str(row.trait.pk) not in placed:
            placed.add(str(row.trait.pk))
            tree.append(row)
    return tree


def end_user_overview(*, caller: Caller, user_id: str) -> EndUserOverview:
    """What the end-user page shows: counts, the current traits as a tree, the latest memories
    and reflection cycles. Reads only this user's rows, through their indexes."""
    user_access_check(caller=caller, user_id=user_id, write=False)
    traits_query = (
        Memory.objects.current()
        .filter(memory_type=MemoryType.TRAIT, user_id=user_id)
        .exclude(trait_stage=TraitStage.DISSOLVED)
        .defer(*HEAVY_COLUMNS)
        .order_by("-trait_confidence", "id")
    )
    traits = [
        trait
        for trait in traits_query[: TRAITS_SHOWN + 1]
        if trait_field(trait, "trait_stage") != TraitStage.DISSOLVED
    ]
    return EndUserOverview(
        user_id=user_id,
        counts=end_user_counts(user_id=user_id),
        sessions=ConversationSession.objects.filter(user_id=user_id).count(),
        traits=trait_tree(traits[:TRAITS_SHOWN]),
        traits_more=len(traits) > TRAITS_SHOWN,
        dissolved_traits=Memory.objects.filter(
            memory_type=MemoryType.TRAIT, user_id=user_id, trait_stage=TraitStage.DISSOLVED
        ).count(),
        latest=list(
            Memory.objects.filter(user_id=user_id)
            .defer(*HEAVY_COLUMNS)
            .order_by("-created_at")[:LATEST_MEMORIES]
        ),
        cycles=list(
            reflection_cycles(caller=caller, user_id=user_id).order_by("-started_at")[
                :LATEST_CYCLES
            ]
        ),
    )


# --- The dashboard ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryCounts:
    total: Count
    by_type: dict[str, Count]
    by_state: dict[str, Count]


def memory_counts() -> MemoryCounts:
    """Memories per type and per state: exact below EXACT_BELOW memories (one small scan),
    the planner's estimates above (no scan)."""
    total = planner_estimate(Memory.objects.all())
    if total is not None and total < EXACT_BELOW:
        by_type = dict.fromkeys(MemoryType.values, 0)
        by_state = dict.fromkeys(STATES, 0)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT m.memory_type, {state_sql('m')}, count(*) FROM memories m GROUP BY 1, 2"
            )
            for kind, state, number in cursor.fetchall():
                by_type[kind] = by_type.get(kind, 0) + number
                by_state[state] += number
        return MemoryCounts(
            total=Count(sum(by_type.values())),
            by_type={kind: Count(n) for kind, n in by_type.items()},
            by_state={state: Count(n) for state, n in by_state.items()},
        )

    def estimate(condition: Q) -> Count:
        return Count(planner_estimate(Memory.objects.filter(condition)), estimated=True)

    return MemoryCounts(
        total=Count(total, estimated=True),
        by_type={kind: estimate(Q(memory_type=kind)) for kind in MemoryType.values},
        by_state={state: estimate(states_q([state])) for state in STATES},
    )


def embeddings_waiting() -> dict[str, Count]:
    """Memories whose embedding is pending or failed, counted in the partial indexes of the
    rows not `ready` (memories 0004's idx_memories_pending, 0012's idx_memories_embedding_todo),
    up to CAPPED_AT."""
    not_ready = Memory.objects.exclude(embedding_status=EmbeddingStatus.READY)
    return {
        status: count_capped(not_ready.filter(embedding_status=status))
        for status in (EmbeddingStatus.PENDING, EmbeddingStatus.FAILED)
    }


@dataclass(frozen=True)
class JobState:
    """A scheduled job: its beat schedule (None: runs recorded, no schedule by that name) and
    its last recorded run (None: none in job_runs; not every task records its runs)."""

    name: str
    schedule: PeriodicTask | None
    last_run: JobRun | None


def jobs_last_runs() -> list[JobState]:
    """Every beat schedule and every job with recorded runs, by name, with its last run."""
    schedules = {
        task.name: task
        for task in PeriodicTask.objects.select_related("interval", "crontab", "solar", "clocked")
    }
    recorded = set(job_names())
    return [
        JobState(
            name=name,
            schedule=schedules.get(name),
            last_run=JobRun.objects.filter(job=name).order_by("-started_at").first()
            if name in recorded
            else None,
        )
        for name in sorted(set(schedules) | recorded)
    ]


@dataclass(frozen=True)
class CycleFailures:
    count: Count
    latest: list[ReflectionCycle]


def reflection_failures() -> CycleFailures:
    """Failed reflection cycles (idx_reflection_status): how many, and the newest."""
    failed = ReflectionCycle.objects.filter(status=ReflectionStatus.FAILED)
    return CycleFailures(
        count=count_capped(failed),
        latest=list(failed.order_by("-started_at")[:FAILED_CYCLES_SHOWN]),
    )


# --- Privacy ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RedactionRow:
    """One kind of secret: how many were redacted from memories and from messages, all time and
    in the last REDACTIONS_RECENT."""

    kind: str
    memories: Count
    memories_recent: Count
    messages: Count
    messages_recent: Count


def redactions_capped(rows: QuerySet, *, cap: int = CAPPED_AT) -> dict[str, Count]:
    """kind → how many secrets were redacted from `rows`, summed over at most `cap` of the rows
    that have a redaction, newest first: the partial indexes `... (created_at) WHERE redactions
    IS NOT NULL` (memories 0016). Past the cap each sum is a lower bound ("+")."""
    found = list(
        rows.filter(redactions__isnull=False)
        .order_by("-created_at")
        .values_list("redactions", flat=True)[: cap + 1]
    )
    counts: Counter[str] = Counter()
    for redactions in found[:cap]:
        counts.update(redactions)
    return {kind: Count(number, at_least=len(found) > cap) for kind, number in counts.items()}


def redactions_by_kind() -> list[RedactionRow]:
    """Secrets redacted per kind, from memories and from messages, all time and in the last
    REDACTIONS_RECENT (the kinds seen only)."""
    since = timezone.now() - REDACTIONS_RECENT
    sums = [
        redactions_capped(Memory.objects.all()),
        redactions_capped(Memory.objects.filter(created_at__gte=since)),
        redactions_capped(ConversationMessage.objects.all()),
        redactions_capped(ConversationMessage.objects.filter(created_at__gte=since)),
    ]
    found = set().union(*sums)
    # The redaction module's order of kinds, then any other a stored row names.
    kinds = [kind for kind in KINDS if kind in found] + sorted(found - set(KINDS))
    return [RedactionRow(kind, *(counts.get(kind, Count(0)) for counts in sums)) for kind in kinds]


@dataclass(frozen=True)
class ForgetRequestsRecent:
    by_via: dict[str, int]  # in the last FORGET_REQUESTS_RECENT, every path (zeros included)
    latest: list[ForgetRequest]


def forget_requests_recent() -> ForgetRequestsRecent:
    """Forget requests of the last FORGET_REQUESTS_RECENT per path, and the latest ones: both on
    idx_forget_requests_recent (there is one row per request an end user or staff makes)."""
    by_via = dict(
        ForgetRequest.objects.filter(created_at__gte=timezone.now() - FORGET_REQUESTS_RECENT)
        .values_list("via")
        .annotate(number=models.Count("id"))
        .order_by()
    )
    return ForgetRequestsRecent(
        by_via={via: by_via.get(via, 0) for via in ForgetVia.values},
        latest=list(ForgetRequest.objects.order_by("-created_at", "-id")[:LATEST_FORGET_REQUESTS]),
    )
