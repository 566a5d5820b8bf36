"""The SOUL operations both the HTTP views and the MCP tools run (one code path): each takes the
`Caller` and the request's parameters, validates them with the route's serializer, and answers
the JSON data the HTTP route puts in the envelope's `data`, or raises the error the envelope
reports (neuromem_site/api/envelope.py). Staff-only operations are refused by the services, for
every caller that is not staff, whichever way it called."""

from collections.abc import Mapping
from typing import Any

from core.access import Caller
from core.errors import NotFound
from evolution.api.serializers import (
    SoulActiveOutput,
    SoulProposalInput,
    SoulProposalResultOutput,
    SoulRollbackInput,
    SoulVersionOutput,
)
from evolution.selectors import soul_active, soul_markdown, soul_proposals_pending
from evolution.services import SoulProposal, soul_propose_and_apply, soul_rollback
from neuromem_site.api.serializers import validated_input


def soul_status_result(*, caller: Caller, params: Mapping[str, Any]) -> dict[str, Any]:
    """GET /soul/: the active version, its `SOUL.md` text and the proposals waiting. Every
    client may read it; `params` takes nothing."""
    active = soul_active()
    if active is None:
        raise NotFound("No SOUL yet: a staff client bootstraps it with POST /soul/bootstrap/.")
    context = {
        "soul_md": soul_markdown(active),
        "pending_proposals": [proposal.version for proposal in soul_proposals_pending()],
    }
    return SoulActiveOutput(active, context=context).data


def soul_propose_result(*, caller: Caller, params: Mapping[str, Any]) -> dict[str, Any]:
    """POST /soul/proposals/ (201): record the proposal as the next version, evaluate it and,
    when it passes and `auto_apply`, apply it. `status` is applied, proposed or rejected."""
    data = validated_input(SoulProposalInput, params)
    auto_apply = data.pop("auto_apply")
    outcome = soul_propose_and_apply(
        caller=caller, proposal=SoulProposal(**data), auto_apply=auto_apply
    )
    version = outcome.version
    if outcome.applied:
        state = "applied"
    else:
        state = "proposed" if version.eval_result["passed"] else "rejected"
    return SoulProposalResultOutput(
        {"status": state, "version": version.version, "eval": version.eval_result}
    ).data


def soul_rollback_result(*, caller: Caller, params: Mapping[str, Any]) -> dict[str, Any]:
    """POST /soul/rollback/ (201), staff only: a new active version with the content of the
    previous stable version, or of `to_version`."""
    data = validated_input(SoulRollbackInput, params)
    restored = soul_rollback(
        caller=caller, to_version=data.get("to_version"), reason=data["reason"]
    )
    return SoulVersionOutput(restored).data
