"""The memory endpoints of API.md, through HTTP, against the real database."""

import pytest
from django.conf import settings

from memories.models import Memory, MemoryHistory
from memories.services import memories_embed

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(make_client):
    return make_client("agent", ["agent:"])[0]


def post(http, body, path="/api/v1/memories/"):
    return http.post(path, body, format="json")


def test_write_then_read_a_memory(agent):
    created = post(
        agent,
        {
            "user_id": "agent:1",
            "content": "I like green tea",
            "memory_type": "fact",
            "importance": 0.7,
        },
    )
    assert created.status_code == 201
    data = created.json()["data"]
    assert data["operation"] == "ADD"
    memory = data["memory"]
    assert (memory["content"], memory["importance"], memory["state"], memory["version"]) == (
        "I like green tea",
        0.7,
        "cold",
        1,
    )
    assert memory["embedding_status"] == "pending" and "embedding" not in memory
    fetched = agent.get(f"/api/v1/memories/{memory['id']}/").json()["data"]
    assert fetched["id"] == memory["id"]
    memories_embed(memory_ids=[memory["id"]])  # the worker's job (see test_embedding_worker)
    with_vector = agent.get(f"/api/v1/memories/{memory['id']}/?include=embedding").json()["data"]
    assert len(with_vector["embedding"]) == settings.EMBEDDING_DIM


def test_same_write_twice_is_noop_200(agent):
    body = {"user_id": "agent:1", "content": "same", "memory_type": "fact"}
    first = post(agent, body).json()["data"]["memory"]["id"]
    second = post(agent, body)
    assert second.status_code == 200
    assert second.json()["data"]["operation"] == "NOOP"
    assert second.json()["data"]["memory"]["id"] == first


def test_near_duplicate_answers_update_with_the_superseded_id(agent):
    first = post(
        agent,
        {
            "user_id": "agent:1",
            "content": "User works at Acme Corporation in Berlin",
            "memory_type": "fact",
        },
    ).json()["data"]["memory"]["id"]
    response = post(
        agent,
        {
            "user_id": "agent:1",
            "content": "User works at Acme Corporation in Berlin!",
            "memory_type": "fact",
        },
    )
    assert response.status_code == 201
    assert response.json()["data"]["operation"] == "UPDATE"
    assert response.json()["data"]["superseded"] == first


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": "x", "memory_type": "fact"}, "user_id"),
        ({"user_id": "agent:1", "memory_type": "fact"}, "content"),
        ({"user_id": "agent:1", "content": "x", "memory_type": "note"}, "memory_type"),
        ({"user_id": "agent:1", "content": "x", "memory_type": "fact", "domain": "d"}, "domain"),
        ({"user_id": "agent:1", "content": "x", "memory_type": "fact", "type": "t"}, "type"),
        (
            {"user_id": "agent:1", "content": "x", "memory_type": "fact", "importance": 2},
            "importance",
        ),
        (
            {"user_id": "agent:1", "content": "x", "memory_type": "fact", "embedding": [0.1] * 3},
            "embedding",
        ),
        ({"user_id": "agent:1", "content": "x" * 10_001, "memory_type": "fact"}, "content"),
        ({"user_id": "agent:1", "content": "   ", "memory_type": "fact"}, "content"),
        (
            {"user_id": "agent:1", "content": "x", "memory_type": "fact", "metadata": [1]},
            "metadata",
        ),
        (
            {
                "user_id": "agent:1",
                "content": "x",
                "memory_type": "trait",
                "metadata": {"trait_stage": "famous"},
            },
            "metadata.trait_stage",
        ),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(agent, body, field):
    response = post(agent, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("VALIDATION_ERROR", field)
    assert Memory.objects.count() == 0
    assert MemoryHistory.objects.count() == 0


def test_writing_outside_the_prefix_is_forbidden(agent):
    response = post(agent, {"user_id": "other:1", "content": "x", "memory_type": "fact"})
    assert response.status_code == 403
    assert Memory.objects.count() == 0


def test_another_clients_memory_is_not_found(agent, make_client):
    other, _ = make_client("other", ["other:"])
    memory = post(other, {"user_id": "other:1", "content": "secret", "memory_type": "fact"})
    memory_id = memory.json()["data"]["memory"]["id"]
    for response in (
        agent.get(f"/api/v1/memories/{memory_id}/"),
        agent.delete(f"/api/v1/memories/{memory_id}/"),
        agent.get(f"/api/v1/memories/{memory_id}/history/"),
    ):
        assert response.status_code == 404
    assert agent.get("/api/v1/memories/?user_id=other:1").status_code == 404


def test_batch_reports_bad_items_by_index_and_keeps_the_rest(agent):
    items = [
        {"user_id": "agent:1", "content": "one", "memory_type": "fact"},
        {"user_id": "agent:1", "content": "two", "memory_type": "fact", "domain": "x"},
        {"user_id": "other:1", "content": "three", "memory_type": "fact"},
        {
            "user_id": "agent:1",
            "content": "four",
            "memory_type": "trait",
            "metadata": {"confidence": "high"},
        },
        {"user_id": "agent:1", "content": "one", "memory_type": "fact"},
    ]
    response = post(agent, {"items": items}, "/api/v1/memories/batch/")
    assert response.status_code == 200
    results = response.json()["data"]["results"]
    assert [r["index"] for r in results] == [0, 1, 2, 3, 4]
    assert [r["ok"] for r in results] == [True, False, False, False, True]
    assert results[1]["error"]["field"] == "domain"
    assert results[2]["error"]["code"] == "FORBIDDEN"
    assert results[3]["error"]["field"] == "metadata.confidence"
    assert [results[0]["operation"], results[4]["operation"]] == ["ADD", "NOOP"]
    assert Memory.objects.count() == 1


def test_batch_limits(agent):
    too_many = [
        {"user_id": "agent:1", "content": f"m{i}", "memory_type": "fact"} for i in range(1001)
    ]
    response = post(agent, {"items": too_many}, "/api/v1/memories/batch/")
    assert (response.status_code, response.json()["error"]["field"]) == (400, "items")
    assert Memory.objects.count() == 0


def test_patch_needs_the_current_version(agent):
    memory = post(agent, {"user_id": "agent:1", "content": "x", "memory_type": "fact"}).json()[
        "data"
    ]["memory"]
    path = f"/api/v1/memories/{memory['id']}/"
    missing = agent.patch(path, {"importance": 0.9}, format="json")
    assert missing.status_code == 400
    assert (missing.json()["error"]["code"], missing.json()["error"]["field"]) == (
        "VALIDATION_ERROR",
        "version",
    )
    ok = agent.patch(path, {"version": 1, "importance": 0.9}, format="json")
    assert ok.status_code == 200
    assert (ok.json()["data"]["version"], ok.json()["data"]["importance"]) == (2, 0.9)
    stale = agent.patch(path, {"version": 1, "importance": 0.1}, format="json")
    assert stale.status_code == 409
    body = stale.json()
    assert body["ok"] is False
    assert set(body["error"]) == {"code", "message", "field", "current_version"}
    assert (
        body["error"]["code"],
        body["error"]["field"],
        body["error"]["current_version"],
    ) == ("CONFLICT", "version", 2)
    assert "read it again" in body["error"]["message"]
    # The stale write changed nothing: the row, and what a read answers, keep the first PATCH.
    row = Memory.objects.filter(pk=memory["id"]).values("version", "importance").get()
    assert (row["version"], row["importance"]) == (2, pytest.approx(0.9))
    current = agent.get(path).json()["data"]
    assert (current["version"], current["importance"]) == (2, 0.9)


@pytest.mark.parametrize(
    "body",
    [{}, {"importance": 0.5}, {"content": "x"}, {"metadata": {"a": 1}}, {"memory_type": "fact"}],
)
def test_a_patch_that_changes_nothing_keeps_the_version_and_writes_no_history(agent, body):
    memory = post(
        agent,
        {"user_id": "agent:1", "content": "x", "memory_type": "fact", "importance": 0.5}
        | {"metadata": {"a": 1}},
    ).json()["data"]["memory"]
    path = f"/api/v1/memories/{memory['id']}/"
    same = agent.patch(path, {"version": 1, **body}, format="json")
    assert (same.status_code, same.json()["data"]["version"]) == (200, 1)
    assert MemoryHistory.objects.filter(memory_id=memory["id"]).count() == 1  # its ADD
    # ... and another client's edit made against the version it read still applies.
    assert agent.patch(path, {"version": 1, "importance": 0.9}, format="json").status_code == 200
    # Nothing to change at a version no longer current is still a conflict.
    assert agent.patch(path, {"version": 1, **body}, format="json").status_code == 409


@pytest.mark.parametrize("route", ["patch", "supersede"])
def test_an_edit_to_content_another_current_memory_holds_is_a_conflict(agent, route):
    first, second = (
        post(agent, {"user_id": "agent:1", "content": text, "memory_type": "fact"}).json()["data"][
            "memory"
        ]
        for text in ("Likes tea", "Likes coffee")
    )
    path = f"/api/v1/memories/{first['id']}/"
    body = {"version": 1, "content": "Likes coffee"}
    if route == "patch":
        response = agent.patch(path, body, format="json")
    else:
        response = agent.post(f"{path}supersede/", body, format="json")
    assert response.status_code == 409, response.json()
    error = response.json()["error"]
    assert (error["field"], error["memory_id"]) == ("content", second["id"])
    current = Memory.objects.current().filter(user_id="agent:1")
    assert sorted(current.values_list("content", "version")) == [
        ("Likes coffee", 1),
        ("Likes tea", 1),
    ]


def test_patch_content_supersede_versions_and_history(agent):
    memory = post(
        agent,
        {
            "user_id": "agent:1",
            "content": "deadline is March 1",
            "memory_type": "fact",
            "importance": 0.75,
            "metadata": {"project": "apollo"},
        },
    ).json()["data"]["memory"]
    newer = agent.patch(
        f"/api/v1/memories/{memory['id']}/",
        {"version": 1, "content": "deadline is April 1"},
        format="json",
    )
    assert newer.status_code == 200
    middle_id = newer.json()["data"]["id"]
    newest = post(
        agent, {"content": "deadline is May 1"}, f"/api/v1/memories/{middle_id}/supersede/"
    )
    assert newest.status_code == 201
    newest_id = newest.json()["data"]["id"]
    assert len({memory["id"], middle_id, newest_id}) == 3

    # The rows as stored: each version points at the next and keeps its version number (the
    # next carries n + 1); only the last is current.
    rows = {
        str(row["id"]): row
        for row in Memory.objects.filter(user_id="agent:1").values(
            "id", "content", "version", "superseded_by", "expired_at", "created_at"
        )
    }
    assert set(rows) == {memory["id"], middle_id, newest_id}
    chain = [rows[memory["id"]], rows[middle_id], rows[newest_id]]
    assert [
        (r["content"], r["version"], r["superseded_by"] and str(r["superseded_by"])) for r in chain
    ] == [
        ("deadline is March 1", 1, middle_id),
        ("deadline is April 1", 2, newest_id),
        ("deadline is May 1", 3, None),
    ]
    assert chain[0]["expired_at"] is not None and chain[1]["expired_at"] is not None
    assert chain[2]["expired_at"] is None
    assert chain[1]["created_at"] <= chain[0]["expired_at"] <= chain[1]["expired_at"]
    assert chain[2]["created_at"] <= chain[1]["expired_at"]

    # The versions endpoint answers the same chain, from any of its members.
    for member in (memory["id"], middle_id, newest_id):
        versions = agent.get(f"/api/v1/memories/{member}/versions/").json()["data"]
        assert [v["id"] for v in versions] == [memory["id"], middle_id, newest_id]
    first, middle, last = versions
    assert [(v["content"], v["version"], v["superseded_by"], v["state"]) for v in versions] == [
        ("deadline is March 1", 1, middle_id, "deleted"),
        ("deadline is April 1", 2, newest_id, "deleted"),
        ("deadline is May 1", 3, None, "cold"),
    ]
    # The middle version, field by field: its own content and hash, the first version's
    # importance and metadata, expired when the last one was written.
    assert middle["user_id"] == "agent:1" and middle["memory_type"] == "fact"
    assert middle["content_hash"] == "745ebea394139c54f2e4bbf8673eeb2f"
    assert (middle["importance"], middle["metadata"]) == (0.75, {"project": "apollo"})
    assert middle["expired_at"] is not None and first["expired_at"] is not None
    assert last["expired_at"] is None and last["importance"] == 0.75

    events = agent.get(f"/api/v1/memories/{memory['id']}/history/").json()["data"]
    assert [(e["event"], e["actor"]) for e in events] == [("ADD", "agent"), ("SUPERSEDE", "agent")]
    events = agent.get(f"/api/v1/memories/{middle_id}/history/").json()["data"]
    assert [(e["event"], e["actor"], e["new_content"]) for e in events] == [
        ("ADD", "agent", "deadline is April 1"),
        ("SUPERSEDE", "agent", "deadline is April 1"),
    ]
    events = agent.get(f"/api/v1/memories/{newest_id}/history/").json()["data"]
    assert [(e["event"], e["actor"]) for e in events] == [("ADD", "agent")]


def test_delete_and_invalidate(agent):
    first = post(agent, {"user_id": "agent:1", "content": "a", "memory_type": "fact"}).json()[
        "data"
    ]["memory"]["id"]
    second = post(agent, {"user_id": "agent:1", "content": "b", "memory_type": "fact"}).json()[
        "data"
    ]["memory"]["id"]
    deleted = agent.delete(f"/api/v1/memories/{first}/").json()["data"]
    assert (deleted["state"], deleted["expired_at"] is not None) == ("deleted", True)
    invalid = post(
        agent, {"invalid_at": "2025-01-01T00:00:00Z"}, f"/api/v1/memories/{second}/invalidate/"
    ).json()["data"]
    assert invalid["invalid_at"].startswith("2025-01-01")
    listed = agent.get("/api/v1/memories/?user_id=agent:1").json()["data"]
    assert listed == []
    everything = agent.get("/api/v1/memories/?user_id=agent:1&include_expired=true").json()["data"]
    assert {m["id"] for m in everything} == {first, second}


def test_list_filters_sort_and_paging(agent):
    for n in range(5):
        post(
            agent,
            {
                "user_id": "agent:1",
                "content": f"memory number {n} about topic {n * 7}",
                "memory_type": "fact" if n % 2 else "episodic",
                "importance": n / 10,
            },
        )
    facts = agent.get("/api/v1/memories/?user_id=agent:1&memory_type=fact").json()["data"]
    assert len(facts) == 2
    ordered = agent.get(
        "/api/v1/memories/?user_id=agent:1&sort_by=importance&sort_order=asc&limit=2"
    ).json()
    assert [m["importance"] for m in ordered["data"]] == pytest.approx([0.0, 0.1])
    following = agent.get(
        f"/api/v1/memories/?user_id=agent:1&sort_by=importance&sort_order=asc"
        f"&limit=2&cursor={ordered['page']['next']}"
    ).json()
    assert [m["importance"] for m in following["data"]] == pytest.approx([0.2, 0.3])
    bad = agent.get("/api/v1/memories/?user_id=agent:1&state=sleepy").json()["error"]
    assert bad["field"] == "state"
    assert agent.get("/api/v1/memories/").json()["error"]["field"] == "user_id"


def test_as_of_lists_what_was_true_then(agent):
    old = post(
        agent,
        {
            "user_id": "agent:1",
            "content": "lives in Berlin",
            "memory_type": "fact",
            "valid_at": "2020-01-01T00:00:00Z",
        },
    ).json()["data"]["memory"]
    Memory.objects.filter(pk=old["id"]).update(created_at="2020-01-01T00:00:00Z")
    post(agent, {"invalid_at": "2024-01-01T00:00:00Z"}, f"/api/v1/memories/{old['id']}/invalidate/")
    then = agent.get("/api/v1/memories/?user_id=agent:1&as_of=2022-06-01T00:00:00Z").json()
    assert [m["content"] for m in then["data"]] == ["lives in Berlin"]
    now = agent.get("/api/v1/memories/?user_id=agent:1").json()["data"]
    assert now == []


def test_trait_fields_fall_back_to_metadata(agent):
    memory = post(
        agent,
        {
            "user_id": "agent:1",
            "content": "prefers mornings",
            "memory_type": "trait",
            "metadata": {"trait_subtype": "preference", "confidence": 0.7},
        },
    ).json()["data"]["memory"]
    assert memory["trait"]["subtype"] == "preference"
    assert memory["trait"]["confidence"] == pytest.approx(0.7)
    # A V1 row whose trait fields live only in metadata (TC-R01–R03).
    Memory.objects.filter(pk=memory["id"]).update(
        trait_subtype=None, metadata={"trait_subtype": "behavior", "context": "work"}
    )
    trait = agent.get(f"/api/v1/memories/{memory['id']}/").json()["data"]["trait"]
    assert (trait["subtype"], trait["context"]) == ("behavior", "work")


def test_output_serializers_build_fields_once_and_each_binds_its_own_copy(db):
    from rest_framework import serializers

    from memories.api.serializers.memories import MemoryOutput, RedactionsField

    class PlainMemoryOutput(serializers.ModelSerializer):
        state = serializers.SerializerMethodField()
        trait = serializers.SerializerMethodField()
        redactions = RedactionsField()
        get_state = MemoryOutput.get_state
        get_trait = MemoryOutput.get_trait

        class Meta(MemoryOutput.Meta):
            pass

    memory = Memory.objects.create(
        user_id="agent1:alice", memory_type="fact", content="likes tea", content_hash="h"
    )
    first, second = MemoryOutput(memory), MemoryOutput(memory)
    assert first.data == second.data == PlainMemoryOutput(memory).data
    for name, field in first.fields.items():
        assert field is not second.fields[name]
        assert field.parent is first and second.fields[name].parent is second


def test_content_sent_again_with_its_secret_is_no_new_version(agent):
    said = "The user's wifi password is Lz8Kq2Wv9"
    memory = post(agent, {"user_id": "agent:1", "content": said, "memory_type": "fact"}).json()
    memory = memory["data"]["memory"]
    assert "Lz8Kq2Wv9" not in memory["content"]
    path = f"/api/v1/memories/{memory['id']}/"
    again = agent.patch(path, {"version": 1, "content": said}, format="json")
    assert (again.status_code, again.json()["data"]["version"]) == (200, 1)
    assert Memory.objects.filter(user_id="agent:1").count() == 1
