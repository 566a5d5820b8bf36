"""The trait lifecycle's upkeep and the references between tables: what beat runs
(reflection/tasks.py), and what a reflection cycle reuses for its own user.

Every service is set-based SQL and idempotent: running it twice changes nothing more. Traits
leave the lifecycle the way a veto dissolves them (reflection/services/traits.py): stage
`dissolved`, `version` + 1, the row kept, then `expired_at` set (seed 002 §5.2), so the audit
trigger logs a STAGE_CHANGE and a DELETE, here by the actor `reflection`.
"""

import importlib
import logging
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction

from core.access import SYSTEM
from core.db.actor import audit_actor
from core.errors import DomainError
from core.jobs import enqueue_on_commit
from memories.models import Memory, MemoryType, TraitStage, TraitSubtype
from memories.predicates import current_sql, latest_q, latest_sql, trait_stage_sql
from reflection.models import (
    ConsistencyCheck,
    ReflectionStatus,
    ReflectionTrigger,
    TraitDecayRate,
)
from reflection.rules import decayed_sql, lifecycle_rules

log = logging.getLogger("neuromem.reflection")
REFRESH_TASK = "reflection.tasks.refresh_trait_view"

ACTOR = "reflection"
VIEW = "mv_trait_decayed"
TREND_ENDED_REASON = "trend window ended without reinforcement"
# Beat asks for at most this many cycles a run (every 5 minutes): the most pressing first.
DUE_USERS_PER_RUN = 1000
# The decay view's definition: one, its migration's (as the rebuild creates it again).
VIEW_SQL: str = importlib.import_module("reflection.migrations.0010_trait_decay_bounded").VIEW_SQL

# --- Decay view ------------------------------------------------------------------------------


def trait_decay_rates_sync() -> None:
    """Make `trait_decay_rates` (read by the view) say what the lifecycle rules say: a row per
    subtype, and the DEFAULT row for any other subtype or none, as
    `LifecycleRules.decay_lambda` has them."""
    rules = lifecycle_rules()
    subtypes = dict.fromkeys([*TraitSubtype.values, *rules.decay_base])
    wanted = {
        subtype: (rules.decay_lambda(subtype, 0), float(rules.decay_spacing))
        for subtype in subtypes
    }
    wanted[TraitDecayRate.DEFAULT] = (float(rules.decay_default), float(rules.decay_spacing))
    stored = {
        rate.trait_subtype: (rate.base_lambda, rate.spacing)
        for rate in TraitDecayRate.objects.all()
    }
    if stored == wanted:
        return
    with transaction.atomic():
        TraitDecayRate.objects.exclude(trait_subtype__in=list(wanted)).delete()
        TraitDecayRate.objects.bulk_create(
            [
                TraitDecayRate(trait_subtype=subtype, base_lambda=base, spacing=spacing)
                for subtype, (base, spacing) in wanted.items()
            ],
            update_conflicts=True,
            unique_fields=["trait_subtype"],
            update_fields=["base_lambda", "spacing"],
        )


def trait_view_refresh_after_commit() -> None:
    """Once the current transaction commits, refresh the decay view (`after_change`: a refresh
    already in flight may have read the traits before the change, so this one waits its turn
    instead of being skipped)."""
    enqueue_on_commit(REFRESH_TASK, [True])


def trait_view_drop() -> None:
    """Take the decay view down (in the caller's transaction): `manage.py embeddings_rebuild`
    changes the `memories.embedding` column it depends on."""
    with connection.cursor() as cursor:
        cursor.execute(f"DROP MATERIALIZED VIEW IF EXISTS {VIEW}")


def trait_view_create() -> None:
    """Create the decay view (with its data and indexes) where it is missing, as its migration
    defines it."""
    with connection.cursor() as cursor:
        cursor.execute(VIEW_SQL)


def trait_view_refresh() -> int:
    """Write the rules' decay rates, then refresh `mv_trait_decayed` (CONCURRENTLY: readers
    never wait; it may run inside a transaction, where it holds the view's EXCLUSIVE lock,
    which only other refreshes wait for, until commit). Answers the view's row count."""
    with transaction.atomic(), connection.cursor() as cursor:
        trait_decay_rates_sync()
        cursor.execute("SELECT ispopulated FROM pg_matviews WHERE matviewname = %s", [VIEW])
        (populated,) = cursor.fetchone()
        # CONCURRENTLY needs a populated view; only a view created WITH NO DATA is not.
        cursor.execute(f"REFRESH MATERIALIZED VIEW {'CONCURRENTLY ' * populated}{VIEW}")
        cursor.execute(f"SELECT count(*) FROM {VIEW}")
        return cursor.fetchone()[0]


# --- Trends and weak traits ------------------------------------------------------------------


@dataclass(frozen=True)
class TrendExpiry:
    promoted: int
    dissolved: int


def traits_expire_dissolved(*, trait_ids: Collection[uuid.UUID], now: datetime) -> int:
    """Expire traits just dissolved (seed 002 §5.2: a dissolved trait is `expired_at`), in a
    statement of its own after the one that dissolved them: the audit trigger logs an UPDATE
    that sets `expired_at` as a DELETE, before any stage change, so in one statement the history
    would lose the STAGE_CHANGE. Answers how many."""
    if not trait_ids:
        return 0
    return Memory.objects.filter(
        latest_q(),
        memory_type=MemoryType.TRAIT,
        pk__in=list(trait_ids),
        trait_stage=TraitStage.DISSOLVED,
    ).update(expired_at=now)


# Dissolving (as a veto does), with `metadata.dissolved` saying why; `%(reason)s` and `%(at)s`
# are parameters, `{extra}` more jsonb_build_object arguments. `traits_expire_dissolved` after.
DISSOLVE_SET = """
    trait_stage = 'dissolved',
    updated_at = %(now)s,
    version = t.version + 1,
    metadata = CASE WHEN jsonb_typeof(t.metadata) = 'object'
                    THEN t.metadata || jsonb_build_object('dissolved', jsonb_build_object(
                        'reason', %(reason)s::text, 'at', %(at)s::text{extra}))
                    ELSE t.metadata END
"""

# Trends at their window's end (the window index: `trait_stage = 'trend'` on the column).
ENDED_TRENDS = f"""
    t.memory_type = 'trait' AND t.trait_stage = 'trend' AND t.trait_window_end <= %(now)s
    AND {current_sql("t")} {{user}}
"""

TRENDS_PROMOTE_SQL = f"""
UPDATE memories t SET
    trait_stage = 'candidate',
    trait_confidence = %(confidence)s,
    trait_window_start = NULL,
    trait_window_end = NULL,
    trait_derived_from = 'trend_promotion',
    trait_last_reinforced = coalesce(t.trait_last_reinforced, %(now)s),
    updated_at = %(now)s,
    version = t.version + 1
WHERE {ENDED_TRENDS}
  AND coalesce(t.trait_reinforcement_count, 0) >= %(min_reinforcements)s
"""

TRENDS_DISSOLVE_SQL = f"""
UPDATE memories t SET {DISSOLVE_SET.format(extra="")}
WHERE {ENDED_TRENDS}
  AND coalesce(t.trait_reinforcement_count, 0) < %(min_reinforcements)s
RETURNING t.id
"""


def sweep_scope(*, now: datetime, user_id: str | None) -> tuple[dict[str, object], str]:
    """The parameters every sweep's SQL binds (its instant, as a timestamp and as the text the
    metadata records), and its `{user}` clause: one user's traits, or everyone's."""
    params: dict[str, object] = {"now": now, "at": now.isoformat(), "user_id": user_id}
    return params, "AND t.user_id = %(user_id)s" if user_id is not None else ""


def trends_expire(*, now: datetime, user_id: str | None = None) -> TrendExpiry:
    """Trends whose window ended by `now` (of one user, or all): reinforced at least
    `trend_min_reinforcements` times → candidates at `candidate_initial_confidence`, window
    cleared; the others dissolved and expired. One transaction (nested in the caller's, if
    any)."""
    rules = lifecycle_rules()
    params, user = sweep_scope(now=now, user_id=user_id)
    params |= {
        "confidence": rules.candidate_initial_confidence,
        "min_reinforcements": rules.trend_min_reinforcements,
        "reason": TREND_ENDED_REASON,
    }
    with audit_actor(ACTOR), connection.cursor() as cursor:
        cursor.execute(TRENDS_PROMOTE_SQL.format(user=user), params)
        promoted = cursor.rowcount
        cursor.execute(TRENDS_DISSOLVE_SQL.format(user=user), params)
        dissolved = [trait_id for (trait_id,) in cursor.fetchall()]
        traits_expire_dissolved(trait_ids=dissolved, now=now)
    return TrendExpiry(promoted=promoted, dissolved=len(dissolved))


DISSOLVE_DECAYED_SET = DISSOLVE_SET.format(
    extra=", 'decayed_confidence', round(d.confidence::numeric, 6)"
)
# The rules' decay, computed live at %(now)s (not the view's, which may be a refresh old).
WEAK_TRAITS_DISSOLVE_SQL = f"""
WITH decayed AS (
    SELECT t.id, t.version, {decayed_sql("t")} AS confidence
    FROM memories t
    WHERE t.memory_type = 'trait'
      AND {current_sql("t")}
      AND coalesce({trait_stage_sql("t")}, '') NOT IN ('dissolved', 'trend')
      AND t.trait_confidence IS NOT NULL
      {{user}}
)
UPDATE memories t SET {DISSOLVE_DECAYED_SET}
FROM decayed d
WHERE t.memory_type = 'trait' AND t.id = d.id AND d.confidence < %(floor)s
  -- Re-checked on the row as it is when locked: a trait reinforced or vetoed while this
  -- statement waited for it (its version moved on) is left alone, not overwritten.
  AND t.version = d.version AND {current_sql("t")}
RETURNING t.id
"""


def traits_dissolve_weak(*, now: datetime, user_id: str | None = None) -> int:
    """Dissolve the current traits (of one user, or all) whose confidence, decayed until
    `now`, is below `dissolve_below`, and expire them; trends are left to their window.
    Computed from the traits themselves, not the view (which may be up to a refresh old).
    Answers how many."""
    rules = lifecycle_rules()
    params, user = sweep_scope(now=now, user_id=user_id)
    params |= {
        **rules.decay_params(),
        "floor": rules.dissolve_below,
        "reason": f"decayed below {rules.dissolve_below:g}",
    }
    with audit_actor(ACTOR), connection.cursor() as cursor:
        cursor.execute(WEAK_TRAITS_DISSOLVE_SQL.format(user=user), params)
        dissolved = [trait_id for (trait_id,) in cursor.fetchall()]
        traits_expire_dissolved(trait_ids=dissolved, now=now)
    return len(dissolved)


# --- Consistency -----------------------------------------------------------------------------


def dangling(
    table: str,
    reference: str,
    user: str,
    *,
    row_id: str = "r.id::text",
    target: str = "memories",
    trait: bool = False,
) -> tuple[str, str]:
    """A check's table and the SQL finding its rows (alias `r`) whose `reference` names no row
    of `target` (a trait, with `trait`: the pruned partition), as (row_id, missing_id, user_id)."""
    trait_only = "x.memory_type = 'trait' AND " if trait else ""
    return (
        table,
        f"""SELECT {row_id}, {reference}::text, {user}
           FROM {table} r
           WHERE {reference} IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM {target} x WHERE {trait_only}x.id = {reference})""",
    )


# Whose row it is: its own user_id, else the user where another row still names it (nothing
# holds a foreign key to the partitioned `memories`).
OWN_USER = "r.user_id"
MEMORY_USER = "(SELECT m.user_id FROM memories m WHERE m.id = r.memory_id LIMIT 1)"
TRAIT_USER = (
    "(SELECT t.user_id FROM memories t WHERE t.memory_type = 'trait' AND t.id = r.trait_id LIMIT 1)"
)
SESSION_USER = "(SELECT c.user_id FROM conversation_sessions c WHERE c.id = r.session_id)"
# memory_sources has no id of its own: its key is the pair.
SOURCE_ROW = "r.memory_id::text || '/' || r.session_id::text"

# Per check: the table holding the reference, and the rows whose reference dangles as
# (row_id, missing_id, user_id) — anti-joins.
CHECKS: dict[str, tuple[str, str]] = {
    ConsistencyCheck.EVIDENCE_TRAIT: dangling(
        "trait_evidence", "r.trait_id", MEMORY_USER, trait=True
    ),
    ConsistencyCheck.EVIDENCE_MEMORY: dangling("trait_evidence", "r.memory_id", TRAIT_USER),
    ConsistencyCheck.HISTORY_MEMORY: dangling("memory_history", "r.memory_id", "NULL::varchar"),
    ConsistencyCheck.SOURCE_MEMORY: dangling(
        "memory_sources", "r.memory_id", SESSION_USER, row_id=SOURCE_ROW
    ),
    ConsistencyCheck.SOURCE_SESSION: dangling(
        "memory_sources",
        "r.session_id",
        MEMORY_USER,
        row_id=SOURCE_ROW,
        target="conversation_sessions",
    ),
    ConsistencyCheck.SUPERSEDED_BY: dangling("memories", "r.superseded_by", OWN_USER),
    ConsistencyCheck.TRAIT_PARENT: dangling("memories", "r.trait_parent_id", OWN_USER, trait=True),
    ConsistencyCheck.LINK_SOURCE: dangling("memory_links", "r.source_id", OWN_USER),
    ConsistencyCheck.LINK_TARGET: dangling("memory_links", "r.target_id", OWN_USER),
    ConsistencyCheck.GRAPH_CONTRADICTION: (
        "graph_edges",
        f"""SELECT DISTINCT ON (e.id) e.id::text, o.id::text, e.user_id
           FROM graph_edges e
           JOIN graph_edges o ON o.subject_id = e.subject_id AND o.relation = e.relation
                             AND o.id <> e.id AND o.single AND {current_sql("o")}
           WHERE e.single AND {current_sql("e")}
           ORDER BY e.id, o.id""",
    ),
}

# One check in one statement: what dangles now is open (new, or seen again: last_seen_at),
# open issues no longer found are resolved. The checked rows are only read.
CONSISTENCY_SQL = """
WITH found AS (
    SELECT DISTINCT ON (row_id) row_id, missing_id, user_id
    FROM ({select}) AS f (row_id, missing_id, user_id)
    ORDER BY row_id
), seen AS (
    INSERT INTO consistency_issues AS i
        (check_name, table_name, row_id, missing_id, user_id, first_seen_at, last_seen_at)
    SELECT %(check)s, %(table)s, row_id, missing_id, user_id, %(now)s, %(now)s FROM found
    ON CONFLICT (check_name, row_id) WHERE resolved_at IS NULL DO UPDATE
        SET last_seen_at = EXCLUDED.last_seen_at,
            missing_id = EXCLUDED.missing_id,
            user_id = coalesce(EXCLUDED.user_id, i.user_id)
    RETURNING (xmax = 0) AS inserted
), resolved AS (
    UPDATE consistency_issues i SET resolved_at = %(now)s
    WHERE i.check_name = %(check)s AND i.resolved_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM found f WHERE f.row_id = i.row_id)
    RETURNING 1
)
SELECT (SELECT count(*) FROM seen),
       (SELECT count(*) FROM seen WHERE inserted),
       (SELECT count(*) FROM resolved)
"""


def consistency_check(*, now: datetime) -> dict[str, int]:
    """Look for dangling references (nothing holds a foreign key to the partitioned
    `memories`) and keep `consistency_issues` in step: new ones opened, ones still there
    seen again, ones gone resolved. Nothing checked is changed or deleted: staff decide.
    Answers the open issues per check."""
    open_issues = {}
    with connection.cursor() as cursor:
        for check, (table, select) in CHECKS.items():
            cursor.execute(
                CONSISTENCY_SQL.format(select=select),
                {"check": str(check), "table": table, "now": now},
            )
            still_open, new, resolved = cursor.fetchone()
            open_issues[str(check)] = still_open
            if new or resolved:
                log.warning(
                    "consistency %s: %d open (%d new), %d resolved",
                    check,
                    still_open,
                    new,
                    resolved,
                )
    return open_issues


# --- Reflection triggers ---------------------------------------------------------------------

# Users with unreflected facts and episodes (idx_memories_unreflected, read index-only) and
# no cycle in flight; per user: the unreflected importance, the quiet seconds of their most
# recently quiet session not reflected on since (NULL: none), and whether a cycle started
# within the interval.
DUE_USERS_SQL = f"""
WITH unreflected AS (
    SELECT m.user_id, sum(m.importance)::float8 AS importance
    FROM memories m
    WHERE m.memory_type IN ('fact', 'episodic')
      AND m.reflected_at IS NULL AND {latest_sql("m")}
    GROUP BY m.user_id
)
SELECT u.user_id,
       u.importance,
       (SELECT extract(epoch FROM (%(now)s - max(l.last_at)))::float8
        FROM conversation_sessions s
        CROSS JOIN LATERAL (
            SELECT max(c.created_at) AS last_at FROM conversations c WHERE c.session_id = s.id
        ) l
        WHERE s.user_id = u.user_id
          AND s.ended_at IS NULL
          AND l.last_at < %(idle_before)s
          AND (s.last_reflected_at IS NULL OR l.last_at > s.last_reflected_at)),
       EXISTS (SELECT 1 FROM reflection_cycles c
               WHERE c.user_id = u.user_id AND c.started_at > %(interval_start)s)
FROM unreflected u
WHERE NOT EXISTS (
    SELECT 1 FROM reflection_cycles c
    WHERE c.user_id = u.user_id
      AND (c.status = %(queued)s OR (c.status = %(running)s AND c.started_at > %(stale_before)s))
)
"""
TRIGGER_ORDER = (
    ReflectionTrigger.IMPORTANCE_ACCUMULATED,
    ReflectionTrigger.IDLE,
    ReflectionTrigger.SCHEDULED,
)


def reflection_due_users(*, now: datetime, limit: int = DUE_USERS_PER_RUN) -> dict[str, int]:
    """Queue a cycle for each user due one, by the first trigger that holds: unreflected
    importance at REFLECTION_IMPORTANCE_THRESHOLD (`importance_accumulated`, the sum as its
    value), a session quiet for REFLECTION_IDLE_AFTER with messages not reflected on (`idle`,
    the quiet seconds), no cycle for REFLECTION_INTERVAL (`scheduled`); only users with
    unreflected memories, none with a cycle queued or running. At most `limit` a run, in that
    order. Answers how many were queued per trigger."""
    # Imported here: cycles imports reflection.cycle, which imports this module.
    from reflection.services.cycles import reflection_cycle_request

    # A cycle runs under the task's hard limit (TASK_TIME_LIMIT): one `running` for twice
    # that died with its worker and holds no one back.
    stale_before = now - timedelta(seconds=2 * settings.TASK_TIME_LIMIT)
    with connection.cursor() as cursor:
        cursor.execute(
            DUE_USERS_SQL,
            {
                "now": now,
                "idle_before": now - timedelta(seconds=settings.REFLECTION_IDLE_AFTER),
                "interval_start": now - timedelta(seconds=settings.REFLECTION_INTERVAL),
                "stale_before": stale_before,
                "queued": ReflectionStatus.QUEUED,
                "running": ReflectionStatus.RUNNING,
            },
        )
        rows = cursor.fetchall()
    due: dict[str, list[tuple[float, str, float | None]]] = {t: [] for t in TRIGGER_ORDER}
    for user_id, importance, idle_seconds, recent in rows:
        if importance >= settings.REFLECTION_IMPORTANCE_THRESHOLD:
            due[ReflectionTrigger.IMPORTANCE_ACCUMULATED].append((importance, user_id, importance))
        elif idle_seconds is not None:
            due[ReflectionTrigger.IDLE].append((importance, user_id, idle_seconds))
        elif not recent:
            due[ReflectionTrigger.SCHEDULED].append((importance, user_id, None))
    queued = {str(trigger): 0 for trigger in TRIGGER_ORDER}
    budget = limit
    for trigger in TRIGGER_ORDER:
        # The most unreflected importance first within a trigger.
        for _, user_id, value in sorted(due[trigger], key=lambda d: (-d[0], d[1]))[:budget]:
            try:
                _, created = reflection_cycle_request(
                    caller=SYSTEM, user_id=user_id, trigger_type=trigger, trigger_value=value
                )
            except DomainError as error:  # a user_id no cycle can take (say, from V1)
                log.warning("reflection for %r not queued: %s", user_id, error)
                continue
            queued[str(trigger)] += created
        budget -= min(budget, len(due[trigger]))
    deferred = sum(len(users) for users in due.values()) - limit
    if deferred > 0:
        log.info("reflection triggers: %d users due left for the next run", deferred)
    return queued
