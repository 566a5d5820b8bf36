"""Seed 004's MCP example calls memory_get with `sortLinks` and `output_format`: the tool takes
both (`sortLinks` as `sort_links`; `output_format` only as json, what every tool answers), and
answers links in the order POST /get_memory answers for the same `sortLinks`."""

import json
from typing import Any

import pytest

from memories.models import Memory
from neuromem_site.mcp.tools import TOOLS, tool_call

pytestmark = pytest.mark.django_db

USER = "a:1"


def call(caller, tool: str, **arguments: Any) -> tuple[bool, Any]:
    answer = tool_call(tool=TOOLS[tool], caller=lambda: caller, arguments=arguments)
    return answer.ok, json.loads(answer.text)


@pytest.fixture
def agent(make_client):
    """An API client, and its memory `arch` linking to `db` (weight 0.6, score 50: 30) and then
    `queue` (0.5, score 90: 45): sorted, queue comes first."""
    http, client = make_client("a", ["a:"])
    for key in ("db", "queue"):
        added = http.post(
            "/add_memory", {"user_id": USER, "key": key, "value": {"text": key}}, format="json"
        )
        assert added.status_code == 201, added.json()
    Memory.objects.filter(key="queue").update(score=90)
    links = [{"key": "db", "weight": 0.6}, {"key": "queue", "weight": 0.5}]
    added = http.post(
        "/add_memory",
        {"user_id": USER, "key": "arch", "value": {"text": "The architecture"}, "links": links},
        format="json",
    )
    assert added.status_code == 201, added.json()
    return http, client.caller


@pytest.mark.parametrize(
    ("sort_links", "keys"),
    [
        (True, ["queue", "db"]),
        ("true", ["queue", "db"]),
        (False, ["db", "queue"]),
        ("false", ["db", "queue"]),
    ],
)
def test_the_seeds_example_call_orders_links_as_get_memory_does(agent, sort_links, keys):
    http, caller = agent
    ok, seeds = call(
        caller, "memory_get", user_id=USER, key="arch", sortLinks=sort_links, output_format="json"
    )
    assert ok, seeds
    ok, ours = call(caller, "memory_get", user_id=USER, key="arch", sort_links=sort_links)
    assert ok, ours
    route = http.post(
        "/get_memory", {"user_id": USER, "key": "arch", "sortLinks": sort_links}, format="json"
    )
    assert route.status_code == 200, route.json()
    route_keys = [link["key"] for link in route.json()["data"]["value"]["links"]]
    assert [link["key"] for link in seeds["links"]] == [link["key"] for link in ours["links"]]
    assert [link["key"] for link in seeds["links"]] == route_keys == keys


def test_a_bad_seed_argument_is_a_validation_error_naming_it_as_given(agent):
    http, caller = agent
    ok, answer = call(caller, "memory_get", user_id=USER, key="arch", sortLinks="maybe")
    route = http.post(
        "/get_memory", {"user_id": USER, "key": "arch", "sortLinks": "maybe"}, format="json"
    )
    assert not ok and route.status_code == 400
    assert answer == route.json()["error"] and answer["field"] == "sortLinks"

    ok, answer = call(
        caller, "memory_get", user_id=USER, key="arch", sortLinks=False, sort_links=True
    )
    assert not ok and (answer["code"], answer["field"]) == ("VALIDATION_ERROR", "sortLinks")

    ok, answer = call(caller, "memory_get", user_id=USER, key="arch", output_format="markdown")
    assert not ok and (answer["code"], answer["field"]) == ("VALIDATION_ERROR", "output_format")


def test_tools_the_seed_does_not_name_refuse_its_names_and_memory_get_lists_them(agent):
    _, caller = agent
    for tool, arguments in [
        ("memory_search", {"user_id": USER, "q": "architecture", "output_format": "json"}),
        ("bulk_read_memory", {"user_id": USER, "key": "arch", "sortLinks": True}),
    ]:
        ok, answer = call(caller, tool, **arguments)
        seed_name = list(arguments)[-1]
        assert not ok and (answer["message"], answer["field"]) == ("Unknown field.", seed_name)

    properties = TOOLS["memory_get"].input_schema["properties"]
    assert properties["sortLinks"]["enum"] == properties["sort_links"]["enum"]
    assert properties["sortLinks"]["default"] is True
    assert properties["output_format"]["enum"] == ["json"]
