"""The assistant messages' word index (memories 0019, 0021): a word whose "<user_id> <lexeme>"
key would be too large for a GIN entry is left out of it, not a failed write."""

import random
import string

import psycopg
import pytest

from tests.memories.scratch import migrated, scratch_database

# A user id of 240 Chinese characters is 720 bytes: with a 2,000-letter token, over GIN's limit.
LONG_USER = "agent:" + "中" * 240
TOKEN = "".join(random.Random(7).choices(string.ascii_lowercase, k=2000))


@pytest.mark.django_db
def test_a_word_too_long_for_the_index_does_not_fail_the_message(make_client):
    http = make_client("agent", ["agent:"])[0]
    session = http.post("/api/v1/sessions/", {"user_id": LONG_USER}, format="json")
    session_id = session.json()["data"]["id"]
    for role, content in (("assistant", f"Here it is: {TOKEN}"), ("user", "Thanks, kept it")):
        response = http.post(
            f"/api/v1/sessions/{session_id}/messages/",
            {"role": role, "content": content},
            format="json",
        )
        assert response.status_code == 201, response.json()
    query = {"user_id": LONG_USER, "query": f"here it is {TOKEN[:50]}"}
    assert http.post("/api/v1/recall/", query, format="json").status_code == 200


SESSION_SQL = """
INSERT INTO conversation_sessions (id, user_id, started_at, metadata)
VALUES ('00000000-0000-0000-0000-000000000001', 'u:1', now(), '{}')
"""
MESSAGE_SQL = """
INSERT INTO conversations (id, session_id, user_id, role, content, extraction_status, created_at)
VALUES (gen_random_uuid(), '00000000-0000-0000-0000-000000000001', 'u:1', 'assistant',
        %(content)s, 'done', now())
"""
TERMS_SQL = "SELECT neuromem_user_terms('u:1', to_tsvector('simple', %(content)s))"


@pytest.mark.slow
@pytest.mark.django_db
def test_the_key_size_migration_forward_on_held_messages_backward_and_forward():
    long_word = "x" * 1998  # with "u:1 " in front, 2,002 bytes: over the limit
    with scratch_database() as url:
        migrated(url, "memories", "0020")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(SESSION_SQL)
            conn.execute(MESSAGE_SQL, {"content": f"short words and {long_word}"})
            before = conn.execute(TERMS_SQL, {"content": long_word}).fetchone()[0]
        assert before == [f"u:1 {long_word}"]
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute(TERMS_SQL, {"content": long_word}).fetchone()[0] is None
            assert conn.execute(TERMS_SQL, {"content": "short"}).fetchone()[0] == ["u:1 short"]
            found = conn.execute(
                "SELECT count(*) FROM conversations"
                " WHERE neuromem_user_terms(user_id, search_vector) && ARRAY['u:1 short']"
                " AND role = 'assistant'"
            ).fetchone()
            assert found == (1,)
        migrated(url, "memories", "0020")
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute(TERMS_SQL, {"content": long_word}).fetchone()[0] == before
        migrated(url)
