"""Reading the memory graph: an end user's entities (a page) and one entity with its edges,
current and past, now or as NeuroMem knew them at `as_of`; another client's user or another
user's entity is NOT_FOUND."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from memories.graph.models import EntityKind, GraphEdge, GraphNode
from tests.memories.graph_rows import edge, node

pytestmark = pytest.mark.django_db

USER = "a:ana"
T1 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)  # "I live in Austin. My brother Mark is a lawyer."
T2 = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)  # "I'm all settled in Denver now."


@pytest.fixture
def graph() -> dict:
    """Ana lived in Austin from T1, in Denver from T2 (the Austin edge closed at T2); her
    brother Mark, a lawyer, known since T1."""
    said = [uuid.uuid4() for _ in range(3)]
    ana = node(USER, EntityKind.USER, at=T1)
    austin = edge(ana, "lives in", "Austin", at=T1, memory_ids=[said[0]])
    later = T1 + timedelta(seconds=1)  # the next message
    mark = node(USER, EntityKind.PERSON, "Mark", "brother", at=later)
    brother = edge(ana, "brother", at=later, object_node=mark, single=False, memory_ids=[said[1]])
    job = edge(mark, "job", "lawyer", at=later, memory_ids=[said[1]])
    denver = edge(ana, "lives in", "Denver", at=T2, memory_ids=[said[2]])
    GraphEdge.objects.filter(pk=austin.pk).update(invalid_at=T2, expired_at=T2)
    return {
        "ana": ana,
        "mark": mark,
        "austin": austin,
        "brother": brother,
        "job": job,
        "denver": denver,
        "said": said,
    }


@pytest.fixture
def agent(make_client):
    return make_client("a", ["a:"])[0]


def entities_url(user_id: str = USER) -> str:
    return f"/api/v1/users/{user_id}/entities/"


def entity_url(entity_id, user_id: str = USER) -> str:
    return f"/api/v1/users/{user_id}/entities/{entity_id}/"


def data(response):
    assert response.status_code == 200, response.json()
    return response.json()["data"]


def error(response, status: int) -> dict:
    assert response.status_code == status, response.json()
    body = response.json()
    assert body["ok"] is False
    return body["error"]


def ref(entity: GraphNode) -> dict:
    return {"id": str(entity.id), "kind": entity.kind, "name": entity.name, "role": entity.role}


def edge_data(graph_edge: GraphEdge, obj, *, ended: datetime | None = None) -> dict:
    return {
        "id": str(graph_edge.id),
        "subject": ref(graph_edge.subject),
        "relation": graph_edge.relation,
        "object": obj,
        "valid_at": graph_edge.valid_at.isoformat().replace("+00:00", "Z"),
        "invalid_at": ended and ended.isoformat().replace("+00:00", "Z"),
        "expired_at": ended and ended.isoformat().replace("+00:00", "Z"),
        "memory_ids": [str(memory_id) for memory_id in graph_edge.memory_ids],
    }


# --- The list -------------------------------------------------------------------------------


def test_the_list_answers_the_users_entities_in_the_order_they_became_known(agent, graph):
    body = agent.get(entities_url()).json()
    assert body["ok"] is True and body["page"] == {"next": None}
    assert body["data"] == [
        {
            "id": str(graph["ana"].id),
            "kind": "user",
            "name": "",
            "role": "",
            "aliases": [],
            "created_at": "2025-03-01T09:00:00Z",
        },
        {
            "id": str(graph["mark"].id),
            "kind": "person",
            "name": "Mark",
            "role": "brother",
            "aliases": [],
            "created_at": "2025-03-01T09:00:01Z",
        },
    ]


def test_the_list_as_of_holds_the_entities_known_then(agent, graph):
    def names(as_of: datetime) -> list[str]:
        return [e["kind"] for e in data(agent.get(entities_url(), {"as_of": as_of.isoformat()}))]

    assert names(T1 - timedelta(days=1)) == []
    assert names(T1) == ["user"]
    assert names(T2) == ["user", "person"]
    # One entity as of an instant before it was recorded is as absent as from the list.
    mark = entity_url(graph["mark"].id)
    assert agent.get(mark, {"as_of": T1.isoformat()}).status_code == 404
    assert agent.get(mark, {"as_of": T2.isoformat()}).status_code == 200


def test_the_list_pages_with_the_cursor_it_gives(agent, graph):
    ana = graph["ana"]
    for n in range(5):
        node(USER, EntityKind.PET, f"Pet {n}", at=T2 + timedelta(minutes=n))
    seen, cursor = [], None
    while True:
        query = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        body = agent.get(entities_url(), query).json()
        assert len(body["data"]) <= 3
        seen += [entity["name"] for entity in body["data"]]
        cursor = body["page"]["next"]
        if cursor is None:
            break
    assert seen == ["", "Mark", *(f"Pet {n}" for n in range(5))]
    assert data(agent.get(entities_url(), {"limit": 1}))[0]["id"] == str(ana.id)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"as_of": "yesterday"}, "as_of"),
        ({"as_of": ""}, "as_of"),
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"user_id": "a:other"}, "user_id"),  # the query string's user differs from the path's
    ],
)
def test_bad_list_parameters_are_validation_errors_on_their_field(agent, graph, query, field):
    found = error(agent.get(entities_url(), query), 400)
    assert (found["code"], found["field"]) == ("VALIDATION_ERROR", field)


def test_a_user_with_no_graph_has_no_entities(agent, graph):
    assert data(agent.get(entities_url("a:nobody"))) == []


# --- One entity -----------------------------------------------------------------------------


def test_an_entity_answers_its_edges_current_and_past_outgoing_and_incoming(agent, graph):
    ana, mark = graph["ana"], graph["mark"]
    answer = data(agent.get(entity_url(ana.id)))
    assert {key: answer[key] for key in ("id", "kind", "name", "role", "aliases")} == {
        "id": str(ana.id),
        "kind": "user",
        "name": "",
        "role": "",
        "aliases": [],
    }
    # Oldest first: Austin (ended at T2), the brother, then Denver.
    assert answer["outgoing"] == [
        edge_data(graph["austin"], "Austin", ended=T2),
        edge_data(graph["brother"], ref(mark)),
        edge_data(graph["denver"], "Denver"),
    ]
    assert answer["incoming"] == []

    marks = data(agent.get(entity_url(mark.id)))
    assert (marks["name"], marks["role"]) == ("Mark", "brother")
    assert marks["outgoing"] == [edge_data(graph["job"], "lawyer")]
    assert marks["incoming"] == [edge_data(graph["brother"], ref(mark))]
    assert marks["incoming"][0]["subject"] == ref(ana)


def test_as_of_before_a_change_answers_the_old_value_current(agent, graph):
    ana = graph["ana"]

    def lives_in(as_of: datetime) -> list[tuple]:
        answer = data(agent.get(entity_url(ana.id), {"as_of": as_of.isoformat()}))
        return [
            (e["object"], e["invalid_at"], e["expired_at"])
            for e in answer["outgoing"]
            if e["relation"] == "lives in"
        ]

    # Nothing said yet: no such entity then.
    before = agent.get(entity_url(ana.id), {"as_of": (T1 - timedelta(seconds=1)).isoformat()})
    assert before.status_code == 404
    # Between the two statements: Austin, not yet ended (its end was recorded at T2).
    assert lives_in(T2 - timedelta(seconds=1)) == [("Austin", None, None)]
    after = [("Austin", "2025-06-01T09:00:00Z", "2025-06-01T09:00:00Z"), ("Denver", None, None)]
    assert lives_in(T2) == after
    assert lives_in(T2 + timedelta(days=1)) == after
    # Now: the same as after the change.
    answer = data(agent.get(entity_url(ana.id)))
    assert [
        (e["object"], e["invalid_at"], e["expired_at"])
        for e in answer["outgoing"]
        if e["relation"] == "lives in"
    ] == after


@pytest.mark.parametrize(
    ("entity_id", "query", "field"),
    [
        ("not-a-uuid", {}, "entity_id"),
        ("12345", {}, "entity_id"),
        (None, {"as_of": "2025-13-01"}, "as_of"),
        (None, {"as_of": ""}, "as_of"),
        (None, {"user_id": "a:other"}, "user_id"),
    ],
)
def test_bad_entity_parameters_are_validation_errors_on_their_field(
    agent, graph, entity_id, query, field
):
    url = entity_url(entity_id or graph["ana"].id)
    found = error(agent.get(url, query), 400)
    assert (found["code"], found["field"]) == ("VALIDATION_ERROR", field)


# --- Isolation ------------------------------------------------------------------------------


def test_another_clients_user_is_not_found(make_client, graph):
    other = make_client("b", ["b:"])[0]
    for response in (
        other.get(entities_url()),
        other.get(entity_url(graph["ana"].id)),
        other.get(entity_url(graph["ana"].id), {"as_of": T2.isoformat()}),
    ):
        found = error(response, 404)
        assert found["code"] == "NOT_FOUND"
        assert found["message"] == f"User '{USER}' not found."


def test_an_entity_of_another_user_is_not_found_even_under_the_clients_prefix(agent, graph):
    theirs = node("a:bob", EntityKind.USER, at=T1)
    edge(theirs, "lives in", "Paris", at=T1)
    found = error(agent.get(entity_url(theirs.id)), 404)
    assert (found["code"], found["message"]) == ("NOT_FOUND", f"Entity '{theirs.id}' not found.")
    # The same id under its own user is found; a random one is not.
    assert data(agent.get(entity_url(theirs.id, "a:bob")))["outgoing"][0]["object"] == "Paris"
    assert error(agent.get(entity_url(uuid.uuid4())), 404)["code"] == "NOT_FOUND"
    # The list never shows another user's entities.
    assert str(theirs.id) not in {e["id"] for e in data(agent.get(entities_url()))}


def test_a_staff_client_reads_any_users_graph(make_client, graph):
    staff = make_client("ops", [], staff=True)[0]
    assert len(data(staff.get(entities_url()))) == 2
    assert data(staff.get(entity_url(graph["mark"].id)))["name"] == "Mark"
