from drf_spectacular.utils import OpenApiResponse, extend_schema
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
from neuromem_site.api.pagination import EnvelopeCursorPagination
from neuromem_site.api.views import validated_input

STAFF_ONLY = OpenApiResponse(description="Not a staff client (FORBIDDEN)")


class SoulApi(APIView):
    """The active SOUL: its content, as the `SOUL.md` file an agent loads, and the proposals
    waiting."""

    @extend_schema(
        responses={
            200: SoulActiveOutput,
            404: OpenApiResponse(description="No SOUL yet: a staff client bootstraps it"),
        }
    )
    def get(self, request: Request) -> Response:
        return Response(soul_status_result(caller=request.user.caller, params={}))


class SoulBootstrapApi(APIView):
    """Staff only: import the initial SOUL as version 0 (active), only when no version
    exists."""

    @extend_schema(
        request=SoulBootstrapInput,
        responses={
            201: OpenApiResponse(SoulVersionOutput, "Version 0, active"),
            403: STAFF_ONLY,
            409: OpenApiResponse(description="The SOUL is bootstrapped already"),
        },
    )
    def post(self, request: Request) -> Response:
        data = validated_input(SoulBootstrapInput, request.data)
        version = soul_bootstrap(caller=request.user.caller, content=data["content"])
        return Response(SoulVersionOutput(version).data, status=status.HTTP_201_CREATED)


class SafetyContractApi(APIView):
    """The Core Safety Contract every proposal is evaluated against."""

    @extend_schema(
        responses={
            200: SafetyContractOutput,
            404: OpenApiResponse(description="No contract yet (every evaluation fails closed)"),
        }
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
        responses={200: OpenApiResponse(SafetyContractOutput, "The new version"), 403: STAFF_ONLY},
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
        responses={
            201: OpenApiResponse(
                SoulProposalResultOutput, "Recorded: applied, rejected or proposed"
            ),
            409: OpenApiResponse(
                description="No SOUL yet, the proposal changes nothing, or the active version "
                "changed before it could be applied"
            ),
        },
    )
    def post(self, request: Request) -> Response:
        return Response(
            soul_propose_result(caller=request.user.caller, params=request.data),
            status=status.HTTP_201_CREATED,
        )


class SoulVersionListApi(APIView):
    """Every version, newest first: the audit trail."""

    pagination_class = EnvelopeCursorPagination  # also what the schema reads

    @extend_schema(responses=SoulVersionSummaryOutput(many=True))
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        paginator.ordering = ("-version",)
        page = paginator.paginate_queryset(soul_versions(), request, view=self)
        return paginator.get_paginated_response(SoulVersionSummaryOutput(page, many=True).data)


class SoulVersionDetailApi(APIView):
    """One version with its events, its evaluation and its diff against its predecessor."""

    @extend_schema(responses=SoulVersionDetailOutput)
    def get(self, request: Request, version: int) -> Response:
        return Response(SoulVersionDetailOutput(soul_version_detail(version=version)).data)


class SoulEvaluateApi(APIView):
    """Evaluate a proposal not evaluated yet (an evaluation is recorded once)."""

    @extend_schema(
        request=None,
        responses={
            200: OpenApiResponse(SoulVersionOutput, "The proposal with its evaluation"),
            409: OpenApiResponse(description="Not a proposal, or evaluated already"),
        },
    )
    def post(self, request: Request, version: int) -> Response:
        evaluated = soul_evaluate(caller=request.user.caller, version=version)
        return Response(SoulVersionOutput(evaluated).data)


class SoulApplyApi(APIView):
    """Make a proposal whose evaluation passed the active version."""

    @extend_schema(
        request=None,
        responses={
            200: OpenApiResponse(SoulVersionOutput, "The version, now active"),
            409: OpenApiResponse(
                description="Not a proposal, not evaluated, rejected by its evaluation, or made "
                "against a version no longer active"
            ),
        },
    )
    def post(self, request: Request, version: int) -> Response:
        applied = soul_apply(caller=request.user.caller, version=version)
        return Response(SoulVersionOutput(applied).data)


class SoulVetoApi(APIView):
    """Staff only: veto a proposal (it can never be applied) or the active version (the
    previous stable version is restored as a new active one)."""

    @extend_schema(
        request=SoulVetoInput,
        responses={
            200: SoulVetoOutput,
            403: STAFF_ONLY,
            409: OpenApiResponse(
                description="Neither proposed nor active, or no earlier stable version to return to"
            ),
        },
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
        responses={
            201: OpenApiResponse(SoulVersionOutput, "The new active version"),
            403: STAFF_ONLY,
            404: OpenApiResponse(description="`to_version` does not exist"),
            409: OpenApiResponse(
                description="No active SOUL, nothing earlier to return to, or `to_version` "
                "was never active"
            ),
        },
    )
    def post(self, request: Request) -> Response:
        return Response(
            soul_rollback_result(caller=request.user.caller, params=request.data),
            status=status.HTTP_201_CREATED,
        )
