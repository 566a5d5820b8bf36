"""Per-user indexes for users with many memories of one type.

A partition's indexes hold every user's memories. A user who holds a large share of them
pays for the others on every recall:
- each vector branch walks the shared HNSW graph past other users' rows (the iterative
  scan);
- the text side ANDs the shared GIN index's matches for the query's words (every user's)
  with the user's btree entries (docs/benchmarks.md, "Recall", has the costs).
pgvector's and PostgreSQL's answer for a filter on a few values is a partial index. So a user
with at least USER_INDEX_MIN_MEMORIES memories of a type gets two on that partition:

    CREATE INDEX CONCURRENTLY idx_fact_embedding_u_<md5 of user_id, 16 hex>
        ON memories_fact USING hnsw (embedding halfvec_cosine_ops) WITH (GRAPH_OPTIONS)
        WHERE embedding_status = 'ready' AND user_id = '<user_id>'
    CREATE INDEX CONCURRENTLY idx_fact_search_u_<…> ON memories_fact USING gin (search_vector)
        WHERE user_id = '<user_id>'

Recall's query is planned with the user id's value, so PostgreSQL sees that the user's own
indexes answer it, and picks them (smaller, no filtering). Users below that size are served
well by their btree index: an exact sort for the vector side and, for the text side, a match
on each of their rows (recall looks up which of the user's indexes exist, VALID_INDEXES_SQL).

Beat runs `user_indexes_refresh` every USER_INDEX_REFRESH_INTERVAL: it builds the missing
indexes (CONCURRENTLY: writes go on meanwhile) and drops those of users who fell below half
the threshold (the hysteresis keeps a user near it from flapping), and any left invalid by an
interrupted build. The price: a big user's writes maintain two more indexes, and every query
plan considers them.
"""

import hashlib
import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from psycopg import sql

from memories.predicates import latest_sql

log = logging.getLogger(__name__)

NAME_PATTERN = r"^idx_[a-z]+_(embedding|search)_u_[0-9a-f]{16}$"
# A denser build than the shared graphs' (ef_construction 64): beat builds it off the request
# path, so the longer build costs no request, and it finds more of a heavy user's nearest
# memories (docs/benchmarks.md, "Numbers behind the design notes").
GRAPH_OPTIONS = "m = 16, ef_construction = 200"


@dataclass(frozen=True)
class UserIndexKind:
    """What a per-user index covers: `counted` says which of the user's memories earn it."""

    name: str
    access_method: str
    predicate: str
    counted: str


KINDS = (
    # The vector side searches embedded memories only (migration 0004).
    UserIndexKind(
        name="embedding",
        access_method=f"hnsw (embedding halfvec_cosine_ops) WITH ({GRAPH_OPTIONS})",
        predicate="embedding_status = 'ready' AND ",
        counted="ready",
    ),
    # The text side also finds memories still waiting for their embedding, and past ones (as_of).
    UserIndexKind(name="search", access_method="gin (search_vector)", predicate="", counted="all"),
)


@dataclass(frozen=True)
class UserIndexChanges:
    built: list[str]
    dropped: list[str]


def partition_name(memory_type: str) -> str:
    """The table holding memories of that type (migration 0001)."""
    return f"memories_{memory_type}"


def user_index_name(*, user_id: str, memory_type: str, kind: str) -> str:
    return f"idx_{memory_type}_{kind}_u_{hashlib.md5(user_id.encode()).hexdigest()[:16]}"


def _users_with_at_least(count: int) -> dict[str, tuple[UserIndexKind, str, str, int]]:
    """Index name → (kind, user, type, memories counted) for every per-user index that `count`
    or more of the user's current memories of a type earn."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT user_id, memory_type, count(*) FILTER (WHERE embedding_status = 'ready'),
                   count(*)
            FROM memories WHERE {latest_sql("memories")}
            GROUP BY user_id, memory_type HAVING count(*) >= %s
            """,
            [count],
        )
        earned = {}
        for user_id, memory_type, ready, current in cursor.fetchall():
            for kind in KINDS:
                counted = ready if kind.counted == "ready" else current
                if counted >= count:
                    name = user_index_name(user_id=user_id, memory_type=memory_type, kind=kind.name)
                    earned[name] = (kind, user_id, memory_type, counted)
        return earned


def _existing_indexes() -> dict[str, bool]:
    """Per-user index name → whether it is valid (an interrupted CONCURRENTLY build is not)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.relname, i.indisvalid FROM pg_index i
            JOIN pg_class c ON c.oid = i.indexrelid
            WHERE c.relname ~ %s
            """,
            [NAME_PATTERN],
        )
        return dict(cursor.fetchall())


def user_indexes_refresh() -> UserIndexChanges:
    """Build the indexes big users lack and drop those no longer earned (beat task; runs
    outside a transaction, as CREATE/DROP INDEX CONCURRENTLY must)."""
    threshold = settings.USER_INDEX_MIN_MEMORIES
    keep = _users_with_at_least(max(1, threshold // 2))
    existing = _existing_indexes()
    dropped = [name for name, valid in existing.items() if name not in keep or not valid]
    for name in dropped:
        _run(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name)))
    built = []
    for name, (kind, user_id, memory_type, count) in sorted(keep.items()):
        if count < threshold or existing.get(name):
            continue
        _run(
            sql.SQL(
                "CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {partition}"
                f" USING {kind.access_method} WHERE {kind.predicate}user_id = {{user_id}}"
            ).format(
                name=sql.Identifier(name),
                partition=sql.Identifier(partition_name(memory_type)),
                user_id=sql.Literal(user_id),
            )
        )
        log.info("built %s for %s's %d %s memories", name, user_id, count, memory_type)
        built.append(name)
    return UserIndexChanges(built=built, dropped=dropped)


# The valid ones among %(index_names)s (an interrupted CONCURRENTLY build leaves an invalid
# one): a SELECT list fragment for recall's first round trip.
VALID_INDEXES_SQL = (
    "ARRAY(SELECT c.relname::text FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid"
    " WHERE c.relname = ANY(%(index_names)s) AND i.indisvalid)"
)


def _run(statement: sql.Composed) -> None:
    connection.ensure_connection()
    with connection.connection.cursor() as cursor:
        cursor.execute(statement)
