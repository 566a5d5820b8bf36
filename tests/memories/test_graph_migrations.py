"""The memory graph's migration (memories 0018), forward on a database that already holds
memories and their sources, backward, and forward again: the rows stay, the tables and the
message index come and go."""

import psycopg
import pytest

from tests.memories.scratch import migrated, scratch_database

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

MEMORY_SQL = """
INSERT INTO memories (id, user_id, memory_type, content, importance, score, metadata,
                      embedding_status, created_at, version, access_count)
VALUES (gen_random_uuid(), 'mig:ana', 'fact', 'The user lives in Austin', 0.8, 50, '{}',
        'pending', now(), 1, 0)
RETURNING id
"""
SOURCE_SQL = """
INSERT INTO memory_sources (memory_id, session_id, conversation_id)
VALUES (%s, gen_random_uuid(), gen_random_uuid())
"""
TABLES_SQL = """
SELECT count(*) FROM pg_tables WHERE tablename IN ('graph_nodes', 'graph_edges')
"""
INDEX_SQL = "SELECT count(*) FROM pg_indexes WHERE indexname = 'idx_sources_message'"


def test_the_graph_tables_arrive_on_a_database_holding_memories_and_leave_them_intact():
    with scratch_database() as url:
        migrated(url, "memories", "0017")
        with psycopg.connect(url, autocommit=True) as conn:
            (memory_id,) = conn.execute(MEMORY_SQL).fetchone()
            conn.execute(SOURCE_SQL, [memory_id])
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute(TABLES_SQL).fetchone() == (2,)
            assert conn.execute(INDEX_SQL).fetchone() == (1,)
            node = conn.execute(
                "INSERT INTO graph_nodes (id, user_id, kind, name, role, aliases)"
                " VALUES (gen_random_uuid(), 'mig:ana', 'user', '', '', '{}') RETURNING id"
            ).fetchone()[0]
            conn.execute(
                "INSERT INTO graph_edges (id, user_id, subject_id, relation, object_value, single,"
                " valid_at, created_at, memory_ids, actor)"
                " VALUES (gen_random_uuid(), 'mig:ana', %s, 'lives in', 'Austin', true, now(),"
                " now(), ARRAY[%s]::uuid[], 'test')",
                [node, memory_id],
            )
            assert conn.execute("SELECT content FROM memories").fetchall() == [
                ("The user lives in Austin",)
            ]
        migrated(url, "memories", "0017")
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute(TABLES_SQL).fetchone() == (0,)
            assert conn.execute(INDEX_SQL).fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM memory_sources").fetchone() == (1,)
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute(TABLES_SQL).fetchone() == (2,)
            assert conn.execute("SELECT count(*) FROM memories").fetchone() == (1,)
