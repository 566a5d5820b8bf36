"""Many facts at once, written in SQL: for tests that need a partition big enough for its
indexes to matter."""

from django.conf import settings
from django.db import connection


def insert_facts(user_id: str, count: int, status: str = "ready") -> None:
    """`count` facts 'memory <n>' with random vectors, then ANALYZE (plans depend on sizes)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO memories (id, user_id, memory_type, content, embedding, embedding_status,
                                  content_hash, created_at, valid_at)
            SELECT gen_random_uuid(), %s, 'fact', 'memory ' || n,
                   (SELECT array_agg(random() - 0.5) FROM generate_series(1, %s)
                    WHERE n > 0)::vector::halfvec,
                   %s, md5(n::text), now(), now()
            FROM generate_series(1, %s) AS n
            """,
            [user_id, settings.EMBEDDING_DIM, status, count],
        )
        cursor.execute("ANALYZE memories")


def insert_crowd(users: int, facts_each: int) -> None:
    """`users` users 'crowd-<n>' with `facts_each` facts of random vectors each, then ANALYZE."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO memories (id, user_id, memory_type, content, embedding, embedding_status,
                                  content_hash, created_at, valid_at)
            SELECT gen_random_uuid(), 'crowd-' || (n %% %s), 'fact', 'crowd memory ' || n,
                   (SELECT array_agg(random() - 0.5) FROM generate_series(1, %s)
                    WHERE n > 0)::vector::halfvec,
                   'ready', md5('crowd' || n), now(), now()
            FROM generate_series(1, %s) AS n
            """,
            [users, settings.EMBEDDING_DIM, users * facts_each],
        )
        cursor.execute("ANALYZE memories")
