from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import NotFound
from evolution.api.operations import (
    soul_propose_result,
    soul_rollback_result,
    soul_status_result,
)
from evolution.api.serializers import (
    SafetyContractInput,
    SafetyContractOutput,
    SoulActiveOutput,
    SoulBootstrapInput,
    SoulProposalInput,
    SoulProposalResultOutput,
    SoulRollbackInput,
    SoulVersionDetailOutput,
    SoulVersionOutput,
    SoulVersionSummaryOutput,
    SoulVetoInput,
    SoulVetoOutput,
)
from evolution.models import SoulStatus
from evolution.selectors import (
    safety_contract_current,
    soul_active,
    soul_version_detail,
    soul_versions,
)
from evolution.services import (
    safety_contract_update,
    soul_apply,
    soul_bootstrap,
    soul_evaluate,
    soul_veto,
)
from neuromem_site.api.pagination import EnvelopeCursorPagination, page_response
from neuromem_site.api.schema import STAFF_ONLY, answers
from neuromem_site.api.serializers import validated_input


def version_step_schema(description: str, *, conflict: str) -> Any:
    """The schema of a step on one version (no body): the version as the step leaves it, or
    409 `conflict` when the step does not apply to it."""
    return extend_schema(
        request=None, responses=answers(200, SoulVersionOutput, description, conflict=conflict)
    )


class SoulApi(APIView):
    """The active SOUL: its content, as the `SOUL.md` file an agent loads, and the proposals
    waiting."""

    @extend_schema(
        responses=answers(
            200, SoulActiveOutput, not_found="No SOUL yet: a staff client bootstraps it"
        )
    )
    def get(self, request: Request) -> Response:
        return Response(soul_status_result(caller=request.user.caller, params={}))


class SoulBootstrapApi(APIView):
    """Staff only: import the initial SOUL as version 0 (active), only when no version
    exists."""

    @extend_schema(
        request=SoulBootstrapInput,
        responses=answers(
            201,
            SoulVersionOutput,
            "Version 0, active",
            forbidden=STAFF_ONLY,
            conflict="The SOUL is bootstrapped already",
        ),
    )
    def post(self, request: Request) -> Response:
        data = validated_input(SoulBootstrapInput, request.data)
        version = soul_bootstrap(caller=request.user.caller, content=data["content"])
        return Response(SoulVersionOutput(version).data, status=status.HTTP_201_CREATED)


class SafetyContractApi(APIView):
    """The Core Safety Contract every proposal is evaluated against."""

    @extend_schema(
        responses=answers(
            200, SafetyContractOutput, not_found="No contract yet (every evaluation fails closed)"
        )
    )
    def get(self, request: Request) -> Response:
        contract = safety_contract_current()
        if contract is None:
            raise NotFound(
                "No Core Safety Contract yet: a staff client PUTs one. Until then every "
                "evaluation fails (GUARD_CONTRACT_UNAVAILABLE)."
            )
        return Response(SafetyContractOutput(contract).data)

    @extend_schema(
        request=SafetyContractInput,
        responses=answers(200, SafetyContractOutput, "The new version", forbidden=STAFF_ONLY),
    )
    def put(self, request: Request) -> Response:
        data = validated_input(SafetyContractInput, request.data)
        contract = safety_contract_update(
            caller=request.user.caller, anchors=data["anchors"], constraints=data["constraints"]
        )
        return Response(SafetyContractOutput(contract).data)


class SoulProposalApi(APIView):
    """Propose a change: it is recorded as the next version, evaluated, and (when it passes and
    `auto_apply`) applied."""

    @extend_schema(
        request=SoulProposalInput,
        responses=answers(
            201,
            SoulProposalResultOutput,
            "Recorded: applied, rejected or proposed",
            conflict="No SOUL yet, the proposal changes nothing, or the active version changed "
            "before it could be applied",
        ),
    )
    def post(self, request: Request) -> Response:
        proposed = soul_propose_result(caller=request.user.caller, params=request.data)
        return Response(proposed, status=status.HTTP_201_CREATED)


class SoulVersionListApi(APIView):
    """Every version, newest first: the audit trail."""

    pagination_class = EnvelopeCursorPagination  # also what the schema reads

    @extend_schema(responses=SoulVersionSummaryOutput(many=True))
    def get(self, request: Request) -> Response:
        return page_response(
            request,
            self,
            soul_versions(),
            ordering=("-version",),
            item_output=SoulVersionSummaryOutput,
        )


class SoulVersionDetailApi(APIView):
    """One version with its events, its evaluation and its diff against its predecessor."""

    @extend_schema(responses=SoulVersionDetailOutput)
    def get(self, request: Request, version: int) -> Response:
        return Response(SoulVersionDetailOutput(soul_version_detail(version=version)).data)


class SoulEvaluateApi(APIView):
    """Evaluate a proposal not evaluated yet (an evaluation is recorded once)."""

    @version_step_schema(
        "The proposal with its evaluation", conflict="Not a proposal, or evaluated already"
    )
    def post(self, request: Request, version: int) -> Response:
        evaluated = soul_evaluate(caller=request.user.caller, version=version)
        return Response(SoulVersionOutput(evaluated).data)


class SoulApplyApi(APIView):
    """Make a proposal whose evaluation passed the active version."""

    @version_step_schema(
        "The version, now active",
        conflict="Not a proposal, not evaluated, rejected by its evaluation, or made against a "
        "version no longer active",
    )
    def post(self, request: Request, version: int) -> Response:
        applied = soul_apply(caller=request.user.caller, version=version)
        return Response(SoulVersionOutput(applied).data)


class SoulVetoApi(APIView):
    """Staff only: veto a proposal (it can never be applied) or the active version (the
    previous stable version is restored as a new active one)."""

    @extend_schema(
        request=SoulVetoInput,
        responses=answers(
            200,
            SoulVetoOutput,
            forbidden=STAFF_ONLY,
            conflict="Neither proposed nor active, or no earlier stable version to return to",
        ),
    )
    def post(self, request: Request, version: int) -> Response:
        data = validated_input(SoulVetoInput, request.data)
        result = soul_veto(caller=request.user.caller, version=version, reason=data["reason"])
        active = result if result.status == SoulStatus.ACTIVE else soul_active()
        return Response(SoulVetoOutput({"vetoed": version, "active": active}).data)


class SoulRollbackApi(APIView):
    """Staff only: a new active version with the content of the previous stable version, or of
    `to_version`; the current one becomes rolled_back."""

    @extend_schema(
        request=SoulRollbackInput,
        responses=answers(
            201,
            SoulVersionOutput,
            "The new active version",
            forbidden=STAFF_ONLY,
            not_found="`to_version` does not exist",
            conflict="No active SOUL, nothing earlier to return to, or `to_version` was never "
            "active",
        ),
    )
    def post(self, request: Request) -> Response:
        restored = soul_rollback_result(caller=request.user.caller, params=request.data)
        return Response(restored, status=status.HTTP_201_CREATED)
