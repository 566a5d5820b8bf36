"""The memory graph under the user's data rights: the export holds it (seed 001 C08), the purge
deletes it (only that user's), a forget deletes what the forgotten memories said; and its edges
are append-only: a value is never rewritten, an edge is only closed."""

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.db import DatabaseError, transaction

from core.access import SYSTEM
from memories.graph.models import EntityKind, GraphEdge, GraphNode
from memories.models import Memory
from memories.services import MemoryInput, memory_add
from memories.services.forgetting import graph_forget
from tests.memories.graph_rows import edge, node

pytestmark = pytest.mark.django_db

T1 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
T2 = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)


def remember(user_id: str, content: str, memory_type: str = "fact") -> Memory:
    return memory_add(
        item=MemoryInput(user_id=user_id, content=content, memory_type=memory_type),
        caller=SYSTEM,
    ).memory


def populate(user_id: str) -> dict:
    """The same graph for every user, so only ids tell the rows apart: the user moved from
    Austin to Denver; their brother Mark is a lawyer."""
    austin = remember(user_id, "Moved to Austin, Texas in March")
    denver = remember(user_id, "All settled in Denver by June, near the mountains")
    said = remember(user_id, "User: I'm all settled in Denver now.", "episodic")
    mark = remember(user_id, "Older brother Mark practises law in New York")
    me = node(user_id, at=T1)
    brother = node(user_id, EntityKind.PERSON, "Mark", "brother", at=T2)
    old = edge(me, "lives in", "Austin", memories=[austin], at=T1)
    GraphEdge.objects.filter(pk=old.pk).update(invalid_at=T2, expired_at=T2)
    new = edge(me, "lives in", "Denver", memories=[denver, said], at=T2)
    sibling = edge(me, "brother", object_node=brother, single=False, memories=[mark], at=T1)
    job = edge(brother, "job", "lawyer", memories=[mark], at=T1)
    return {
        "memories": {"austin": austin, "denver": denver, "said": said, "mark": mark},
        "nodes": {"me": me, "mark": brother},
        "edges": {"austin": old, "denver": new, "brother": sibling, "job": job},
    }


@pytest.fixture
def agent(make_client):
    return make_client("agent", ["agent:"])[0]


def data(response):
    assert response.status_code == 200, response.json()
    return response.json()["data"]


# --- Export ---------------------------------------------------------------------------------


def test_the_export_holds_the_users_entities_and_edges(agent):
    held = populate("agent:1")
    populate("agent:10")  # a user_id that starts like the first one
    export = data(agent.get("/api/v1/users/agent:1/export/"))
    me, mark = held["nodes"]["me"], held["nodes"]["mark"]
    assert [(e["id"], e["kind"], e["name"], e["role"]) for e in export["entities"]] == [
        (str(me.id), "user", "", ""),
        (str(mark.id), "person", "Mark", "brother"),
    ]
    edges = {e["id"]: e for e in export["edges"]}
    assert set(edges) == {str(e.id) for e in held["edges"].values()}
    austin = edges[str(held["edges"]["austin"].id)]
    assert austin == {
        "id": str(held["edges"]["austin"].id),
        "subject_id": str(me.id),
        "relation": "lives in",
        "object_node_id": None,
        "object_value": "Austin",
        "single": True,
        "valid_at": "2025-03-01T09:00:00Z",
        "invalid_at": "2025-06-01T09:00:00Z",
        "created_at": "2025-03-01T09:00:00Z",
        "expired_at": "2025-06-01T09:00:00Z",
        "memory_ids": [str(held["memories"]["austin"].id)],
        "actor": "system",
    }
    brother = edges[str(held["edges"]["brother"].id)]
    assert (brother["object_node_id"], brother["object_value"]) == (str(mark.id), "")


# --- Purge ----------------------------------------------------------------------------------


def test_the_purge_deletes_the_users_graph_and_no_other(agent):
    populate("agent:1")
    populate("agent:10")
    populate("agent:2")
    deleted = data(agent.delete("/api/v1/users/agent:1/"))["deleted"]
    assert (deleted["graph_edges"], deleted["graph_nodes"]) == (4, 2)
    assert not GraphEdge.objects.filter(user_id="agent:1").exists()
    assert not GraphNode.objects.filter(user_id="agent:1").exists()
    for survivor in ("agent:10", "agent:2"):
        assert GraphEdge.objects.filter(user_id=survivor).count() == 4
        assert GraphNode.objects.filter(user_id=survivor).count() == 2
    # Only the purge lifts the protection.
    with (
        pytest.raises(DatabaseError, match="Cannot delete rows from graph_edges"),
        transaction.atomic(),
    ):
        GraphEdge.objects.filter(user_id="agent:2").delete()


# --- Forget ---------------------------------------------------------------------------------


def test_forgetting_memories_deletes_the_edges_they_alone_stated(agent):
    held = populate("agent:1")
    other = populate("agent:2")
    memories, edges, nodes = held["memories"], held["edges"], held["nodes"]
    forgotten = [memories["austin"].id, memories["denver"].id, memories["mark"].id]
    answer = data(
        agent.post(
            "/api/v1/users/agent:1/forget/",
            {"memory_ids": [str(memory_id) for memory_id in forgotten]},
            format="json",
        )
    )
    assert {memory["id"] for memory in answer["memories"]} == {str(m) for m in forgotten}
    # Austin and Mark's edges were stated by forgotten memories alone: gone. Denver is still
    # stated by the episode: it stays, without the forgotten fact.
    left = GraphEdge.objects.filter(user_id="agent:1")
    assert list(left.values_list("id", "memory_ids")) == [
        (edges["denver"].id, [memories["said"].id])
    ]
    # Mark has no edge left: gone; the user's own entity stays.
    assert list(GraphNode.objects.filter(user_id="agent:1").values_list("id", flat=True)) == [
        nodes["me"].id
    ]
    # Nothing of another user's graph moved.
    assert GraphEdge.objects.filter(user_id="agent:2").count() == 4
    assert GraphEdge.objects.get(pk=other["edges"]["denver"].pk).memory_ids == [
        other["memories"]["denver"].id,
        other["memories"]["said"].id,
    ]
    export = data(agent.get("/api/v1/users/agent:1/export/"))
    assert [e["object_value"] for e in export["edges"]] == ["Denver"]


def test_an_entity_a_memory_left_is_about_stays_without_edges(agent):
    held = populate("agent:1")
    Memory.objects.create(  # not through the write path, which might take it for a version
        user_id="agent:1",
        memory_type="fact",
        content="Visits the user every Christmas",  # naming Mark, it would be forgotten too
        subject_entity_id=held["nodes"]["mark"].id,
    )
    data(
        agent.post(
            "/api/v1/users/agent:1/forget/",
            {"memory_ids": [str(held["memories"]["mark"].id)]},
            format="json",
        )
    )
    assert not GraphEdge.objects.filter(subject=held["nodes"]["mark"]).exists()
    assert GraphNode.objects.filter(pk=held["nodes"]["mark"].pk).exists()


def test_a_memory_erased_in_part_still_states_what_it_still_says():
    held = populate("agent:1")
    said, denver = held["memories"]["said"], held["memories"]["denver"]
    graph_forget(user_id="agent:1", whole=[], part={said.id: "User: I'm all settled in Denver."})
    assert GraphEdge.objects.get(pk=held["edges"]["denver"].pk).memory_ids == [denver.id, said.id]
    graph_forget(user_id="agent:1", whole=[], part={said.id: "User: I'm all settled [forgotten]."})
    assert GraphEdge.objects.get(pk=held["edges"]["denver"].pk).memory_ids == [denver.id]
    graph_forget(user_id="agent:1", whole=[denver.id], part={})
    assert not GraphEdge.objects.filter(pk=held["edges"]["denver"].pk).exists()
    # Unrelated ids change nothing.
    graph_forget(user_id="agent:1", whole=[uuid.uuid4()], part={})
    assert GraphEdge.objects.filter(user_id="agent:1").count() == 3


def converse(agent, user_id: str, turns: list[str]) -> None:
    session = data_created(agent.post("/api/v1/sessions/", {"user_id": user_id}, format="json"))
    for minute, content in enumerate(turns):
        sent_at = (T1 + timedelta(minutes=minute)).isoformat()
        data_created(
            agent.post(
                f"/api/v1/sessions/{session['id']}/messages/",
                {"role": "user", "content": content, "sent_at": sent_at},
                format="json",
            )
        )


def data_created(response):
    assert response.status_code == 201, response.json()
    return response.json()["data"]


def forget_mentions(agent, user_id: str, word: str) -> None:
    saying = Memory.objects.filter(user_id=user_id, content__contains=word)
    ids = [str(memory_id) for memory_id in saying.values_list("id", flat=True)]
    assert ids
    data(agent.post(f"/api/v1/users/{user_id}/forget/", {"memory_ids": ids}, format="json"))


def graph_words(user_id: str) -> str:
    nodes = GraphNode.objects.filter(user_id=user_id).values_list("name", "role", "aliases")
    edges = GraphEdge.objects.filter(user_id=user_id).values_list("relation", "object_value")
    return repr([*nodes, *edges])


def test_forgetting_what_named_an_entity_takes_the_name_back_to_its_role(agent):
    converse(agent, "agent:1", ["My wife loves hiking.", "My wife Ana is a teacher."])
    assert "Ana" in graph_words("agent:1")
    forget_mentions(agent, "agent:1", "Ana")
    wife = GraphNode.objects.get(user_id="agent:1", role="wife")
    assert (wife.name, wife.aliases) == ("", [])
    assert "Ana" not in graph_words("agent:1")
    for route in ("export", "prompt-context", "entities"):
        answer = data(agent.get(f"/api/v1/users/agent:1/{route}/"))
        assert "Ana" not in json.dumps(answer), route


def test_forgetting_a_new_name_takes_the_alias_away_and_keeps_the_first(agent):
    converse(agent, "agent:1", ["We have a cat called Pickle.", "Pickle got renamed to Captain."])
    assert "Captain" in graph_words("agent:1")
    forget_mentions(agent, "agent:1", "Captain")
    assert "Captain" not in graph_words("agent:1")
    assert GraphNode.objects.filter(user_id="agent:1", name="Pickle").exists()
    entities = data(agent.get("/api/v1/users/agent:1/entities/"))
    assert "Captain" not in json.dumps(entities)


def test_forgetting_the_first_name_leaves_the_entity_known_by_its_new_one():
    # Rows as a forget leaves them: the memory naming Pickle erased, one naming Captain kept.
    named = remember("agent:1", "The user has a cat called Pickle")
    age = remember("agent:1", "Captain is three years old")
    cat = GraphNode.objects.create(
        user_id="agent:1", kind=EntityKind.PET, name="Pickle", role="cat", aliases=["Captain"]
    )
    me = node("agent:1", at=T1)
    edge(me, "pet", object_node=cat, single=False, memories=[named], at=T1)
    edge(cat, "age", "3", memories=[age], at=T1)
    Memory.objects.filter(pk=named.pk).update(content="", forgotten_at=T2)
    graph_forget(user_id="agent:1", whole=[named.id], part={})
    cat.refresh_from_db()
    assert (cat.name, cat.aliases) == ("Captain", [])


def test_an_entity_left_with_neither_name_nor_role_is_deleted_with_its_edges():
    named = remember("agent:1", "Moved to Springfield last year")
    place = node("agent:1", EntityKind.PLACE, "Springfield", at=T1)
    kept = remember("agent:1", "It rains a lot there")
    edge(node("agent:1", at=T1), "lives in", object_node=place, memories=[named], at=T1)
    edge(place, "weather", "rainy", memories=[kept], at=T1)
    Memory.objects.filter(pk=named.pk).update(content="", forgotten_at=T2)
    graph_forget(user_id="agent:1", whole=[named.id], part={})
    assert not GraphNode.objects.filter(pk=place.pk).exists()
    assert not GraphEdge.objects.filter(user_id="agent:1").exists()
    assert GraphNode.objects.filter(user_id="agent:1", kind=EntityKind.USER).exists()


# --- Append-only ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"object_value": "Dallas"},
        {"relation": "works_in"},
        {"valid_at": T2},
        {"created_at": T2},
        {"single": False},
        {"user_id": "agent:2"},
    ],
)
def test_an_edges_value_and_time_are_never_rewritten(change):
    austin = populate("agent:1")["edges"]["austin"]
    with (
        pytest.raises(DatabaseError, match="Cannot update rows from graph_edges"),
        transaction.atomic(),
    ):
        GraphEdge.objects.filter(pk=austin.pk).update(**change)
    assert GraphEdge.objects.get(pk=austin.pk).object_value == "Austin"


def test_an_edge_is_closed_and_its_memories_change_in_place():
    held = populate("agent:1")
    denver = held["edges"]["denver"]
    closed = datetime(2025, 9, 1, tzinfo=UTC)
    GraphEdge.objects.filter(pk=denver.pk).update(
        invalid_at=closed, expired_at=closed, memory_ids=[held["memories"]["said"].id]
    )
    row = GraphEdge.objects.get(pk=denver.pk)
    assert (row.object_value, row.invalid_at, row.expired_at) == ("Denver", closed, closed)
    assert row.memory_ids == [held["memories"]["said"].id]
