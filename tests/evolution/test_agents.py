"""Agents, each with its own SOUL (issue #30): GET/POST /agents/, the SOUL routes on the
default agent and under /agents/{id}/soul/, two agents' lineages, contracts and events kept
apart, and another client's agent answering 404."""

import pytest

from core.access import Caller
from core.errors import NotFound
from evolution.models import Agent, SafetyContract, SoulEvent, SoulVersion
from evolution.services import agent_default
from tests.evolution.conftest import SEED, edited

pytestmark = pytest.mark.django_db

OTHER_SEED = "# SOUL of the helper\n\n## Core principles\n- Answer briefly.\n"


def ok(response, status: int = 200):
    assert response.status_code == status, response.content
    return response.json()["data"]


def error(response, status: int, code: str, field: str | None = None) -> dict:
    assert response.status_code == status, response.content
    body = response.json()["error"]
    assert body["code"] == code
    if field is not None:
        assert body["field"] == field
    return body


@pytest.fixture
def a(make_client):
    return make_client("a", ["a:"])[0]


@pytest.fixture
def b(make_client):
    return make_client("b", ["b:"])[0]


@pytest.fixture
def staff(make_client):
    return make_client("ops", [], staff=True)[0]


def test_every_client_has_a_default_agent_named_after_it(a):
    (default,) = ok(a.get("/api/v1/agents/"))
    assert (default["name"], default["client"], default["is_default"]) == ("a", "a", True)
    again = ok(a.get("/api/v1/agents/"))
    assert again == [default]


def test_a_client_s_default_agent_is_made_with_it_so_a_refused_call_makes_nothing(make_client):
    fresh, _ = make_client("fresh", ["f:"])
    made = list(Agent.objects.values_list("client__name", "name", "is_default"))
    assert made == [("fresh", "fresh", True)]
    error(fresh.post("/api/v1/soul/proposals/", {"content": ""}, "json"), 400, "VALIDATION_ERROR")
    assert list(Agent.objects.values_list("client__name", "name", "is_default")) == made


def test_a_client_creates_more_agents_and_lists_only_its_own(a, b, staff):
    helper = ok(a.post("/api/v1/agents/", {"name": "helper"}, "json"), 201)
    assert (helper["name"], helper["client"], helper["is_default"]) == ("helper", "a", False)
    ok(b.get("/api/v1/agents/"))

    assert [agent["name"] for agent in ok(a.get("/api/v1/agents/"))] == ["a", "helper"]
    assert [agent["name"] for agent in ok(b.get("/api/v1/agents/"))] == ["b"]
    assert {agent["name"] for agent in ok(staff.get("/api/v1/agents/"))} == {
        "a",
        "helper",
        "b",
        "ops",
    }
    deployment = Agent.objects.create(name="default", is_default=True)  # no client: staff's
    listed = {agent["id"]: agent for agent in ok(staff.get("/api/v1/agents/"))}
    assert listed[deployment.pk]["client"] is None
    assert deployment.pk not in [agent["id"] for agent in ok(a.get("/api/v1/agents/"))]
    error(a.post("/api/v1/agents/", {"name": "helper"}, "json"), 409, "CONFLICT", "name")
    error(a.post("/api/v1/agents/", {"name": ""}, "json"), 400, "VALIDATION_ERROR", "name")
    error(a.post("/api/v1/agents/", {"name": "x" * 101}, "json"), 400, "VALIDATION_ERROR", "name")
    error(a.post("/api/v1/agents/", {}, "json"), 400, "VALIDATION_ERROR", "name")
    for name in ("a\tb", "a\x01b", "helper\n", "   "):
        refused = error(a.post("/api/v1/agents/", {"name": name}, "json"), 400, "VALIDATION_ERROR")
        assert refused["field"] == "name", name
    assert len(ok(a.get("/api/v1/agents/"))) == 2
    spaced = ok(a.post("/api/v1/agents/", {"name": "  spaced  "}, "json"), 201)
    assert spaced["name"] == "spaced"


def test_two_agents_souls_are_kept_apart(a):
    helper = ok(a.post("/api/v1/agents/", {"name": "helper"}, "json"), 201)
    helper_soul = f"/api/v1/agents/{helper['id']}/soul"
    ok(a.post("/api/v1/soul/bootstrap/", {"content": SEED}, "json"), 201)
    ok(a.post(f"{helper_soul}/bootstrap/", {"content": OTHER_SEED}, "json"), 201)
    body = {"intent": "examples", "new_content": edited("Use examples."), "auto_apply": False}
    ok(a.post("/api/v1/soul/proposals/", body, "json"), 201)
    body = {"intent": "shorter", "new_content": OTHER_SEED + "- Be short.\n"}
    applied = ok(a.post(f"{helper_soul}/proposals/", body, "json"), 201)

    # Numbers, the active version, pending proposals, contracts and events are per agent.
    assert (applied["status"], applied["version"]) == ("applied", 1)
    default = ok(a.get("/api/v1/soul/"))
    assert (default["version"], default["content"]) == (0, SEED)
    other = ok(a.get(f"{helper_soul}/"))
    assert (other["version"], other["pending_proposals"]) == (1, [])
    assert [v["version"] for v in ok(a.get(f"{helper_soul}/versions/"))] == [1, 0]
    # SEED marks no sections and no staff wrote one: the default agent's proposal failed
    # closed, the helper's passed against the contract its own SOUL states.
    waiting = ok(a.get("/api/v1/soul/versions/1/"))
    assert (waiting["status"], waiting["eval"]["error_code"]) == (
        "proposed",
        "GUARD_CONTRACT_UNAVAILABLE",
    )
    assert ok(a.get(f"{helper_soul}/versions/1/"))["status"] == "active"
    contract = ok(a.get(f"{helper_soul}/contract/"))  # follows the applied version
    assert contract["extracted_anchors"] == ["Answer briefly.", "Be short."]
    error(a.get("/api/v1/soul/contract/"), 404, "NOT_FOUND")  # SEED marks no sections
    assert SoulVersion.objects.filter(version=1).count() == 2
    assert SoulEvent.objects.filter(version=1).values("agent").distinct().count() == 2
    assert SafetyContract.objects.values("agent").distinct().count() == 1


def test_another_client_s_agent_is_not_found_and_unchanged(a, b, staff):
    helper = ok(a.post("/api/v1/agents/", {"name": "helper"}, "json"), 201)
    helper_soul = f"/api/v1/agents/{helper['id']}/soul"
    ok(a.post(f"{helper_soul}/bootstrap/", {"content": SEED}, "json"), 201)

    for response in (
        b.get(f"{helper_soul}/"),
        b.get(f"{helper_soul}/versions/"),
        b.get(f"{helper_soul}/versions/0/"),
        b.get(f"{helper_soul}/contract/"),
        b.post(f"{helper_soul}/bootstrap/", {"content": SEED}, "json"),
        b.post(f"{helper_soul}/proposals/", {"intent": "x", "new_content": edited("x")}, "json"),
        b.post(f"{helper_soul}/rollback/", {"action": "veto", "reason": "mine"}, "json"),
        b.post(f"{helper_soul}/versions/0/veto/", {"reason": "mine"}, "json"),
        b.get("/api/v1/agents/999999/soul/"),
        b.get(f"/api/v1/agents/{2**70}/soul/"),
    ):
        assert error(response, 404, "NOT_FOUND")["message"] == "Agent not found."
    assert list(SoulVersion.objects.values_list("version", "status")) == [(0, "active")]
    # Staff reach every agent.
    assert ok(staff.get(f"{helper_soul}/"))["content"] == SEED


def test_a_non_staff_caller_without_a_client_has_no_default_agent():
    with pytest.raises(NotFound):
        agent_default(caller=Caller(name="nobody", user_prefixes=("n:",)))
    assert not Agent.objects.exists()


def test_a_non_staff_client_proposes_to_each_of_its_agents(a):
    helper = ok(a.post("/api/v1/agents/", {"name": "helper"}, "json"), 201)
    helper_soul = f"/api/v1/agents/{helper['id']}/soul"
    ok(a.post(f"{helper_soul}/bootstrap/", {"content": OTHER_SEED}, "json"), 201)

    dropped = {"intent": "drop it", "new_content": "# SOUL of the helper\n\n- Anything.\n"}
    rejected = ok(a.post(f"{helper_soul}/proposals/", dropped, "json"), 201)

    # Judged at once against the contract its bootstrap stated.
    assert rejected["status"] == "rejected"
    assert "GUARD_ANCHOR_MISSING" in rejected["eval"]["checks"][0]["detail"]
    assert rejected["eval"]["error_code"] is None
