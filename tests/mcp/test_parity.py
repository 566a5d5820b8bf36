"""HTTP and MCP are one code path: for the same inputs the tools answer what the REST routes put
in the envelope's `data`, and fail with the very error objects the routes answer. The MCP side
is `manage.py mcp_server` (a subprocess, the SDK's stdio client); the HTTP side is DRF's test
client on the same database."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from core.access import SYSTEM, Caller
from evolution.services import agent_default, safety_contract_update, soul_bootstrap
from memories.models import Memory
from memories.services import MemoryInput, memories_embed, memory_add, memory_link_set
from reflection.services.maintenance import trait_view_refresh
from tests.evolution.conftest import ANCHORS, CONSTRAINTS, SEED, STAFF, edited
from tests.mcp.conftest import mcp_stdio

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

USER = "a:1"


def bootstrap_soul_of(client: str) -> None:
    """The contract and version 0 of the API client's default agent (its `/soul/`)."""
    agent = agent_default(caller=Caller(name=client))
    safety_contract_update(agent=agent, caller=STAFF, anchors=ANCHORS, constraints=CONSTRAINTS)
    soul_bootstrap(agent=agent, caller=STAFF, content=SEED)


def remember(content: str, *, key: str | None = None, score: float = 50.0, user=USER) -> Memory:
    memory = memory_add(
        item=MemoryInput(user_id=user, content=content, memory_type="fact", key=key),
        caller=SYSTEM,
    ).memory
    Memory.objects.filter(pk=memory.pk).update(score=score)
    return memory


def link(source: Memory, target: Memory, weight: float) -> None:
    memory_link_set(source=source, target_id=target.id, weight=weight, caller=SYSTEM)


def trait(user_id: str, content: str, subtype: str, stage: str, confidence: float) -> None:
    now = timezone.now()
    Memory.objects.create(
        user_id=user_id,
        memory_type="trait",
        content=content,
        trait_subtype=subtype,
        trait_stage=stage,
        trait_confidence=confidence,
        trait_reinforcement_count=2,
        trait_contradiction_count=0,
        trait_first_observed=now - timedelta(days=100),
        trait_last_reinforced=now - timedelta(days=1),
    )


def data(response) -> Any:
    assert response.status_code in (200, 201), response.json()
    return response.json()["data"]


def error(response) -> dict:
    assert response.status_code >= 400, response.json()
    return response.json()["error"]


def timeless(value: Any) -> Any:
    """`value` for comparing two answers given moments apart: the recall score's recency boost
    moves with the clock (floats compared to 1 in 10⁶) and a bulk read's duration is its own."""
    if isinstance(value, float):
        return pytest.approx(value, rel=1e-6)
    if isinstance(value, dict):
        return {key: timeless(item) for key, item in value.items() if key != "executionTimeMs"}
    if isinstance(value, list):
        return [timeless(item) for item in value]
    return value


def without_duration(answer: dict) -> dict:
    return {**answer, "metadata": {**answer["metadata"], "executionTimeMs": None}}


@pytest.fixture
def memories():
    """A hub linked to a, b and c (in that order), whose sorted order is b, a, c: weight ×
    target score ties between all three (40), then weight (b's 0.8), then key (a before c).
    a leads on to d, and d to e."""
    hub = remember("Hub: the user's week", key="hub", score=90)
    a = remember("Green tea every morning", key="a", score=80)
    b = remember("Runs on Sundays", key="b", score=50)
    c = remember("Green tea with honey", key="c", score=80)
    d = remember("Oolong on weekends", key="d", score=60)
    e = remember("Matcha once a month", key="e", score=30)
    link(hub, a, 0.5)
    link(hub, b, 0.8)
    link(hub, c, 0.5)
    link(a, d, 0.9)
    link(d, e, 0.7)
    remember("Someone else's tea", user="b:1")
    memories_embed(memory_ids=list(Memory.objects.values_list("id", flat=True)))
    return {"hub": hub, "a": a, "b": b, "c": c, "d": d, "e": e}


def test_reads_answer_the_same_over_http_and_mcp(make_agent, memories):
    trait(USER, "Values honesty", "core", "core", 0.9)
    trait(USER, "Prefers tea", "preference", "established", 0.7)
    trait(USER, "Writes in the morning", "behavior", "established", 0.8)
    trait(USER, "Runs on Sundays", "behavior", "emerging", 0.5)
    trait_view_refresh()
    agent = make_agent("a")
    bootstrap_soul_of("a")
    http = agent.http
    hub = memories["hub"].id
    data(
        http.post(
            "/api/v1/soul/proposals/",
            {"intent": "x", "new_content": edited("Be kind."), "auto_apply": False},
            format="json",
        )
    )

    with mcp_stdio(agent.token) as mcp:
        # memory_get: links sorted (ties: weight, then key), or in insertion order.
        over_http = data(http.get(f"/api/v1/memories/{hub}/"))
        assert [entry["key"] for entry in over_http["links"]] == ["b", "a", "c"]
        assert mcp.data("memory_get", memory_id=str(hub)) == over_http
        assert mcp.data("memory_get", user_id=USER, key="hub") == over_http
        unsorted = data(http.get(f"/api/v1/memories/{hub}/", {"sort_links": "false"}))
        assert [entry["key"] for entry in unsorted["links"]] == ["a", "b", "c"]
        assert mcp.data("memory_get", memory_id=str(hub), sort_links=False) == unsorted
        assert mcp.data("memory_get", memory_id=str(hub), sort_links="false") == unsorted
        # The vector's decimals depend on the connection (halfvec read as binary after a
        # vector_cursor, else as text): equal to float32 precision, not digit for digit.
        with_vector = data(http.get(f"/api/v1/memories/{hub}/", {"include": "embedding"}))
        assert len(with_vector["embedding"]) > 100
        over_mcp = mcp.data("memory_get", memory_id=str(hub), include="embedding")
        assert over_mcp == timeless(with_vector)

        # bulk_read_memory: the same memories, in the same order, by the same paths.
        for limits in ({}, {"depth": 1}, {"breadth": 1, "depth": 6}, {"total": 2}):
            over_http = data(http.get(f"/api/v1/memories/{hub}/bulk/", limits))
            over_mcp = mcp.data("bulk_read_memory", memory_id=str(hub), **limits)
            assert without_duration(over_mcp) == without_duration(over_http), limits
        deep = mcp.data("bulk_read_memory", memory_id=str(hub))
        assert [m["key"] for m in deep["associatedMemories"]] == ["b", "a", "d", "e", "c"]

        # memory_search and memory_recall: the same hits in the same order.
        for query in (
            {"q": "green tea"},
            {"q": "tea", "sort_by": "score"},
            {"q": "tea", "sort_by": "score", "sort_order": "asc", "limit": 3},
            {"q": "tea", "score_min": 55, "memory_type": "fact"},
        ):
            over_http = data(http.get("/api/v1/search/", {"user_id": USER, **query}))
            assert over_http, query
            assert mcp.data("memory_search", user_id=USER, **query) == timeless(over_http)
        for body in ({"query": "green tea"}, {"query": "tea", "fields": "compact", "limit": 2}):
            over_http = data(http.post("/api/v1/recall/", {"user_id": USER, **body}, format="json"))
            assert over_http["merged"], body
            assert mcp.data("memory_recall", user_id=USER, **body) == timeless(over_http)

        # traits_get and soul_status.
        over_http = data(http.get(f"/api/v1/users/{USER}/traits/"))
        assert [t["content"] for t in over_http["behavior"]] == [
            "Writes in the morning",
            "Runs on Sundays",
        ]
        assert mcp.data("traits_get", user_id=USER) == over_http
        over_http = data(http.get("/api/v1/soul/"))
        assert over_http["pending_proposals"] == [1]
        assert mcp.data("soul_status") == over_http


def test_writes_answer_the_same_over_http_and_mcp(make_agent):
    staff = make_agent("ops", staff=True)
    bootstrap_soul_of("ops")
    http = staff.http
    body = {"user_id": USER, "content": "I like green tea", "memory_type": "fact", "key": "tea"}
    with mcp_stdio(staff.token) as mcp:
        added = mcp.data("memory_add", **body)
        assert added["operation"] == "ADD"
        # The same write again: the route and the tool both answer NOOP with that memory.
        noop = http.post("/api/v1/memories/", body, format="json")
        assert noop.status_code == 200
        assert data(noop) == {**added, "operation": "NOOP"}
        assert mcp.data("memory_add", **body) == data(noop)

        memory_id = added["memory"]["id"]
        deleted = mcp.data("memory_delete", memory_id=memory_id)
        assert deleted["expired_at"] is not None
        # Deleted: the memory as the route now shows it; deleting it again changes
        # nothing, through either.
        shown = data(http.get(f"/api/v1/memories/{memory_id}/"))
        assert {key: value for key, value in shown.items() if key != "links"} == deleted
        assert data(http.delete(f"/api/v1/memories/{memory_id}/")) == deleted
        assert mcp.data("memory_delete", memory_id=memory_id) == deleted

        # Forgetting, through either: the same plan in a dry run, the same erasure for real
        # (and then nothing more to forget).
        kept = {"user_id": USER, "content": "My locker is by the pool", "memory_type": "fact"}
        locker = data(http.post("/api/v1/memories/", kept, format="json"))["memory"]["id"]
        ask = {"memory_ids": [locker], "dry_run": True}
        planned = mcp.data("memory_forget", user_id=USER, **ask)
        assert planned == data(http.post(f"/api/v1/users/{USER}/forget/", ask, format="json"))
        assert [m["id"] for m in planned["memories"]] == [locker]
        forgotten = mcp.data("memory_forget", user_id=USER, memory_ids=[locker])
        assert forgotten["id"] and [m["id"] for m in forgotten["memories"]] == [locker]
        again = data(http.post(f"/api/v1/users/{USER}/forget/", {"memory_ids": [locker]}, "json"))
        assert again["memories"] == [] and again["reason"]["code"] == "nothing_held"

        # A proposal through either: the same evaluation of the same content.
        proposal = {"intent": "Kinder", "new_content": edited("Be kind."), "auto_apply": False}
        over_http = data(http.post("/api/v1/soul/proposals/", proposal, format="json"))
        over_mcp = mcp.data("soul_propose", **proposal)
        assert (over_http["status"], over_http["version"]) == ("proposed", 1)
        assert (over_mcp["status"], over_mcp["version"]) == ("proposed", 2)
        moment = {"evaluated_at": None}
        assert over_mcp["eval"] | moment == over_http["eval"] | moment

        # Nothing earlier than version 0 to roll back to: the same CONFLICT.
        over_http = error(http.post("/api/v1/soul/rollback/", {}, format="json"))
        assert over_http["code"] == "CONFLICT"
        assert mcp.error("soul_rollback") == over_http


def test_validation_errors_are_the_http_error_objects(make_agent, memories):
    agent = make_agent("a")
    http = agent.http
    hub = str(memories["hub"].id)
    search = {"user_id": USER, "q": "tea"}
    add = {"user_id": USER, "content": "x", "memory_type": "fact"}
    recall = {"user_id": USER, "query": "tea"}
    cases = [
        # (tool, arguments, the same request over HTTP)
        ("memory_search", {**search, "limit": 500}, ("get", "/api/v1/search/")),
        ("memory_search", {**search, "limit": 0}, ("get", "/api/v1/search/")),
        ("memory_search", {**search, "state": "asleep"}, ("get", "/api/v1/search/")),
        ("memory_search", {**search, "score_min": 80, "score_max": 20}, ("get", "/api/v1/search/")),
        ("memory_search", {**search, "q": ""}, ("get", "/api/v1/search/")),
        ("memory_search", {"q": "tea"}, ("get", "/api/v1/search/")),
        ("memory_get", {"sort_links": "yes"}, ("get", f"/api/v1/memories/{hub}/")),
        ("bulk_read_memory", {"depth": 7}, ("get", f"/api/v1/memories/{hub}/bulk/")),
        ("bulk_read_memory", {"total": 0}, ("get", f"/api/v1/memories/{hub}/bulk/")),
        ("bulk_read_memory", {"breadth": 21}, ("get", f"/api/v1/memories/{hub}/bulk/")),
        ("memory_add", {**add, "memory_type": "opinion"}, ("post", "/api/v1/memories/")),
        ("memory_add", {**add, "content": " "}, ("post", "/api/v1/memories/")),
        ("memory_add", {**add, "importance": 2}, ("post", "/api/v1/memories/")),
        ("memory_add", {**add, "importance": "0.5"}, ("post", "/api/v1/memories/")),
        ("memory_add", {**add, "type": "fact"}, ("post", "/api/v1/memories/")),
        ("memory_add", {**add, "user_id": " a:1"}, ("post", "/api/v1/memories/")),
        ("memory_recall", {"user_id": USER}, ("post", "/api/v1/recall/")),
        ("memory_recall", {**recall, "limit": "10"}, ("post", "/api/v1/recall/")),
        ("memory_recall", {**recall, "limit": 101}, ("post", "/api/v1/recall/")),
        ("memory_recall", {**recall, "memory_types": []}, ("post", "/api/v1/recall/")),
        ("soul_propose", {"new_content": "x"}, ("post", "/api/v1/soul/proposals/")),
        (
            "soul_propose",
            {"intent": "x", "new_content": "y", "auto_apply": "yes"},
            ("post", "/api/v1/soul/proposals/"),
        ),
        ("soul_rollback", {"to_version": -1}, ("post", "/api/v1/soul/rollback/")),
    ]
    with mcp_stdio(agent.token) as mcp:
        for tool, arguments, (method, path) in cases:
            if method == "get":
                response = http.get(path, arguments)
            else:
                response = http.post(path, arguments, format="json")
            assert response.status_code == 400, (tool, arguments, response.json())
            expected = error(response)
            assert expected["code"] == "VALIDATION_ERROR"
            if tool in ("memory_get", "bulk_read_memory"):
                arguments = {"memory_id": hub, **arguments}
            assert mcp.error(tool, **arguments) == expected, (tool, arguments)
        # A user_id in the URL path, checked the same way as an argument.
        assert mcp.error("traits_get", user_id=" ") == error(http.get("/api/v1/users/%20/traits/"))
    range_error = error(http.get(f"/api/v1/memories/{hub}/bulk/", {"depth": 7}))
    assert range_error | {"message": None} == {
        "code": "VALIDATION_ERROR",
        "message": None,
        "field": "depth",
        "minAllowed": 1,
        "maxAllowed": 6,
        "provided": 7,
    }


def test_the_prefix_rule_holds_over_mcp_as_over_http(make_agent, memories):
    """Client a (prefix a:) asks for client b's end user b:1 and its memory: NOT_FOUND to read,
    FORBIDDEN to write, as over HTTP; the SOUL of client b's agent is NOT_FOUND."""
    agent = make_agent("a")
    bootstrap_soul_of("a")
    make_agent("b")
    their_agent = agent_default(caller=Caller(name="b")).pk
    http = agent.http
    theirs = Memory.objects.get(user_id="b:1")
    other = {"user_id": "b:1"}
    cases = [
        ("memory_get", {"memory_id": str(theirs.id)}, http.get(f"/api/v1/memories/{theirs.id}/")),
        (
            "bulk_read_memory",
            {"memory_id": str(theirs.id)},
            http.get(f"/api/v1/memories/{theirs.id}/bulk/"),
        ),
        (
            "memory_search",
            {**other, "q": "tea"},
            http.get("/api/v1/search/", {**other, "q": "tea"}),
        ),
        (
            "memory_recall",
            {**other, "query": "tea"},
            http.post("/api/v1/recall/", {**other, "query": "tea"}, format="json"),
        ),
        ("traits_get", other, http.get("/api/v1/users/b:1/traits/")),
        (
            "memory_add",
            {**other, "content": "Mine now", "memory_type": "fact"},
            http.post(
                "/api/v1/memories/",
                {**other, "content": "Mine now", "memory_type": "fact"},
                format="json",
            ),
        ),
        (
            "memory_delete",
            {"memory_id": str(theirs.id)},
            http.delete(f"/api/v1/memories/{theirs.id}/"),
        ),
        (
            "memory_forget",
            {"user_id": "b:1", "topic": "my address"},
            http.post("/api/v1/users/b:1/forget/", {"topic": "my address"}, format="json"),
        ),
        (
            "soul_rollback",
            {"agent_id": their_agent},
            http.post(f"/api/v1/agents/{their_agent}/soul/rollback/", {}, format="json"),
        ),
    ]
    codes = {}
    with mcp_stdio(agent.token) as mcp:
        for tool, arguments, response in cases:
            expected = error(response)
            codes[tool] = expected["code"]
            assert mcp.error(tool, **arguments) == expected, tool
        # Its own user, by key: found; the other client's, by key: NOT_FOUND.
        assert mcp.data("memory_get", user_id=USER, key="hub")["id"] == str(memories["hub"].id)
        assert mcp.error("memory_get", user_id="b:1", key="hub")["code"] == "NOT_FOUND"
    assert codes == {
        "memory_get": "NOT_FOUND",
        "bulk_read_memory": "NOT_FOUND",
        "memory_search": "NOT_FOUND",
        "memory_recall": "NOT_FOUND",
        "traits_get": "NOT_FOUND",
        "memory_add": "FORBIDDEN",
        "memory_delete": "NOT_FOUND",
        "memory_forget": "FORBIDDEN",
        "soul_rollback": "NOT_FOUND",
    }
    assert Memory.objects.current().filter(user_id="b:1").count() == 1  # untouched
