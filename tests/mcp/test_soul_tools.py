"""The SOUL tools act on an agent (issue #30): `agent_id` names one of the caller's agents
(default: its default agent), another client's answers NOT_FOUND, and a non-staff agent
proposes, vetoes and rolls back its own SOUL on the user's word (seed 003, use case D)."""

import json
from typing import Any

import pytest

from evolution.models import SoulEvent, SoulVersion
from evolution.services import agent_create, agent_default, soul_bootstrap
from neuromem_site.mcp.tools import TOOLS, tool_call
from tests.evolution.conftest import SEED, edited

pytestmark = pytest.mark.django_db

ANCHORED = "# SOUL\n\n## Anchors\n- User interest first.\n"


def call(caller, tool: str, **arguments: Any) -> tuple[bool, Any]:
    answer = tool_call(tool=TOOLS[tool], caller=lambda: caller, arguments=arguments)
    return answer.ok, json.loads(answer.text)


def data(caller, tool: str, **arguments: Any) -> Any:
    ok, answer = call(caller, tool, **arguments)
    assert ok, answer
    return answer


def failure(caller, tool: str, **arguments: Any) -> dict[str, Any]:
    ok, answer = call(caller, tool, **arguments)
    assert not ok, answer
    return answer


@pytest.fixture
def a(make_client):
    return make_client("a", ["a:"])[1].caller


@pytest.fixture
def b(make_client):
    return make_client("b", ["b:"])[1].caller


def bootstrap(client, content: str, agent=None):
    target = agent or agent_default(caller=client)
    return soul_bootstrap(agent=target, caller=client, content=content).version


def test_every_soul_tool_takes_an_agent_id():
    for name in ("soul_status", "soul_propose", "soul_rollback"):
        assert "agent_id" in TOOLS[name].input_schema["properties"], name


def test_two_agents_souls_are_kept_apart_over_mcp(a):
    helper = agent_create(caller=a, name="helper")
    bootstrap(a, ANCHORED)
    bootstrap(a, SEED, agent=helper)

    proposed = data(
        a, "soul_propose", intent="examples", new_content=ANCHORED + "- Use examples.\n"
    )
    assert (proposed["status"], proposed["version"]) == ("applied", 1)

    assert data(a, "soul_status")["version"] == 1
    other = data(a, "soul_status", agent_id=helper.pk)
    assert (other["version"], other["content"]) == (0, SEED)
    assert SoulVersion.objects.filter(agent=helper).count() == 1


def test_another_client_s_agent_is_not_found_over_mcp(a, b):
    helper = agent_create(caller=a, name="helper")
    bootstrap(a, ANCHORED, agent=helper)
    change = {"intent": "x", "new_content": ANCHORED + "- Mine.\n"}

    for tool, arguments in (
        ("soul_status", {}),
        ("soul_propose", change),
        ("soul_rollback", {"action": "veto", "reason": "mine"}),
    ):
        answer = failure(b, tool, agent_id=helper.pk, **arguments)
        assert (answer["code"], answer["message"]) == ("NOT_FOUND", "Agent not found.")
    assert list(SoulVersion.objects.values_list("version", flat=True)) == [0]
    assert failure(a, "soul_status", agent_id="one")["field"] == "agent_id"


def test_use_case_d_a_non_staff_agent_vetoes_and_rolls_back_on_the_user_s_word(a):
    bootstrap(a, ANCHORED)
    first = ANCHORED + "- Use examples.\n"
    assert data(a, "soul_propose", intent="examples", new_content=first)["status"] == "applied"

    restored = data(a, "soul_rollback", action="veto", reason="the user: undo that")

    assert (restored["version"], restored["content"], restored["created_by"]) == (
        2,
        ANCHORED,
        "system",
    )
    assert restored["proposal"]["requested_by"] == "a"
    vetoed = SoulEvent.objects.get(version=1, to_status="vetoed")
    assert (vetoed.actor, vetoed.reason) == ("a", "the user: undo that")

    data(a, "soul_propose", intent="again", new_content=first)  # v3
    back = data(a, "soul_rollback", to_version=0, reason="the user prefers the original")
    assert (back["version"], back["content"], back["created_by"]) == (4, ANCHORED, "user")
    statuses = dict(SoulVersion.objects.values_list("version", "status"))
    assert statuses == {
        0: "superseded",
        1: "vetoed",
        2: "superseded",
        3: "rolled_back",
        4: "active",
    }

    refused = failure(a, "soul_rollback", action="veto", to_version=0, reason="x")
    assert (refused["code"], refused["field"]) == ("VALIDATION_ERROR", "to_version")
    assert failure(a, "soul_rollback", action="veto")["field"] == "reason"
    assert SoulVersion.objects.count() == 5


def test_a_proposal_to_an_agent_without_a_soul_conflicts(a):
    answer = failure(a, "soul_propose", intent="x", new_content=edited("x"))
    assert answer["code"] == "CONFLICT"
