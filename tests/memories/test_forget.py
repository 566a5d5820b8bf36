"""Forgetting: the explicit operation (REST and MCP), what it erases (memories, versions,
history, messages, links, trait evidence, search columns), what it keeps (ids, times, the
event), and that no read returns what was forgotten."""

import json
from datetime import timedelta

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.utils import timezone

from memories.models import ForgetRequest, Memory, MemoryHistory, MemoryLink
from memories.services import memories_embed
from neuromem_site.mcp.tools import TOOLS, tool_call
from reflection.models import EvidenceType, TraitEvidence

pytestmark = pytest.mark.django_db
USER = "agent:ana"
ADDRESS = "742 Evergreen Terrace"


@pytest.fixture
def agent(make_client):
    return make_client("agent", ["agent:"])


def data(response, status: int = 200):
    assert response.status_code == status, response.json()
    return response.json()["data"]


def say(http, session: str, content: str, role: str = "user") -> dict:
    return data(
        http.post(
            f"/api/v1/sessions/{session}/messages/", {"role": role, "content": content}, "json"
        ),
        201,
    )


def conversation(http, *turns: str) -> str:
    session = data(http.post("/api/v1/sessions/", {"user_id": USER}, format="json"), 201)["id"]
    for turn in turns:
        role, content = turn.split(": ", 1)
        say(http, session, content, "assistant" if role == "A" else "user")
    memories_embed(
        memory_ids=list(Memory.objects.filter(user_id=USER).values_list("id", flat=True))
    )
    return session


def forget(http, status: int = 200, **body) -> dict:
    return data(http.post(f"/api/v1/users/{USER}/forget/", body, format="json"), status)


def current_contents() -> list[str]:
    return sorted(Memory.objects.current().filter(user_id=USER).values_list("content", flat=True))


def text_anywhere(value: str) -> list[str]:
    """Every table, materialized view and column that holds `value` (a dump of the database
    would show it): text, JSON, search documents and lists of text."""
    found = []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, a.attname, a.atttypid::regtype::text FROM pg_attribute a"
            " JOIN pg_class c ON c.oid = a.attrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'm', 'p')"
            " AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid::regtype::text IN"
            " ('text', 'character varying', 'jsonb', 'tsvector', 'text[]', 'character varying[]')"
        )
        for table, column, kind in cursor.fetchall():
            cursor.execute(
                f'SELECT count(*) FROM "{table}" WHERE strpos("{column}"::text, %s) > 0',
                [value.lower() if kind == "tsvector" else value],  # lexemes are lower case
            )
            if cursor.fetchone()[0]:
                found.append(f"{table}.{column}")
    return found


# --- The explicit operation ------------------------------------------------------------------


def test_forget_a_topic_erases_it_everywhere_and_keeps_the_record(agent):
    http, _ = agent
    session = conversation(
        http,
        f"U: My home address is {ADDRESS}, Springfield.",
        f"A: Got it, {ADDRESS}.",
        "U: My dog is called Biscuit.",
        "U: My friend Dana's work address is 400 Market Street.",
    )
    before = {m.id: m for m in Memory.objects.filter(user_id=USER)}
    outcome = forget(http, topic="my home address")
    assert outcome["dry_run"] is False and outcome["reason"] is None
    # The fact and the turn that said it, whole; the next turn loses its quote of the
    # assistant's echo ("Got it, 742 Evergreen Terrace.").
    assert sorted((m["memory_type"], m["erased"]) for m in outcome["memories"]) == [
        ("episodic", "part"),
        ("episodic", "whole"),
        ("fact", "whole"),
    ]
    assert all("content" not in m for m in outcome["memories"])  # never says what it erased
    assert len(outcome["messages"]) == 2  # the user's turn and the assistant's echo
    # What must stay, stays: the dog, and the friend's work address.
    assert current_contents() == sorted(
        [
            "User: My dog is called Biscuit.",
            "User: My friend Dana's work address is 400 Market Street.",
            "The user's dog is called Biscuit",
            "The user's friend Dana's work address is 400 Market Street",
        ]
    )
    assert text_anywhere("Evergreen") == []
    # The rows keep their ids, type and times; the request is on record, by id only.
    request = ForgetRequest.objects.get(pk=outcome["id"])
    assert (request.user_id, request.requested_by, request.via) == (USER, "agent", "api")
    whole = [m["id"] for m in outcome["memories"] if m["erased"] == "whole"]
    assert sorted(map(str, request.memory_ids)) == sorted(whole)
    for memory_id in request.memory_ids:
        tombstone = Memory.objects.get(pk=memory_id)
        assert tombstone.created_at == before[memory_id].created_at
        assert tombstone.forgotten_at and tombstone.forget_request_id == request.id
        assert (tombstone.content, tombstone.metadata, tombstone.embedding) == ("", {}, None)
        events = list(
            MemoryHistory.objects.filter(memory_id=memory_id)
            .order_by("created_at")
            .values_list("event", "actor", "old_content", "new_content", "new_metadata")
        )
        assert events == [
            ("ADD", "agent", None, None, None),
            ("FORGET", "agent", None, None, {"forget_request": str(request.id)}),
        ]
    assert say(http, session, "Where do I live?")["memories"]  # the conversation goes on


def test_a_dry_run_lists_what_would_be_forgotten_and_changes_nothing(agent):
    http, _ = agent
    conversation(http, "U: I have diabetes and high blood pressure.", "U: I love jazz.")
    plan = forget(http, topic="my medical information", dry_run=True)
    assert (plan["id"], plan["dry_run"]) == (None, True)
    assert [m["content"] for m in plan["memories"]] == [
        "User: I have diabetes and high blood pressure."
    ]
    assert ForgetRequest.objects.count() == 0
    assert "User: I have diabetes and high blood pressure." in current_contents()


def test_forgetting_again_forgets_nothing_more(agent):
    http, _ = agent
    conversation(http, "U: I have diabetes.", "U: I love jazz.")
    first = forget(http, topic="my health")
    assert len(first["memories"]) == 1
    again = forget(http, topic="my health")
    assert again["memories"] == [] and again["reason"]["code"] == "nothing_held"
    ids = forget(http, memory_ids=[first["memories"][0]["id"]])
    assert ids["memories"] == [] and ids["reason"]["code"] == "nothing_held"


def test_forget_by_ids_takes_the_older_versions_with_it(agent):
    http, _ = agent
    first = data(
        http.post(
            "/api/v1/memories/",
            {"user_id": USER, "content": "The user's locker is 12", "memory_type": "fact"},
            format="json",
        ),
        201,
    )["memory"]
    newer = data(
        http.post(
            f"/api/v1/memories/{first['id']}/supersede/",
            {"content": "The user's locker is 31"},
            format="json",
        ),
        201,
    )
    outcome = forget(http, memory_ids=[newer["id"]])
    assert {m["id"] for m in outcome["memories"]} == {first["id"], newer["id"]}
    assert text_anywhere("locker is") == []


def test_a_request_naming_nothing_forgets_nothing_and_says_why(agent):
    http, _ = agent
    conversation(http, "U: I love jazz.")
    outcome = forget(http, topic="everything")
    assert outcome["memories"] == [] and outcome["reason"]["code"] == "names_nothing"
    assert "DELETE /api/v1/users/" in outcome["reason"]["message"]
    assert current_contents() == ["The user loves jazz", "User: I love jazz."]
    assert ForgetRequest.objects.get().reason == "names_nothing"  # the request, on record


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "topic"),
        ({"topic": "my address", "memory_ids": []}, "memory_ids"),
        ({"topic": "   "}, "topic"),
        ({"topic": "x" * 501}, "topic"),
        ({"topic": "a\x00b"}, "topic"),
        ({"memory_ids": ["not-a-uuid"]}, "memory_ids"),
        ({"memory_ids": ["00000000-0000-0000-0000-000000000000"] * 1001}, "memory_ids"),
        ({"topic": "my address", "dry_run": "maybe"}, "dry_run"),
        ({"topic": "my address", "user_id": "agent:bob"}, "user_id"),
    ],
)
def test_bad_requests_are_refused_with_the_field_and_change_nothing(agent, body, field):
    http, _ = agent
    conversation(http, f"U: My home address is {ADDRESS}.")
    response = http.post(f"/api/v1/users/{USER}/forget/", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert response.json()["error"]["field"].startswith(field)
    assert ForgetRequest.objects.count() == 0
    assert any(ADDRESS in content for content in current_contents())


def test_another_users_memory_is_not_found_and_another_clients_user_forbidden(agent, make_client):
    http, _ = agent
    other, _ = make_client("other", ["other:"])
    theirs = data(
        other.post(
            "/api/v1/memories/",
            {"user_id": "other:x", "content": "Mine", "memory_type": "fact"},
            format="json",
        ),
        201,
    )["memory"]
    response = http.post(f"/api/v1/users/{USER}/forget/", {"memory_ids": [theirs["id"]]}, "json")
    assert (response.status_code, response.json()["error"]["field"]) == (404, "memory_ids[0]")
    refused = http.post("/api/v1/users/other:x/forget/", {"topic": "everything"}, "json")
    assert refused.status_code == 403
    assert Memory.objects.get(pk=theirs["id"]).forgotten_at is None


def test_the_mcp_tool_is_the_route(agent):
    http, client = agent
    conversation(http, "U: I have asthma.", "U: I love jazz.")
    tool = TOOLS["memory_forget"]
    planned = tool_call(
        tool=tool,
        caller=lambda: client.caller,
        arguments={"user_id": USER, "topic": "my health", "dry_run": True},
    )
    assert json.loads(planned.text) == forget(http, topic="my health", dry_run=True)
    done = json.loads(
        tool_call(
            tool=tool,
            caller=lambda: client.caller,
            arguments={"user_id": USER, "topic": "my health"},
        ).text
    )
    assert done["memories"] and ForgetRequest.objects.get().via == "mcp"
    refused = tool_call(
        tool=tool, caller=lambda: client.caller, arguments={"user_id": USER, "topic": ""}
    )
    assert not refused.ok and json.loads(refused.text)["field"] == "topic"


# --- Every read is silent about it ------------------------------------------------------------


def test_no_read_returns_what_was_forgotten(agent):
    http, _ = agent
    conversation(http, f"U: My home address is {ADDRESS}.", "U: I love jazz.")
    keyed = data(
        http.post(
            "/api/v1/memories/",
            {
                "user_id": USER,
                "content": f"Ship to {ADDRESS}",
                "memory_type": "fact",
                "key": "ship",
            },
            format="json",
        ),
        201,
    )["memory"]
    ids = list(Memory.objects.filter(user_id=USER).values_list("id", flat=True))
    before = (timezone.now() - timedelta(milliseconds=1)).isoformat()
    jazz = Memory.objects.get(user_id=USER, memory_type="fact", content="The user loves jazz")
    MemoryLink.objects.create(user_id=USER, source_id=jazz.id, target_id=keyed["id"], weight=0.5)
    forget(http, topic="my home address")
    forget(http, memory_ids=[keyed["id"]])

    reads = [
        http.post("/api/v1/recall/", {"user_id": USER, "query": "Evergreen Terrace"}, "json"),
        http.post(
            "/api/v1/recall/",
            {"user_id": USER, "query": "Where does the user live?", "as_of": before},
            "json",
        ),
        http.get("/api/v1/search/", {"user_id": USER, "q": "Evergreen"}),
        http.get("/api/v1/memories/", {"user_id": USER, "include_expired": "true"}),
        http.get("/api/v1/memories/", {"user_id": USER, "state": "deleted"}),
        http.get("/api/v1/memories/", {"user_id": USER, "as_of": before}),
        http.get(f"/api/v1/users/{USER}/export/"),
        http.get("/get_memory", {"user_id": USER, "key": "ship"}),
        http.get("/search", {"user_id": USER, "query": "Evergreen"}),
        http.get(f"/api/v1/memories/{jazz.id}/bulk/"),
        http.get(f"/api/v1/memories/{jazz.id}/"),
        *(
            http.get(f"/api/v1/memories/{memory_id}/{what}")
            for memory_id in ids
            for what in ("", "history/", "versions/")
        ),
    ]
    for response in reads:
        assert "evergreen" not in response.content.decode().lower(), response.request["PATH_INFO"]
    forgotten = [m for m in ids if Memory.objects.get(pk=m).forgotten_at]
    for memory_id in forgotten:
        assert http.get(f"/api/v1/memories/{memory_id}/").status_code == 404
        assert http.get(f"/api/v1/memories/{memory_id}/history/").status_code == 404
    export = data(http.get(f"/api/v1/users/{USER}/export/"))
    assert {f["id"] for f in export["forgotten"]} == set(map(str, forgotten))
    assert len(export["forget_requests"]) == 2
    assert data(http.get(f"/api/v1/memories/{jazz.id}/"))["links"] == []
    assert text_anywhere("Evergreen") == []


def test_staff_log_entries_quoting_a_forgotten_memory_are_redacted(agent):
    http, _ = agent
    conversation(http, f"U: My home address is {ADDRESS}.")
    fact = Memory.objects.get(user_id=USER, memory_type="fact")
    staff = get_user_model().objects.create_user("ops", is_staff=True)
    LogEntry.objects.create(
        user=staff,
        content_type=ContentType.objects.get_for_model(Memory),
        object_id=str(fact.id),
        object_repr=str(fact),
        action_flag=CHANGE,
        change_message=f"Superseded: was {ADDRESS}",
    )
    forget(http, topic="my address")
    entry = LogEntry.objects.get()
    assert (entry.object_repr, entry.change_message) == ("(forgotten)", "")


# --- Traits -------------------------------------------------------------------------------------


def test_traits_lose_the_evidence_of_forgotten_memories(agent):
    http, _ = agent
    conversation(http, "U: I go running every morning.", "U: I ran 10k at dawn again.")
    episodes = list(
        Memory.objects.filter(user_id=USER, memory_type="episodic").order_by("created_at")
    )
    trait = data(
        http.post(
            "/api/v1/memories/",
            {
                "user_id": USER,
                "content": "Runs in the morning",
                "memory_type": "trait",
                "metadata": {
                    "trait_subtype": "behavior",
                    "trait_stage": "emerging",
                    "confidence": 0.52,
                    "reinforcement_count": 2,
                },
            },
            format="json",
        ),
        201,
    )["memory"]
    for episode in episodes:
        TraitEvidence.objects.create(
            trait_id=trait["id"],
            memory_id=episode.id,
            evidence_type=EvidenceType.SUPPORTING,
            quality="B",
        )
    first = forget(http, memory_ids=[episodes[0].id])
    assert first["traits_reweighed"] == [trait["id"]]
    reweighed = Memory.objects.get(pk=trait["id"])
    # One reinforcement of quality B undone: (0.52 − 0.2) / (1 − 0.2) = 0.4.
    assert reweighed.trait_confidence == pytest.approx(0.4)
    assert (reweighed.trait_stage, reweighed.trait_reinforcement_count) == ("emerging", 1)
    second = forget(http, memory_ids=[episodes[1].id])
    assert second["traits_dissolved"] == [trait["id"]]
    assert Memory.objects.get(pk=trait["id"]).trait_stage == "dissolved"
    assert not TraitEvidence.objects.exists()
