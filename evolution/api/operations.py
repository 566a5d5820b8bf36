"""The SOUL operations both the HTTP views and the MCP tools run (one code path): each takes the
`Caller`, the agent it acts on (resolved through the one access check) and the request's
parameters, validates them with the route's serializer, and answers the JSON data the HTTP
route puts in the envelope's `data`, or raises the error the envelope reports
(neuromem_site/api/envelope.py). An MCP tool names its agent by an `agent_id` argument
(`with_agent`), a route by its URL."""

from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from core.access import Caller
from core.errors import NotFound
from evolution.api.serializers import (
    AgentIdInput,
    GuardCheckInput,
    GuardCheckOutput,
    SoulActiveOutput,
    SoulProposalInput,
    SoulProposalResultOutput,
    SoulRollbackInput,
    SoulVersionOutput,
)
from evolution.models import Agent
from evolution.selectors import (
    soul_active,
    soul_markdown,
    soul_proposals_pending,
    soul_version_find,
)
from evolution.services import (
    SoulProposal,
    agent_for,
    guard_check,
    soul_propose_and_apply,
    soul_rollback,
    soul_veto,
)
from neuromem_site.api.serializers import validated_input

Operation = Callable[..., Any]


def with_agent(operation: Operation) -> Operation:
    """`operation` as an MCP tool runs it: the optional `agent_id` argument names the agent
    (default: the caller's default agent); the other arguments are the route's."""

    def run(*, caller: Caller, params: Mapping[str, Any]) -> Any:
        rest = dict(params)
        named = validated_input(AgentIdInput, {"agent_id": rest.pop("agent_id", None)})
        agent = agent_for(caller=caller, agent_id=named["agent_id"])
        return operation(caller=caller, agent=agent, params=rest)

    return run


def soul_status_result(
    *, caller: Caller, agent: Agent, params: Mapping[str, Any]
) -> dict[str, Any]:
    """GET /soul/: the agent's active version, its `SOUL.md` text and the proposals waiting;
    `params` takes nothing."""
    active = soul_active(agent=agent)
    if active is None:
        raise NotFound("No SOUL yet for this agent: bootstrap it with POST /soul/bootstrap/.")
    context = {
        "soul_md": soul_markdown(active),
        "pending_proposals": [proposal.version for proposal in soul_proposals_pending(agent=agent)],
    }
    return SoulActiveOutput(active, context=context).data


def soul_propose_result(
    *, caller: Caller, agent: Agent, params: Mapping[str, Any]
) -> dict[str, Any]:
    """POST /soul/proposals/ (201): record the proposal as the agent's next version, evaluate
    it and, when it passes and `auto_apply`, apply it. `status` is applied, proposed or
    rejected."""
    data = validated_input(SoulProposalInput, params)
    auto_apply = data.pop("auto_apply")
    outcome = soul_propose_and_apply(
        agent=agent, caller=caller, proposal=SoulProposal(**data), auto_apply=auto_apply
    )
    version = outcome.version
    if outcome.applied:
        state = "applied"
    else:
        state = "proposed" if version.eval_result["passed"] else "rejected"
    return SoulProposalResultOutput(
        {"status": state, "version": version.version, "eval": version.eval_result}
    ).data


def soul_rollback_result(
    *, caller: Caller, agent: Agent, params: Mapping[str, Any]
) -> dict[str, Any]:
    """POST /soul/rollback/, on the user's word through their agent. `rollback`: a new active
    version with the content of the previous stable version, or of `to_version`. `veto`: the
    version named (default: the active one) becomes vetoed; a vetoed active version is
    replaced by the previous stable one. Answers the active version afterwards, or the vetoed
    proposal."""
    data = validated_input(SoulRollbackInput, params)
    if data["action"] == "veto":
        named = data.get("version")
        if named is not None and soul_version_find(agent=agent, version=named) is None:
            # Named in the body, unlike the veto route's path: the error says where.
            raise NotFound(f"SOUL version {named} not found.", field="version")
        result = soul_veto(
            agent=agent, caller=caller, version=data.get("version"), reason=data["reason"]
        )
    else:
        result = soul_rollback(
            agent=agent, caller=caller, to_version=data.get("to_version"), reason=data["reason"]
        )
    return SoulVersionOutput(result).data


def guard_check_result(
    *, caller: Caller, agent: Agent, params: Mapping[str, Any]
) -> dict[str, Any]:
    """POST /agents/{id}/guard/check/: check the context the agent is about to send its model
    against its Core Safety Contract; the result is the session's guard state for this round.
    Detection only: a failed check answers 200 with `passed` false (and is recorded)."""
    data = validated_input(GuardCheckInput, params)
    session = data.get("session", "")
    result = guard_check(caller=caller, agent=agent, session=session, context=data["context"])
    return GuardCheckOutput({**asdict(result), "session": session}).data
