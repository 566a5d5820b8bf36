"""Which plan recall's statement runs with (docs/recall.md, "One plan for most users"): one
made for each recall, the generic plan of a statement shared by the users without indexes of
their own, or the generic plan of a big user's own statement."""

import time
from datetime import datetime
from enum import Enum

import psycopg
import psycopg.sql
from django.conf import settings

from memories.user_indexes import partition_name


class RecallPlan(Enum):
    """How recall's statement is planned (docs/recall.md, "One plan for most users")."""

    # Not prepared: a plan made for each recall.
    EACH_RUN = "each run"
    # Prepared: PostgreSQL keeps one generic plan per connection for every user without
    # indexes of their own.
    SHARED = "shared"
    # Prepared with the user named in it, so that its generic plan reads the partial indexes
    # on their id: one plan per connection for that user.
    USER_OWN = "user's own"


# A plan made for no user in particular takes every user for the mean one: the partition's
# rows over its distinct users (pg_stats). While that user is this small, it reads a user's
# rows through the user_id index and sorts them, as the plan made for a small user does; past
# some hundreds PostgreSQL walks the shared HNSW graph instead, in which the scan may stop
# before it finds a small user's few rows among the others' (docs/recall.md, "One plan for
# most users").
GENERIC_PLAN_MAX_MEAN_ROWS = 250
MEAN_USER_ROWS_SQL = """
    SELECT max(c.reltuples / CASE WHEN s.n_distinct < 0
                                  THEN -s.n_distinct * greatest(c.reltuples, 1)
                                  ELSE greatest(s.n_distinct, 1) END)
    FROM pg_stats s
    JOIN pg_class c ON c.relname = s.tablename AND c.relnamespace = s.schemaname::regnamespace
    WHERE s.schemaname = current_schema() AND s.tablename = ANY(%(partitions)s)
      AND s.attname = 'user_id'
"""
# Memory types → (when read, the mean user's rows in the biggest of their partitions).
_mean_user_rows: dict[tuple[str, ...], tuple[float, float | None]] = {}


def _mean_user_small(cursor: psycopg.Cursor, memory_types: tuple[str, ...]) -> bool:
    """Whether the mean user is small (GENERIC_PLAN_MAX_MEAN_ROWS) in every partition of these
    types, or the partitions have no statistics yet. They change when a partition is analysed,
    not from one recall to the next: read again at most every RECALL_PLAN_STATISTICS_SECONDS."""
    now = time.monotonic()
    read_at, rows = _mean_user_rows.get(memory_types, (float("-inf"), None))
    if now - read_at >= settings.RECALL_PLAN_STATISTICS_SECONDS:
        partitions = [partition_name(memory_type) for memory_type in memory_types]
        cursor.execute(MEAN_USER_ROWS_SQL, {"partitions": partitions})
        (rows,) = cursor.fetchone()
        _mean_user_rows[memory_types] = (now, rows)
    return rows is None or rows <= GENERIC_PLAN_MAX_MEAN_ROWS


def recall_plan_chosen(
    cursor: psycopg.Cursor,
    *,
    memory_types: tuple[str, ...],
    own_indexes: bool,
    any_activity: bool,
    outermost: bool,
    as_of: datetime | None,
) -> RecallPlan:
    """The plan for a user with or without `own_indexes`, in a transaction of recall's own or
    not (`outermost`). Search's activity bounds are written into its statement: a statement
    for each, never prepared (`any_activity` false)."""
    if not (settings.DATABASE_PREPARED_STATEMENTS and any_activity):
        return RecallPlan.EACH_RUN
    if own_indexes:
        # Its generic plan is asked for with a setting the end of recall's transaction clears
        # (memories/recall.py): not inside a caller's transaction. Nor as of an instant: its
        # bounds are parameters, whose rows a generic plan cannot count; it chose otherwise
        # than the plan made for the run, with other hits (tests/memories/test_user_indexes.py).
        own_plan = outermost and as_of is None
        return RecallPlan.USER_OWN if own_plan else RecallPlan.EACH_RUN
    return RecallPlan.SHARED if _mean_user_small(cursor, memory_types) else RecallPlan.EACH_RUN


def user_named(sql: str, *, user_id: str, cursor: psycopg.Cursor) -> str:
    """Recall's statement with the user's id written in as a value where it had a parameter:
    the partial indexes on their id match it in a generic plan too."""
    literal = psycopg.sql.Literal(user_id).as_string(cursor)
    return sql.replace("%(user_id)s", literal.replace("%", "%%"))
