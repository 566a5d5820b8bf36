"""Per-user HNSW graphs for users with many memories of one type.

A partition's HNSW graph holds every user's memories. For a user who holds a large share of
them, each recall branch walks the graph past other users' rows (the iterative scan) and
pays for it: ~7 ms a branch for the benchmark's user with 20,000 memories, three branches a
recall. pgvector's answer for a filter on a few values is a partial index; so a user with at
least USER_GRAPH_MIN_MEMORIES ready memories of a type gets one on that partition:

    CREATE INDEX CONCURRENTLY idx_fact_embedding_u_<md5 of user_id, 16 hex>
        ON memories_fact USING hnsw (embedding halfvec_cosine_ops) WITH (GRAPH_OPTIONS)
        WHERE embedding_status = 'ready' AND user_id = '<user_id>'

Recall's query is planned with the user id's value, so PostgreSQL sees that the user's graph
answers it, and picks it (smaller, no filtering). Users below that size are served well by
their btree index and an exact sort, or by the shared graph.

Beat runs `user_graphs_refresh` every USER_GRAPH_REFRESH_INTERVAL: it builds the missing
graphs (CONCURRENTLY: writes go on meanwhile) and drops those of users who fell below half
the threshold (the hysteresis keeps a user near it from flapping), and any left invalid by an
interrupted build. The price: a big user's memories are inserted into two graphs when the
worker makes them ready, and every query plan considers the extra indexes.
"""

import hashlib
import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from psycopg import sql

log = logging.getLogger(__name__)

NAME_PATTERN = r"^idx_[a-z]+_embedding_u_[0-9a-f]{16}$"
# A denser build than the shared graphs' (ef_construction 64): built off the request path, and
# measured on the benchmark's heavy user (10,000 facts, 200 queries, ef_search 100): recall@10
# 0.949–0.966 over three builds with 64, 0.987–0.988 over two with 200, for ~2x build time.
GRAPH_OPTIONS = "m = 16, ef_construction = 200"


@dataclass(frozen=True)
class UserGraphChanges:
    built: list[str]
    dropped: list[str]


def user_graph_name(*, user_id: str, memory_type: str) -> str:
    return f"idx_{memory_type}_embedding_u_{hashlib.md5(user_id.encode()).hexdigest()[:16]}"


def _users_with_at_least(count: int) -> dict[str, tuple[str, str, int]]:
    """Graph name → (user, type, ready memories) for every (user, type) with `count` or more."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT user_id, memory_type, count(*) FROM memories
            WHERE embedding_status = 'ready' AND expired_at IS NULL
            GROUP BY user_id, memory_type HAVING count(*) >= %s
            """,
            [count],
        )
        return {
            user_graph_name(user_id=user_id, memory_type=memory_type): (user_id, memory_type, n)
            for user_id, memory_type, n in cursor.fetchall()
        }


def _existing_graphs() -> dict[str, bool]:
    """Per-user graph name → whether it is valid (an interrupted CONCURRENTLY build is not)."""
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


def user_graphs_refresh() -> UserGraphChanges:
    """Build the graphs big users lack and drop those no longer earned (beat task; runs outside
    a transaction, as CREATE/DROP INDEX CONCURRENTLY must)."""
    threshold = settings.USER_GRAPH_MIN_MEMORIES
    keep = _users_with_at_least(max(1, threshold // 2))
    existing = _existing_graphs()
    dropped = [name for name, valid in existing.items() if name not in keep or not valid]
    for name in dropped:
        _run(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name)))
    built = []
    for name, (user_id, memory_type, count) in sorted(keep.items()):
        if count < threshold or existing.get(name):
            continue
        _run(
            sql.SQL(
                "CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {partition}"
                f" USING hnsw (embedding halfvec_cosine_ops) WITH ({GRAPH_OPTIONS})"
                " WHERE embedding_status = 'ready' AND user_id = {user_id}"
            ).format(
                name=sql.Identifier(name),
                partition=sql.Identifier(f"memories_{memory_type}"),
                user_id=sql.Literal(user_id),
            )
        )
        log.info("built %s for %s's %d %s memories", name, user_id, count, memory_type)
        built.append(name)
    return UserGraphChanges(built=built, dropped=dropped)


def _run(statement: sql.Composed) -> None:
    connection.ensure_connection()
    with connection.connection.cursor() as cursor:
        cursor.execute(statement)
