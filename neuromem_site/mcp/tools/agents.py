"""The tools on an end user's traits and on the agent itself: its SOUL and its runtime guard."""

from collections.abc import Callable, Mapping
from typing import Any

from rest_framework import serializers

from core.risk import RiskLevel
from evolution.api.operations import (
    guard_check_result,
    soul_propose_result,
    soul_rollback_result,
    soul_status_result,
    with_agent,
)
from evolution.api.serializers import (
    AgentIdInput,
    GuardCheckInput,
    SoulProposalInput,
    SoulRollbackInput,
)
from neuromem_site.api.serializers import UserIdLookupField
from neuromem_site.mcp.schema import field_schema, object_schema, serializer_schema
from neuromem_site.mcp.tools.base import (
    USER_ID,
    McpTool,
    reading_tool,
    with_properties,
    writing_tool,
)
from reflection.api.operations import traits_get_result

SOUL_AGENT = (
    "Acts on the agent `agent_id` names (one of this client's, GET /agents/; another's is "
    "NOT_FOUND), by default on this client's default agent."
)
SOUL_AGENT_ID = field_schema(AgentIdInput().fields["agent_id"])


def soul_tool(
    *,
    description: str,
    operation: Callable[..., Any],
    input_class: type[serializers.Serializer],
    arguments: Mapping[str, str | dict[str, Any]],
    **declared: Any,
) -> McpTool:
    """A tool that acts on the agent `agent_id` names (with_agent; SOUL_AGENT follows
    `description`): its arguments are `agent_id` and the route's `input_class`'s (`arguments`
    describes them, as serializer_schema's overrides). `declared`: the rest, as writing_tool
    takes it (guard_check says where it differs)."""
    return writing_tool(
        description=f"{description} {SOUL_AGENT}",
        operation=with_agent(operation),
        input_schema=with_properties(
            serializer_schema(input_class, arguments), {"agent_id": SOUL_AGENT_ID}
        ),
        **declared,
    )


AGENT_TOOLS = [
    reading_tool(
        name="traits_get",
        title="An end user's traits",
        description=(
            "The end user's believed traits (emerging, established or core; confidence "
            "decayed over time, above the recall minimum), grouped `core`, `preference`, "
            "`behavior` and `other`, most confident first within each group."
        ),
        operation=traits_get_result,
        input_schema=object_schema(
            {"user_id": field_schema(UserIdLookupField()) | {"description": USER_ID}},
            required=["user_id"],
        ),
    ),
    reading_tool(
        name="soul_status",
        title="The agent's active SOUL",
        description=(
            "The agent's active SOUL: its version, content, the `soul_md` text an agent "
            "loads as SOUL.md, its evaluation, and `pending_proposals` (versions waiting). "
            f"{SOUL_AGENT} NOT_FOUND before the agent's SOUL is bootstrapped."
        ),
        operation=with_agent(soul_status_result),
        input_schema=object_schema({"agent_id": SOUL_AGENT_ID}),
    ),
    soul_tool(
        name="soul_propose",
        title="Propose a SOUL change",
        description=(
            "Propose a new SOUL (the whole markdown document, not a diff) for the agent. It "
            "is recorded as its next version and evaluated against its Core Safety "
            "Contract; with `auto_apply` (default) a proposal that passes becomes active. "
            "Answers `status` (applied, proposed or rejected), `version` and `eval` (the "
            "checks). CONFLICT when there is no SOUL yet, the proposal changes nothing, or "
            "the active version changed meanwhile."
        ),
        operation=soul_propose_result,
        input_class=SoulProposalInput,
        arguments={"risk_notes": "What could go wrong with the change."},
    ),
    soul_tool(
        name="soul_rollback",
        title="Undo a SOUL change on the user's word",
        description=(
            "When the user asks to undo or refuse a change of the agent's SOUL. "
            "`action` rollback (default): a new active version with the content of the "
            "previous stable version, or of `to_version` (a version that was active once); "
            "the current one becomes rolled_back. `action` veto: the version named by "
            "`version` (default: the active one) becomes vetoed; a vetoed active version is "
            "replaced by the previous stable one. Give the user's `reason` (needed for a "
            "veto); the log records who asked. Answers the active version afterwards, or "
            "the vetoed proposal."
        ),
        operation=soul_rollback_result,
        input_class=SoulRollbackInput,
        arguments={"reason": "Why, in the user's words (kept in the audit log)."},
    ),
    soul_tool(
        name="guard_check",
        title="Check the context against the SOUL's safety contract",
        description=(
            "The runtime guardrail's check: call it before each model call with the context "
            "about to be sent (system prompt, compacted context, history). Answers `passed` "
            "and, when not, `missing_anchors` and `violated_constraints` of the agent's Core "
            "Safety Contract with an `error_code` (GUARD_ANCHOR_MISSING, "
            "GUARD_CONSTRAINT_VIOLATED, GUARD_CONTRACT_UNAVAILABLE). Detection only; for an "
            "agent whose guard is on, the result decides this round's high-risk tools: "
            "refused with that code while it failed. `session` (default: the "
            'X-NeuroMem-Session header, else "") names the agent session it speaks for.'
        ),
        operation=guard_check_result,
        input_class=GuardCheckInput,
        arguments={},
        risk=RiskLevel.LOW,
        idempotent=True,
        guard_exempt=True,
    ),
]
