"""Many facts at once, written in SQL: for tests that need a partition big enough for its
indexes to matter."""

from django.conf import settings
from django.db import connection


def insert_facts(user_id: str, count: int, status: str = "ready", *, users: int = 1) -> None:
    """`count` facts 'memory <n>' with random vectors, then ANALYZE (plans depend on sizes); with
    `users`, spread over that many users '<user_id>-<k>'."""
    owner = "%(user_id)s" if users == 1 else "%(user_id)s || '-' || (n %% %(users)s)"
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO memories (id, user_id, memory_type, content, embedding, embedding_status,
                                  content_hash, created_at, valid_at)
            SELECT gen_random_uuid(), {owner}, 'fact', 'memory ' || n,
                   (SELECT array_agg(random() - 0.5) FROM generate_series(1, %(dimensions)s)
                    WHERE n > 0)::vector::halfvec,
                   %(status)s, md5(n::text), now(), now()
            FROM generate_series(1, %(count)s) AS n
            """,
            {
                "user_id": user_id,
                "users": users,
                "dimensions": settings.EMBEDDING_DIM,
                "status": status,
                "count": count,
            },
        )
        cursor.execute("ANALYZE memories")
