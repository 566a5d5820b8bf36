"""MCP's memory_entities answers what GET /users/{user_id}/entities/ (its first page) and
/entities/{id}/ put in `data`, and fails with the very error objects those routes answer."""

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memories.graph.models import EntityKind, GraphEdge, GraphNode
from neuromem_site.mcp.tools import TOOLS, tool_call
from tests.mcp.conftest import mcp_stdio

USER = "a:ana"
T1 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
T2 = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)
TOOL = TOOLS["memory_entities"]


def graph() -> dict[str, GraphNode]:
    """Ana lived in Austin from T1 and in Denver from T2; her brother Mark since T1."""
    later = T1 + timedelta(seconds=1)
    ana = GraphNode.objects.create(user_id=USER, kind=EntityKind.USER, created_at=T1)
    mark = GraphNode.objects.create(
        user_id=USER, kind=EntityKind.PERSON, name="Mark", role="brother", created_at=later
    )
    GraphEdge.objects.create(
        user_id=USER,
        subject=ana,
        relation="lives in",
        object_value="Austin",
        single=True,
        valid_at=T1,
        created_at=T1,
    )
    GraphEdge.objects.filter(object_value="Austin").update(invalid_at=T2, expired_at=T2)
    GraphEdge.objects.create(
        user_id=USER,
        subject=ana,
        relation="brother",
        object_node=mark,
        single=False,
        valid_at=later,
        created_at=later,
    )
    GraphEdge.objects.create(
        user_id=USER,
        subject=ana,
        relation="lives in",
        object_value="Denver",
        single=True,
        valid_at=T2,
        created_at=T2,
    )
    return {"ana": ana, "mark": mark}


def call(caller, **arguments: Any) -> tuple[bool, Any]:
    answer = tool_call(tool=TOOL, caller=lambda: caller, arguments=arguments)
    return answer.ok, json.loads(answer.text)


def http_data(response) -> Any:
    assert response.status_code == 200, response.json()
    return response.json()["data"]


def http_error(response) -> dict:
    assert response.status_code >= 400, response.json()
    return response.json()["error"]


@pytest.mark.django_db
def test_the_tool_answers_what_the_routes_answer(make_client):
    nodes = graph()
    http, client = make_client("a", ["a:"])
    caller = client.caller
    entities = f"/api/v1/users/{USER}/entities/"
    ana = f"{entities}{nodes['ana'].id}/"

    assert call(caller, user_id=USER) == (True, http_data(http.get(entities)))
    assert call(caller, user_id=USER, limit=1) == (
        True,
        http_data(http.get(entities, {"limit": 1})),
    )
    before = (T2 - timedelta(days=1)).isoformat()
    assert call(caller, user_id=USER, as_of=before) == (
        True,
        http_data(http.get(entities, {"as_of": before})),
    )
    ok, detail = call(caller, user_id=USER, entity_id=str(nodes["ana"].id))
    assert ok and detail == http_data(http.get(ana))
    assert [edge["object"] for edge in detail["outgoing"]] == [
        "Austin",
        {"id": str(nodes["mark"].id), "kind": "person", "name": "Mark", "role": "brother"},
        "Denver",
    ]
    ok, then = call(caller, user_id=USER, entity_id=str(nodes["ana"].id), as_of=before)
    assert ok and then == http_data(http.get(ana, {"as_of": before}))
    assert [
        (e["object"], e["invalid_at"]) for e in then["outgoing"] if e["relation"] == "lives in"
    ] == [("Austin", None)]


@pytest.mark.django_db
def test_the_tool_fails_with_the_routes_error_objects(make_client):
    nodes = graph()
    http, client = make_client("a", ["a:"])
    other, other_client = make_client("b", ["b:"])
    entities = f"/api/v1/users/{USER}/entities/"
    ana = f"{entities}{nodes['ana'].id}/"
    theirs = GraphNode.objects.create(user_id="a:bob", kind=EntityKind.USER)
    cases = [
        (client, {"user_id": USER, "entity_id": "nope"}, http.get(f"{entities}nope/")),
        (
            client,
            {"user_id": USER, "as_of": "yesterday"},
            http.get(entities, {"as_of": "yesterday"}),
        ),
        (
            client,
            {"user_id": USER, "entity_id": str(nodes["ana"].id), "as_of": "2025-13-01"},
            http.get(ana, {"as_of": "2025-13-01"}),
        ),
        (client, {"user_id": USER, "limit": 0}, http.get(entities, {"limit": 0})),
        (client, {"user_id": USER, "limit": 201}, http.get(entities, {"limit": 201})),
        (
            client,
            {"user_id": USER, "entity_id": str(theirs.id)},
            http.get(f"{entities}{theirs.id}/"),
        ),
        (other_client, {"user_id": USER}, other.get(entities)),
        (other_client, {"user_id": USER, "entity_id": str(nodes["ana"].id)}, other.get(ana)),
    ]
    for who, arguments, response in cases:
        ok, answer = call(who.caller, **arguments)
        assert not ok and answer == http_error(response), arguments
    ok, answer = call(client.caller, user_id=USER, entity="x")
    assert not ok and (answer["code"], answer["field"]) == ("VALIDATION_ERROR", "entity")
    ok, answer = call(client.caller, user_id=" ")
    assert not ok and (answer["code"], answer["field"]) == ("VALIDATION_ERROR", "user_id")


def test_the_tools_schema_says_what_it_takes():
    schema = TOOL.input_schema
    assert TOOL.read_only and schema["required"] == ["user_id"]
    assert set(schema["properties"]) == {"user_id", "entity_id", "as_of", "limit"}
    assert schema["properties"]["entity_id"]["format"] == "uuid"
    assert schema["properties"]["as_of"]["format"] == "date-time"
    limit = schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 200, 50)
    for name, prop in schema["properties"].items():
        assert prop.get("type") and prop.get("description"), name


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)  # the server subprocess reads what the test wrote
def test_the_tool_over_stdio(make_agent):
    nodes = graph()
    agent = make_agent("a")
    with mcp_stdio(agent.token) as mcp:
        listed = {tool.name: tool for tool in mcp.tools()}["memory_entities"]
        assert listed.annotations.read_only_hint is True
        assert [e["name"] for e in mcp.data("memory_entities", user_id=USER)] == ["", "Mark"]
        detail = mcp.data("memory_entities", user_id=USER, entity_id=str(nodes["mark"].id))
        assert detail["incoming"][0]["subject"]["id"] == str(nodes["ana"].id)
        assert mcp.error("memory_entities", user_id="b:1")["code"] == "NOT_FOUND"
