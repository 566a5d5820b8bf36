"""The privacy migrations (memories 0015, 0016), forward on a database that already holds
memories and their history, backward, and forward again."""

import psycopg
import pytest

from tests.memories.scratch import migrated, scratch_database

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

MEMORIES_SQL = """
INSERT INTO memories (id, user_id, memory_type, content, importance, score, version,
                      access_count, metadata, created_at, embedding_status)
VALUES (gen_random_uuid(), 'u:1', 'fact', 'The user lives in Hangzhou', 0.5, 50, 1, 0, '{}',
        now(), 'pending'),
       (gen_random_uuid(), 'u:1', 'episodic', 'User: I live in Hangzhou.', 0.4, 50, 1, 0, '{}',
        now(), 'pending')
"""


def test_forward_on_data_backward_and_forward_again():
    with scratch_database() as url:
        migrated(url, "memories", "0014")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(MEMORIES_SQL)
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            # What was there stays, with nothing redacted or forgotten.
            rows = conn.execute(
                "SELECT content, redactions, forgotten_at FROM memories ORDER BY content"
            ).fetchall()
            assert rows == [
                ("The user lives in Hangzhou", None, None),
                ("User: I live in Hangzhou.", None, None),
            ]
            assert conn.execute("SELECT count(*) FROM memory_history").fetchone() == (2,)
            # The history may lose its content, nothing else; FORGET is an event now.
            conn.execute("UPDATE memory_history SET new_content = NULL")
            with pytest.raises(psycopg.errors.RaiseException, match="Cannot update"):
                conn.execute("UPDATE memory_history SET new_content = 'rewritten'")
            with pytest.raises(psycopg.errors.RaiseException, match="Cannot delete"):
                conn.execute("DELETE FROM memory_history")
            conn.execute(
                "INSERT INTO memory_history (memory_id, memory_type, event, actor)"
                " SELECT id, memory_type, 'FORGET', 'test' FROM memories LIMIT 1"
            )
            indexes = conn.execute(
                "SELECT indexname FROM pg_indexes WHERE indexname IN"
                " ('idx_memories_redacted', 'idx_memories_forgotten',"
                " 'idx_conversations_redacted', 'idx_memories_fact_redacted')"
            ).fetchall()
            assert len(indexes) == 4
        migrated(url, "memories", "0014")
        with psycopg.connect(url, autocommit=True) as conn:
            columns = conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'memories'"
                " AND column_name IN ('redactions', 'forgotten_at', 'forget_request_id')"
            ).fetchall()
            assert columns == []
            assert conn.execute("SELECT to_regclass('forget_requests')").fetchone() == (None,)
            # The FORGET event written meanwhile stays: the history is append-only.
            assert conn.execute(
                "SELECT count(*) FROM memory_history WHERE event = 'FORGET'"
            ).fetchone() == (1,)
        migrated(url)
