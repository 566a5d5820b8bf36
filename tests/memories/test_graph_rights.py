"""The memory graph under the user's data rights: the export holds it (seed 001 C08), the purge
deletes it (only that user's), a forget deletes what the forgotten memories said; and its edges
are append-only: a value is never rewritten, an edge is only closed."""

import uuid
from datetime import UTC, datetime

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
