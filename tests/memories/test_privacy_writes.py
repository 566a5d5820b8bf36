"""Secrets are never stored, whichever way they are written: every write path stores the typed
placeholder, says what it redacted (`redactions`), and leaves no trace of the value in any
table; statistics count what was redacted."""

import json

import pytest
from django.db import connection

from neuromem_site.mcp.tools import TOOLS, tool_call

pytestmark = pytest.mark.django_db

SECRET = "Tr0ub4dor&3"
SAID = f"My password for the billing portal is {SECRET}"
REDACTED = "My password for the billing portal is [redacted: password]"
FACT = {"memory_type": "fact"}

# Every text column a user's words can reach.
TEXT_COLUMNS = {
    "memories": ["content", "metadata::text", "key"],
    "memory_history": ["old_content", "new_content", "old_metadata::text", "new_metadata::text"],
    "conversations": ["content"],
    "conversation_sessions": ["metadata::text"],
}


def stored_anywhere(value: str) -> list[str]:
    found = []
    with connection.cursor() as cursor:
        for table, columns in TEXT_COLUMNS.items():
            for column in columns:
                cursor.execute(
                    f"SELECT count(*) FROM {table} WHERE strpos({column}, %s) > 0", [value]
                )
                if cursor.fetchone()[0]:
                    found.append(f"{table}.{column}")
    return found


@pytest.fixture
def agent(make_client):
    return make_client("agent", ["agent:"])


def data(response, status: int = 200):
    assert response.status_code == status, response.json()
    return response.json()["data"]


def test_rest_write_stores_the_placeholder_and_says_what_it_redacted(agent):
    http, _ = agent
    body = {"user_id": "agent:a", "content": SAID, "memory_type": "fact"}
    written = data(http.post("/api/v1/memories/", body, format="json"), 201)
    assert written["memory"]["content"] == REDACTED
    assert written["redactions"] == written["memory"]["redactions"] == {"password": 1}
    # The same words again are the same memory: redaction comes before the NOOP check.
    again = data(http.post("/api/v1/memories/", body, format="json"))
    assert (again["operation"], again["redactions"]) == ("NOOP", {"password": 1})
    listed = data(http.get("/api/v1/memories/", {"user_id": "agent:a"}))
    assert [(m["content"], m["redactions"]) for m in listed] == [(REDACTED, {"password": 1})]
    assert stored_anywhere(SECRET) == []


def test_batch_items_each_say_what_was_redacted(agent):
    http, _ = agent
    items = [
        {"user_id": "agent:a", "content": SAID, "memory_type": "fact"},
        {"user_id": "agent:a", "content": "Card 4242 4242 4242 4242", "memory_type": "document"},
        {"user_id": "agent:a", "content": "Nothing secret here", "memory_type": "fact"},
    ]
    results = data(http.post("/api/v1/memories/batch/", {"items": items}, format="json"))["results"]
    assert [r["redactions"] for r in results] == [{"password": 1}, {"card_number": 1}, {}]
    assert stored_anywhere(SECRET) == [] and stored_anywhere("4242 4242") == []


def test_seed_route_and_mcp_store_the_placeholder(agent):
    http, client = agent
    seed = data(
        http.post(
            "/add_memory",
            {"user_id": "agent:a", "key": "login", "value": {"text": SAID, "summary": SAID}},
            format="json",
        ),
        201,
    )
    assert seed["value"]["text"] == REDACTED and seed["value"]["summary"] == REDACTED
    assert seed["meta"]["redactions"] == {"password": 2}
    answer = tool_call(
        tool=TOOLS["memory_add"],
        caller=lambda: client.caller,
        arguments={"user_id": "agent:a", "content": f"MCP: {SAID}", "memory_type": "fact"},
    )
    assert answer.ok
    assert json.loads(answer.text)["memory"]["content"] == f"MCP: {REDACTED}"
    assert stored_anywhere(SECRET) == []


def test_patch_of_metadata_and_supersede_redact_too(agent):
    http, _ = agent
    memory = data(
        http.post(
            "/api/v1/memories/",
            {"user_id": "agent:a", "content": "A note", "memory_type": "fact"},
            format="json",
        ),
        201,
    )["memory"]
    patched = data(
        http.patch(
            f"/api/v1/memories/{memory['id']}/",
            {"version": memory["version"], "metadata": {"login": SAID}},
            format="json",
        )
    )
    assert patched["metadata"] == {"login": REDACTED}
    assert patched["redactions"] == {"password": 1}
    successor = data(
        http.post(
            f"/api/v1/memories/{memory['id']}/supersede/",
            {"content": f"Now: {SAID}", "metadata": {"pin": "PIN: 0382"}},
            format="json",
        ),
        201,
    )
    assert successor["content"] == f"Now: {REDACTED}"
    assert successor["metadata"] == {"pin": "PIN: [redacted: pin]"}
    assert successor["redactions"] == {"password": 1, "pin": 1}
    assert stored_anywhere(SECRET) == [] and stored_anywhere("0382") == []


def test_a_key_holding_a_secret_is_refused_and_nothing_is_written(agent):
    http, _ = agent
    key = "creds/sk-proj-8fJ2kLm9QwErTyUiOpAsDfGhJkLzXcVb"
    for path, body in (
        ("/api/v1/memories/", {"user_id": "agent:a", "content": "A note", "key": key, **FACT}),
        ("/add_memory", {"user_id": "agent:a", "key": key, "value": {"text": "A note"}}),
    ):
        response = http.post(path, body, format="json")
        assert response.status_code == 400, response.json()
        assert response.json()["error"]["field"] == "key"
    memory = data(
        http.post(
            "/api/v1/memories/", {"user_id": "agent:a", "content": "A note", **FACT}, format="json"
        ),
        201,
    )["memory"]
    renamed = http.patch(
        f"/api/v1/memories/{memory['id']}/",
        {"version": memory["version"], "key": key},
        format="json",
    )
    assert renamed.status_code == 400 and renamed.json()["error"]["field"] == "key"
    assert stored_anywhere("8fJ2kLm9QwErTyUiOpAsDfGh") == []


def test_a_value_its_name_calls_a_secret_is_redacted_in_memory_and_session_metadata(agent):
    http, _ = agent
    metadata = {"wifi_password": "bluecabin7", "sk-proj-8fJ2kLm9QwErTyUiOpAsDfGhJkLzXcVb": "k"}
    body = {"user_id": "agent:a", "content": "Home network", "metadata": metadata, **FACT}
    written = data(http.post("/api/v1/memories/", body, format="json"), 201)
    assert written["memory"]["metadata"] == {
        "wifi_password": "[redacted: password]",
        "[redacted: api_key]": "k",
    }
    assert written["redactions"] == {"password": 1, "api_key": 1}
    session = {"user_id": "agent:a", "metadata": {"password": "SessPw77"}}
    opened = data(http.post("/api/v1/sessions/", session, format="json"), 201)
    assert opened["metadata"] == {"password": "[redacted: password]"}
    for secret in ("bluecabin7", "8fJ2kLm9QwErTyUiOpAsDfGh", "SessPw77"):
        assert stored_anywhere(secret) == [], secret


def test_a_conversation_stores_no_secret_in_the_message_its_facts_or_its_episode(agent):
    http, _ = agent
    session = data(
        http.post(
            "/api/v1/sessions/",
            {"user_id": "agent:a", "metadata": {"note": f"set up with {SAID}"}},
            format="json",
        ),
        201,
    )
    assert session["metadata"] == {"note": f"set up with {REDACTED}"}
    said = data(
        http.post(
            f"/api/v1/sessions/{session['id']}/messages/",
            {"role": "user", "content": f"My name is Ana. {SAID}. My SSN is 078-05-1120."},
            format="json",
        ),
        201,
    )
    assert said["redactions"] == said["message"]["redactions"] == {"password": 1, "ssn": 1}
    assert said["message"]["content"] == (f"My name is Ana. {REDACTED}. My SSN is [redacted: ssn].")
    assert [m["memory"]["content"] for m in said["memories"]] == [
        "The user's name is Ana",
        f"User: My name is Ana. {REDACTED}. My SSN is [redacted: ssn].",
    ]
    reply = data(
        http.post(
            f"/api/v1/sessions/{session['id']}/messages/",
            {"role": "assistant", "content": f"Noted, your password is {SECRET}."},
            format="json",
        ),
        201,
    )
    assert reply["message"]["content"] == "Noted, your password is [redacted: password]."
    assert stored_anywhere(SECRET) == [] and stored_anywhere("078-05-1120") == []


def test_statistics_count_what_was_redacted(agent):
    http, _ = agent
    http.post(
        "/api/v1/memories/",
        {"user_id": "agent:a", "content": f"{SAID}. PIN: 0382", "memory_type": "fact"},
        format="json",
    )
    session = data(http.post("/api/v1/sessions/", {"user_id": "agent:a"}, format="json"), 201)
    http.post(
        f"/api/v1/sessions/{session['id']}/messages/",
        {"role": "user", "content": "Card 4242 4242 4242 4242"},
        format="json",
    )
    stats = data(http.get("/api/v1/memories/stats/", {"user_id": "agent:a", "cache_ttl_ms": 0}))
    # The message was redacted as it came in: its episode holds the placeholder, and counts
    # nothing of its own.
    assert stats["redactions"] == {
        "memories": {"password": 1, "pin": 1},
        "messages": {"card_number": 1},
    }
    csv = http.get(
        "/api/v1/memories/stats/",
        {"user_id": "agent:a", "cache_ttl_ms": 0, "export_format": "csv"},
    ).content.decode()
    assert "redacted_memories,password,,,1\r\n" in csv
    assert "redacted_messages,card_number,,,1\r\n" in csv
