"""Messages' search document (memories 0019), forward on a database that already holds a
conversation, backward, and forward again: the messages stay, their words become searchable,
and an erased content takes its words along."""

import psycopg
import pytest

from tests.memories.scratch import migrated, scratch_database

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

CONVERSATION_SQL = """
WITH session AS (
    INSERT INTO conversation_sessions (id, user_id, started_at, metadata)
    VALUES (gen_random_uuid(), 'mig:ana', now(), '{}') RETURNING id
)
INSERT INTO conversations (id, session_id, user_id, role, content, extraction_status,
                           created_at)
SELECT gen_random_uuid(), session.id, 'mig:ana', role, content, 'done', now() + delay
FROM session, (VALUES ('assistant', 'The ferry to Troia leaves every hour.', interval '0'),
                      ('user', '好的，我们坐渡轮去。', interval '1 second'))
     AS said(role, content, delay)
"""
MATCHING_SQL = """
SELECT role FROM conversations WHERE search_vector @@ neuromem_search_query(%s) ORDER BY role
"""
COLUMN_SQL = """
SELECT count(*) FROM information_schema.columns
WHERE table_name = 'conversations' AND column_name = 'search_vector'
"""


def test_messages_become_searchable_on_a_database_holding_a_conversation():
    with scratch_database() as url:
        migrated(url, "memories", "0018")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(CONVERSATION_SQL)
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute(MATCHING_SQL, ["ferries"]).fetchall() == [("assistant",)]
            assert conn.execute(MATCHING_SQL, ["渡轮"]).fetchall() == [("user",)]
            conn.execute("UPDATE conversations SET content = '' WHERE role = 'assistant'")
            assert conn.execute(MATCHING_SQL, ["ferries"]).fetchall() == []
        migrated(url, "memories", "0018")
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute(COLUMN_SQL).fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM conversations").fetchone() == (2,)
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute(MATCHING_SQL, ["渡轮"]).fetchall() == [("user",)]
