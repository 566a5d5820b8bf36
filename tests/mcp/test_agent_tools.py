"""The tools for the rest of what an agent does (issue #32): change, replace and end a memory,
read its history, versions and links, set and remove links, read statistics, and hold a
conversation. Each answers what its REST route puts in `data` for the same input, fails with the
route's error object (a change that fails writes nothing), takes seed 004's names where the
seed has them, and passes the runtime guardrail's gate as its route does."""

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import pytest
from django.db import transaction

from core.access import SYSTEM
from evolution.services import GuardScope, agent_default, safety_contract_update, soul_bootstrap
from memories.models import ConversationMessage, Memory
from memories.services import MemoryInput, memory_add, memory_link_set
from neuromem_site.mcp.tools import TOOLS, tool_call
from tests.evolution.conftest import ANCHORS, CONSTRAINTS, SEED, STAFF
from tests.mcp.conftest import mcp_stdio

pytestmark = pytest.mark.django_db

USER = "a:1"
V1 = "/api/v1"
NO_SUCH_ID = "00000000-0000-4000-8000-000000000000"
# What a write stamps anew (ids and times of the rows it makes, the time it changes one): two
# writes of the same input differ only there.
STAMPED = {"id", "created_at", "updated_at", "valid_at", "expired_at", "started_at", "ended_at"}
# The REST route of each change on a memory: method and path under /memories/{id}/.
ROUTES = {
    "memory_update": ("patch", ""),
    "memory_supersede": ("post", "supersede/"),
    "memory_invalidate": ("post", "invalidate/"),
    "memory_link_set": ("post", "links/"),
    "memory_link_remove": ("delete", "links/"),  # its parameter in the query string
}


def call(caller, tool: str, **arguments: Any) -> tuple[bool, Any]:
    answer = tool_call(tool=TOOLS[tool], caller=lambda: caller, arguments=arguments)
    return answer.ok, json.loads(answer.text)


def rest(response) -> tuple[bool, Any]:
    body = response.json()
    return body["ok"], body["data"] if body["ok"] else body["error"]


def route(http, tool: str, memory_id: Any, params: dict[str, Any]) -> tuple[bool, Any]:
    """`tool`'s REST route on the memory `memory_id`, with `params`."""
    method, path = ROUTES[tool]
    url = f"{V1}/memories/{memory_id}/{path}"
    if method == "delete":
        return rest(http.delete(f"{url}?{urlencode(params)}"))
    return rest(getattr(http, method)(url, params, format="json"))


def tool_arguments(params: dict[str, Any]) -> dict[str, Any]:
    """A route's parameters as the tool takes them: the PATCH body's `key` is `new_key` (`key`
    names the memory)."""
    return {("new_key" if name == "key" else name): value for name, value in params.items()}


def undone(run: Callable[[], Any]) -> Any:
    """run()'s answer, with what it wrote rolled back: the REST route then meets the same rows."""
    with transaction.atomic():
        answer = run()
        transaction.set_rollback(True)
    return answer


def unstamped(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: unstamped(item) for key, item in value.items() if key not in STAMPED}
    if isinstance(value, list):
        return [unstamped(item) for item in value]
    return value


def rows() -> list[tuple]:
    return list(Memory.objects.values_list("id", "version", "content", "key", "expired_at"))


def remember(content: str, key: str, user: str = USER) -> Memory:
    item = MemoryInput(user_id=user, content=content, memory_type="fact", key=key)
    return memory_add(item=item, caller=SYSTEM).memory


@pytest.fixture
def a(make_client):
    """Client a (its REST client and caller), and the ids of its memories: `tea` linking to
    `milk` (weight 0.5) and then to `cake` (0.9); sorted, cake comes first."""
    http, client = make_client("a", ["a:"])
    tea, milk, cake = (
        remember(*memory)
        for memory in [("Green tea", "tea"), ("Oat milk", "milk"), ("Lemon cake", "cake")]
    )
    memory_link_set(source=tea, target_id=milk.id, weight=0.5, caller=SYSTEM)
    memory_link_set(source=tea, target_id=cake.id, weight=0.9, caller=SYSTEM)
    return http, client.caller, {"tea": str(tea.id), "milk": str(milk.id), "cake": str(cake.id)}


# A change on `tea` and the route's parameters ("milk": the id of milk).
CHANGES = [
    ("memory_update", {"version": 1, "importance": 0.9, "metadata": {"cups": 2}, "key": "green"}),
    ("memory_update", {"version": 1, "content": "Green tea, no sugar", "memory_type": "episodic"}),
    ("memory_supersede", {"content": "Jasmine tea", "version": 1, "metadata": {"from": "chat"}}),
    ("memory_invalidate", {"invalid_at": "2025-01-02T03:04:05Z"}),
    ("memory_link_set", {"target_id": "milk", "weight": 0.7}),
    ("memory_link_remove", {"target_id": "milk"}),
]


def with_ids(params: dict[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    return {
        name: ids.get(value, value) if name == "target_id" else value
        for name, value in params.items()
    }


@pytest.mark.parametrize("by_key", [False, True], ids=["by id", "by key"])
@pytest.mark.parametrize(("tool", "params"), CHANGES)
def test_each_change_answers_what_its_route_answers(a, by_key, tool, params):
    http, caller, ids = a
    params = with_ids(params, ids)
    address = {"user_id": USER, "key": "tea"} if by_key else {"memory_id": ids["tea"]}
    ok, answer = undone(lambda: call(caller, tool, **address, **tool_arguments(params)))
    assert ok, answer
    ok, expected = route(http, tool, ids["tea"], params)
    assert ok, expected
    assert unstamped(answer) == unstamped(expected)


def test_the_reads_answer_what_their_routes_answer(a):
    http, caller, ids = a
    ok, successor = route(http, "memory_supersede", ids["tea"], {"content": "Matcha"})
    assert ok, successor
    for tool, path in [("memory_history", "history/"), ("memory_versions", "versions/")]:
        expected = rest(http.get(f"{V1}/memories/{successor['id']}/{path}"))
        assert call(caller, tool, memory_id=successor["id"]) == expected
        assert call(caller, tool, user_id=USER, key="tea") == expected
    ok, versions = call(caller, "memory_versions", memory_id=ids["tea"])
    assert [version["content"] for version in versions] == ["Green tea", "Matcha"]

    for sort in (True, False, "false"):
        got = rest(http.get(f"{V1}/memories/{successor['id']}/", {"sort_links": str(sort).lower()}))
        ours = call(caller, "memory_links", user_id=USER, key="tea", sort_links=sort)
        seeds = call(
            caller, "memory_links", memory_id=successor["id"], sortLinks=sort, output_format="json"
        )
        assert ours == seeds == (True, got[1]["links"])
        keys = ["cake", "milk"] if sort is True else ["milk", "cake"]
        assert [link["key"] for link in ours[1]] == keys


@pytest.mark.parametrize(("tool", "params"), CHANGES)
def test_another_client_s_memory_or_none_is_not_found_as_on_its_route(a, make_client, tool, params):
    http, caller, ids = a
    make_client("b", ["b:"])
    params = with_ids(params, ids)
    theirs = str(remember("Someone else's tea", "tea", user="b:1").id)
    for memory_id in (theirs, NO_SUCH_ID):
        ok, error = call(caller, tool, memory_id=memory_id, **tool_arguments(params))
        assert (ok, error) == route(http, tool, memory_id, params)
        assert error["code"] == "NOT_FOUND"
    ok, error = call(caller, tool, user_id="b:1", key="tea", **tool_arguments(params))
    assert not ok and error["code"] == "NOT_FOUND"
    for read, path in [("memory_history", "history/"), ("memory_versions", "versions/")]:
        assert call(caller, read, memory_id=theirs) == rest(
            http.get(f"{V1}/memories/{theirs}/{path}")
        )
    assert call(caller, "memory_links", memory_id=theirs) == rest(
        http.get(f"{V1}/memories/{theirs}/")
    )


# A change on `tea` with parameters its route refuses, and the field at fault as the tool
# names it.
INVALID = [
    ("memory_update", {"importance": 0.2}, "version"),
    ("memory_update", {"version": 0}, "version"),
    ("memory_update", {"version": 1, "key": "k" * 256}, "new_key"),
    ("memory_update", {"version": 1, "memory_type": "note"}, "memory_type"),
    ("memory_supersede", {"content": " "}, "content"),
    ("memory_invalidate", {"invalid_at": "soon"}, "invalid_at"),
    ("memory_link_set", {"target_id": "milk", "weight": 2}, "weight"),
    ("memory_link_set", {"target_id": "tea", "weight": 0.5}, "target_id"),
    ("memory_link_set", {"weight": 0.5}, "target_id"),
    ("memory_link_remove", {"target_id": "nope"}, "target_id"),
]


@pytest.mark.parametrize(("tool", "params", "field"), INVALID)
def test_invalid_arguments_are_the_route_s_validation_errors(a, tool, params, field):
    http, caller, ids = a
    params = with_ids(params, ids)
    ok, error = call(caller, tool, memory_id=ids["tea"], **tool_arguments(params))
    _, expected = route(http, tool, ids["tea"], params)
    assert not ok and (error["code"], error["field"]) == ("VALIDATION_ERROR", field)
    # The same error, but for the name: memory_update's `new_key` is the PATCH body's `key`.
    spelt = "key" if field == "new_key" else field
    if "details" in expected:
        expected["details"] = {field: expected["details"][spelt]}
    assert error == {**expected, "field": field}


def test_a_stale_version_is_the_route_s_conflict_and_changes_nothing(a):
    http, caller, ids = a
    before = rows()
    for params in ({"version": 7, "importance": 0.1}, {"version": 7, "content": "Black tea"}):
        ok, error = call(caller, "memory_update", memory_id=ids["tea"], **params)
        assert (ok, error) == route(http, "memory_update", ids["tea"], params)
        assert (error["code"], error["field"], error["current_version"]) == (
            "CONFLICT",
            "version",
            1,
        )
    params = {"content": "Black tea", "version": 7}
    ok, error = call(caller, "memory_supersede", memory_id=ids["tea"], **params)
    assert (ok, error) == route(http, "memory_supersede", ids["tea"], params)
    assert rows() == before


def test_a_change_that_fails_half_way_writes_nothing(a):
    """New content makes a new version first; a new key another memory holds then fails the
    in-place part, and the new version goes with it."""
    http, caller, ids = a
    before = rows()
    params = {"version": 1, "content": "Black tea", "key": "milk"}
    ok, error = call(caller, "memory_update", user_id=USER, key="tea", **tool_arguments(params))
    _, expected = route(http, "memory_update", ids["tea"], params)
    assert not ok and error == {**expected, "field": "new_key"}
    assert error["code"] == "CONFLICT"
    ok, error = call(caller, "memory_update", user_id=USER, key="tea", version=1, newKey="milk")
    assert not ok and (error["code"], error["field"]) == ("CONFLICT", "newKey")
    assert rows() == before


def test_seed_004_s_new_key_renames_and_one_name_is_given_at_most(a):
    _, caller, ids = a
    ok, renamed = call(caller, "memory_update", user_id=USER, key="tea", version=1, newKey="green")
    assert ok and (renamed["id"], renamed["key"]) == (ids["tea"], "green")
    for names in ({"newKey": "a", "new_key": "b"}, {"newKey": "k" * 256}):
        ok, error = call(caller, "memory_update", user_id=USER, key="green", version=2, **names)
        assert not ok and (error["code"], error["field"]) == ("VALIDATION_ERROR", "newKey")


def test_a_change_names_its_memory_once(a):
    _, caller, ids = a
    for tool, arguments in [("memory_update", {"version": 1}), ("memory_invalidate", {})]:
        ok, error = call(caller, tool, memory_id=ids["milk"], key="tea", **arguments)
        assert not ok and (error["code"], error["field"]) == ("VALIDATION_ERROR", "key")
    ok, error = call(caller, "memory_history", user_id=USER)
    assert not ok and (error["code"], error["field"]) == ("VALIDATION_ERROR", "key")
    assert Memory.objects.get(pk=ids["tea"]).version == 1


def test_memory_stats_answers_the_route_s_json(a, make_client):
    http, caller, _ = a
    stats = f"{V1}/memories/stats/"
    rest(http.get(stats, {"user_id": USER}))  # computed and cached: both read that answer now
    expected = rest(http.get(stats, {"user_id": USER}))
    assert call(caller, "memory_stats", user_id=USER) == expected
    assert expected[1]["cached"] is True and expected[1]["counts"]["total"] == 3

    window = {"from_timestamp": 0, "to_timestamp": 4102444800000, "histogram_bin_size": 25}
    seed = {"fromTimestamp": 0, "toTimestamp": 4102444800000, "histogramBinSize": 25}
    fresh = {"user_id": USER, "export_format": "both", "cache_ttl_ms": 0}
    ok, ours = call(caller, "memory_stats", **window, **fresh)
    ok_seed, seeds = call(caller, "memory_stats", **seed, **fresh, output_format="json")
    _, got = rest(http.get(stats, {**window, **fresh}))
    assert ok and ok_seed
    timeless = {"generated_at": None, "query_duration_ms": None}
    assert {**ours, **timeless} == {**seeds, **timeless} == {**got, **timeless}
    assert ours["histogram"]["bin_size"] == 25 and ours["csv"].startswith("kind,name")

    ops = make_client("ops", [], staff=True)[1].caller
    # Fresh: every user's statistics are cached under one key, which other tests fill too.
    ok, every_user = call(ops, "memory_stats", cache_ttl_ms=0)
    assert ok and every_user["user_id"] is None and every_user["counts"]["total"] == 3


def test_memory_stats_errors_are_the_route_s(a, make_client):
    http, caller, _ = a
    stats = f"{V1}/memories/stats/"
    for params in (
        {},
        {"user_id": "b:1"},
        {"user_id": USER, "histogram_bin_size": 500},
        {"user_id": USER, "from_timestamp": 5, "to_timestamp": 4},
    ):
        ok, error = call(caller, "memory_stats", **params)
        assert (ok, error) == rest(http.get(stats, params))
    assert (error["code"], error["field"]) == ("VALIDATION_ERROR", "from_timestamp")
    assert call(caller, "memory_stats")[1]["code"] == "FORBIDDEN"  # all users: staff only

    ok, error = call(caller, "memory_stats", user_id=USER, histogramBinSize=500)
    _, seed_error = rest(
        http.get("/api/memories/stats", {"user_id": USER, "histogramBinSize": 500})
    )
    limits = ("code", "field", "minAllowed", "maxAllowed", "provided")
    assert [error[name] for name in limits] == [seed_error[name] for name in limits]
    assert error["field"] == "histogramBinSize"
    ok, error = call(caller, "memory_stats", user_id=USER, export_format="csv")
    assert not ok and (error["code"], error["field"]) == ("VALIDATION_ERROR", "export_format")


def test_a_conversation_answers_what_its_routes_answer(a):
    http, caller, _ = a
    sessions = f"{V1}/sessions/"
    opening = {"user_id": USER, "metadata": {"channel": "chat"}}
    ok, opened = undone(lambda: call(caller, "session_open", **opening))
    ok_route, expected = rest(http.post(sessions, opening, format="json"))
    assert ok and ok_route and unstamped(opened) == unstamped(expected)
    session_id = expected["id"]

    for said in (
        {"role": "user", "content": "My name is Ana and my password is hunter22."},
        {"role": "user", "content": "Please forget my name."},
        {"role": "assistant", "content": "Done."},
    ):
        ok, answer = undone(
            lambda said=said: call(caller, "session_message", session_id=session_id, **said)
        )
        ok_route, expected = rest(
            http.post(f"{sessions}{session_id}/messages/", said, format="json")
        )
        assert ok and ok_route and unstamped(answer) == unstamped(expected)
        if said["content"].startswith("My name"):
            assert answer["memories"] and answer["redactions"] == {"password": 1}
        if said["content"].startswith("Please forget"):
            assert answer["forget"] and answer["message"]["content"] == "[forget request]"

    ok, ended = undone(lambda: call(caller, "session_end", session_id=session_id))
    ok_route, expected = rest(http.post(f"{sessions}{session_id}/end/"))
    assert ok and ok_route and unstamped(ended) == unstamped(expected)
    assert call(caller, "session_end", session_id=session_id) == (True, expected)  # no change


def test_conversation_errors_are_the_route_s_and_write_nothing(a, make_client):
    http, caller, _ = a
    b_http, _ = make_client("b", ["b:"])
    _, theirs = rest(b_http.post(f"{V1}/sessions/", {"user_id": "b:1"}, format="json"))
    _, mine = rest(http.post(f"{V1}/sessions/", {"user_id": USER}, format="json"))
    said = {"role": "user", "content": "I live in Berlin."}

    def both(session_id: str, message: dict[str, Any]) -> dict[str, Any]:
        ok, error = call(caller, "session_message", session_id=session_id, **message)
        url = f"{V1}/sessions/{session_id}/messages/"
        assert (ok, error) == rest(http.post(url, message, format="json"))
        return error

    for session_id in (theirs["id"], NO_SUCH_ID):
        assert both(session_id, said)["code"] == "NOT_FOUND"
        ended = call(caller, "session_end", session_id=session_id)
        assert ended == rest(http.post(f"{V1}/sessions/{session_id}/end/"))
    assert both(mine["id"], {"role": "bot", "content": "Hello"})["field"] == "role"
    ok, error = call(caller, "session_message", session_id="nope", **said)
    assert not ok and (error["code"], error["field"]) == ("VALIDATION_ERROR", "session_id")
    ok, error = call(caller, "session_open", user_id="b:1")
    assert (ok, error) == rest(http.post(f"{V1}/sessions/", {"user_id": "b:1"}, format="json"))
    assert error["code"] == "FORBIDDEN"

    assert call(caller, "session_end", session_id=mine["id"])[0]
    before = ConversationMessage.objects.count(), Memory.objects.count()
    error = both(mine["id"], said)
    assert (error["code"], error["field"]) == ("CONFLICT", "session_id")
    assert (ConversationMessage.objects.count(), Memory.objects.count()) == before


def test_while_the_guard_check_failed_the_changes_are_refused_and_the_reads_run(a):
    http, caller, ids = a
    agent = agent_default(caller=caller)
    safety_contract_update(agent=agent, caller=STAFF, anchors=ANCHORS, constraints=CONSTRAINTS)
    soul_bootstrap(agent=agent, caller=STAFF, content=SEED)
    guard = http.patch(f"{V1}/agents/{agent.pk}/", {"guard_enabled": True}, format="json")
    assert guard.status_code == 200, guard.json()
    scope = GuardScope(session="loop")

    def scoped(tool: str, **arguments: Any) -> tuple[bool, Any]:
        answer = tool_call(
            tool=TOOLS[tool], caller=lambda: caller, arguments=arguments, scope=scope
        )
        return answer.ok, json.loads(answer.text)

    assert scoped("guard_check", context="Hi.")[1]["passed"] is False
    tea = {"memory_id": ids["tea"]}
    for tool, arguments in [
        ("memory_update", {**tea, "version": 1, "importance": 0.1}),
        ("memory_supersede", {**tea, "content": "Black tea"}),
        ("memory_invalidate", tea),
        ("memory_link_set", {**tea, "target_id": ids["milk"], "weight": 0.1}),
        ("memory_link_remove", {**tea, "target_id": ids["milk"]}),
        ("session_open", {"user_id": USER}),
        ("memory_history", tea),
        ("memory_versions", tea),
        ("memory_links", tea),
        ("memory_stats", {"user_id": USER}),
    ]:
        ok, answer = scoped(tool, **arguments)
        assert ok is TOOLS[tool].read_only, (tool, answer)
        assert ok or answer["code"] == "GUARD_ANCHOR_MISSING"
    assert Memory.objects.get(pk=ids["tea"]).version == 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_new_tools_answer_over_stdio(make_agent):
    """Listed with the others (test_stdio.py), and each called once through the server."""
    agent = make_agent("a")
    tea, milk = str(remember("Green tea", "tea").id), str(remember("Oat milk", "milk").id)
    with mcp_stdio(agent.token) as mcp:
        listed = {tool.name: tool for tool in mcp.tools()}
        for name in ("memory_update", "memory_link_set", "session_message", "memory_stats"):
            assert listed[name].input_schema == TOOLS[name].input_schema
        assert listed["memory_update"].annotations.destructive_hint is True
        assert listed["memory_history"].annotations.read_only_hint is True
        link = mcp.data("memory_link_set", user_id=USER, key="tea", target_id=milk, weight=0.4)
        assert link["key"] == "milk"
        assert [link["key"] for link in mcp.data("memory_links", memory_id=tea)] == ["milk"]
        removed = mcp.data("memory_link_remove", memory_id=tea, target_id=milk)
        assert removed == {"source_id": tea, "target_id": milk}
        assert mcp.data("memory_update", memory_id=tea, version=1, importance=0.8)["version"] == 2
        successor = mcp.data("memory_supersede", user_id=USER, key="tea", content="Matcha")["id"]
        versions = mcp.data("memory_versions", memory_id=successor)
        assert [version["content"] for version in versions] == ["Green tea", "Matcha"]
        assert mcp.data("memory_history", memory_id=tea)[0]["event"] == "ADD"
        assert mcp.data("memory_invalidate", memory_id=milk)["expired_at"] is not None
        assert mcp.data("memory_stats", user_id=USER)["user_id"] == USER
        session = mcp.data("session_open", user_id=USER)["id"]
        said = mcp.data("session_message", session_id=session, role="user", content="I'm Ana.")
        assert said["message"]["session_id"] == session and said["memories"]
        assert mcp.data("session_end", session_id=session)["ended_at"] is not None
        error = mcp.error("memory_update", memory_id=successor, version=1, importance=0.1)
        assert (error["code"], error["field"]) == ("CONFLICT", "version")


def test_an_error_echoing_a_lone_surrogate_is_the_tool_s_error(db):
    ok, error = call(SYSTEM, "memory_recall", user_id=USER, query="tea", fields="\ud800")
    assert not ok
    assert (error["code"], error["field"]) == ("VALIDATION_ERROR", "fields")
    assert "\ufffd" in error["message"]
    ok, error = call(SYSTEM, "memory_search", user_id=USER, q="tea", sort_by="\udc00")
    assert (ok, error["field"]) == (False, "sort_by")


@pytest.mark.parametrize(
    "tool", ["memory_delete", "memory_get", "memory_links", "bulk_read_memory", "memory_update"]
)
def test_a_memory_named_twice_must_be_one_memory(a, tool):
    """`memory_id` with `key` is refused (the two could name two memories), and with a
    `user_id` that is not the memory's user answers NOT_FOUND: no tool lets one name win
    silently, nothing changes. With its own user, the id answers."""
    http, caller, ids = a
    extra = {"version": 1, "importance": 0.9} if tool == "memory_update" else {}
    before = rows()
    ok, error = call(caller, tool, memory_id=ids["tea"], user_id=USER, key="milk", **extra)
    assert (ok, error["code"], error["field"]) == (False, "VALIDATION_ERROR", "key")
    ok, error = call(caller, tool, memory_id=ids["tea"], user_id="a:2", **extra)
    assert (ok, error["code"]) == (False, "NOT_FOUND")
    assert rows() == before
    ok, answer = undone(lambda: call(caller, tool, memory_id=ids["tea"], user_id=USER, **extra))
    assert ok, answer
    # The REST route names the memory by its path alone: a `key` there is no parameter.
    response = http.get(f"/api/v1/memories/{ids['tea']}/", {"key": "milk", "user_id": "a:2"})
    assert (response.status_code, response.json()["data"]["id"]) == (200, ids["tea"])


def test_an_id_sent_as_a_number_is_refused_as_its_route_refuses_it(a):
    http, caller, ids = a
    ok, error = call(caller, "memory_link_remove", memory_id=ids["tea"], target_id=5)
    assert (ok, error["code"], error["field"]) == (False, "VALIDATION_ERROR", "target_id")
    response = http.delete(f"/api/v1/memories/{ids['tea']}/links/?target_id=5")
    assert (response.status_code, response.json()["error"]["field"]) == (400, "target_id")
    for tool, arguments in [
        ("memory_get", {"memory_id": 1}),
        ("memory_link_set", {"memory_id": ids["tea"], "target_id": True, "weight": 0.5}),
        ("session_end", {"session_id": 7}),
    ]:
        ok, error = call(caller, tool, **arguments)
        assert (ok, error["code"]) == (False, "VALIDATION_ERROR"), (tool, error)


@pytest.mark.parametrize(
    ("tool", "arguments", "field", "message"),
    [
        ("memory_search", {"user_id": USER, "q": 123}, "q", "Must be a string."),
        ("memory_search", {"user_id": USER, "q": "tea", "limit": "5"}, "limit", "integer"),
        ("memory_get", {"user_id": USER, "key": 1.5}, "key", "Must be a string."),
    ],
    ids=["number-for-text", "text-for-integer", "number-key"],
)
def test_an_argument_of_another_json_type_is_refused(a, tool, arguments, field, message):
    """A tool backed by a route's query-string parameters takes JSON values: each must be of
    the type the tool's schema declares, as a request body's must (no "123" read from 123)."""
    _, caller, _ = a
    ok, error = call(caller, tool, **arguments)
    assert (ok, error["code"], error["field"]) == (False, "VALIDATION_ERROR", field)
    assert message in error["message"]
