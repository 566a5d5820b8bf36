"""The SOUL routes. Each acts on one agent: the caller's default agent under `/soul/…`, the
agent named under `/agents/{agent_id}/soul/…` (another client's answers 404)."""

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import NotFound
from core.risk import RiskLevel
from evolution import services
from evolution.api.operations import (
    guard_check_result,
    soul_propose_result,
    soul_rollback_result,
    soul_status_result,
)
from evolution.api.serializers import (
    AgentInput,
    AgentOutput,
    AgentUpdateInput,
    GuardCheckInput,
    GuardCheckOutput,
    GuardEventListInput,
    GuardEventOutput,
    SafetyContractInput,
    SafetyContractOutput,
    SoulActiveOutput,
    SoulBootstrapInput,
    SoulBootstrapOutput,
    SoulProposalInput,
    SoulProposalResultOutput,
    SoulRollbackInput,
    SoulVersionDetailOutput,
    SoulVersionOutput,
    SoulVersionSummaryOutput,
    SoulVetoInput,
    SoulVetoOutput,
)
from evolution.models import Agent, SoulStatus
from evolution.selectors import (
    agents_visible,
    guard_events,
    soul_active,
    soul_version_detail,
    soul_versions,
)
from neuromem_site.api.pagination import EnvelopeCursorPagination, page_response
from neuromem_site.api.permissions import guard_scope
from neuromem_site.api.schema import STAFF_ONLY, answers
from neuromem_site.api.serializers import validated_input


def route_agent(request: Request, agent_id: int | None) -> Agent:
    """The agent the route acts on, through the one access check."""
    return services.agent_for(caller=request.user.caller, agent_id=agent_id)


# A route acting on one agent: `agent_id` in its path, else the caller's default agent. The
# guardrail gates it for that agent too, whichever agent the call is made for (GuardGate). (A
# comment: drf-spectacular would publish a docstring as its subclasses' description.)
class AgentRouteApi(APIView):
    acts_on_agent = True


class AgentListApi(APIView):
    """The caller's agents (staff: every agent), each with its own SOUL; create another."""

    risk_levels = {"post": RiskLevel.HIGH}

    pagination_class = EnvelopeCursorPagination  # also what the schema reads

    @extend_schema(responses=AgentOutput(many=True))
    def get(self, request: Request) -> Response:
        return page_response(
            request,
            self,
            agents_visible(caller=request.user.caller),
            ordering=("id",),
            item_output=AgentOutput,
        )

    @extend_schema(
        request=AgentInput,
        responses=answers(
            201, AgentOutput, "The new agent (no SOUL yet)", conflict="The name is taken"
        ),
    )
    def post(self, request: Request) -> Response:
        data = validated_input(AgentInput, request.data)
        agent = services.agent_create(caller=request.user.caller, name=data["name"])
        return Response(AgentOutput(agent).data, status=status.HTTP_201_CREATED)


class AgentDetailApi(AgentRouteApi):
    """One of the caller's agents; turn its runtime guardrail on or off."""

    risk_levels = {"patch": RiskLevel.HIGH}

    @extend_schema(responses=answers(200, AgentOutput, not_found="No such agent"))
    def get(self, request: Request, agent_id: int) -> Response:
        return Response(AgentOutput(route_agent(request, agent_id)).data)

    @extend_schema(
        request=AgentUpdateInput,
        responses=answers(200, AgentOutput, "The agent as changed", not_found="No such agent"),
    )
    def patch(self, request: Request, agent_id: int) -> Response:
        agent = route_agent(request, agent_id)
        data = validated_input(AgentUpdateInput, request.data)
        agent = services.agent_update(
            caller=request.user.caller, agent=agent, guard_enabled=data["guard_enabled"]
        )
        return Response(AgentOutput(agent).data)


class GuardCheckApi(APIView):
    """The runtime guardrail's check: is the agent's Core Safety Contract visible in the context
    it is about to send its model? Run it before each model call; the result is the session's
    guard state for that round."""

    guard_exempt = True  # the guard itself: always reachable, or a failed check could not be redone
    max_body_bytes = 4 * settings.GUARD_CONTEXT_MAX_CHARS + 4096  # see ApiErrorEnvelopeMiddleware

    @extend_schema(
        request=GuardCheckInput,
        responses=answers(
            200, GuardCheckOutput, "Checked: passed or not", not_found="No such agent"
        ),
    )
    def post(self, request: Request, agent_id: int | None = None) -> Response:
        agent = route_agent(request, agent_id)
        params = request.data
        if isinstance(params, dict) and "session" not in params:
            params = {**params, "session": guard_scope(request).session}
        return Response(guard_check_result(caller=request.user.caller, agent=agent, params=params))


class GuardEventListApi(APIView):
    """What the agent's runtime guardrail recorded, newest first: failed checks
    (guardrail_warning), refused calls (guardrail_blocked), calls let through while a check had
    failed (guardrail_degraded)."""

    guard_exempt = True
    pagination_class = EnvelopeCursorPagination  # also what the schema reads

    @extend_schema(parameters=[GuardEventListInput], responses=GuardEventOutput(many=True))
    def get(self, request: Request, agent_id: int | None = None) -> Response:
        agent = route_agent(request, agent_id)
        filters = validated_input(GuardEventListInput, request.query_params)
        return page_response(
            request,
            self,
            guard_events(agent=agent, **filters),
            ordering=("-id",),
            item_output=GuardEventOutput,
        )


def version_step_schema(description: str, *, conflict: str) -> Any:
    """The schema of a step on one version (no body): the version as the step leaves it, or
    409 `conflict` when the step does not apply to it."""
    return extend_schema(
        request=None, responses=answers(200, SoulVersionOutput, description, conflict=conflict)
    )


class SoulApi(AgentRouteApi):
    """The active SOUL: its content, as the `SOUL.md` file an agent loads, and the proposals
    waiting."""

    @extend_schema(
        responses=answers(
            200, SoulActiveOutput, not_found="No such agent, or no SOUL yet: bootstrap it"
        )
    )
    def get(self, request: Request, agent_id: int | None = None) -> Response:
        agent = route_agent(request, agent_id)
        return Response(soul_status_result(caller=request.user.caller, agent=agent, params={}))


class SoulBootstrapApi(AgentRouteApi):
    """Import the agent's initial SOUL as version 0 (active), with the contract its marked
    sections state; when it has a SOUL already, nothing changes (skipped)."""

    risk_levels = {"post": RiskLevel.HIGH}

    @extend_schema(
        request=SoulBootstrapInput,
        responses=answers(
            201,
            SoulBootstrapOutput,
            "Version 0, active",
            existing="Skipped: the agent's SOUL exists, its active version",
            not_found="No such agent",
        ),
    )
    def post(self, request: Request, agent_id: int | None = None) -> Response:
        agent = route_agent(request, agent_id)
        data = validated_input(SoulBootstrapInput, request.data)
        outcome = services.soul_bootstrap(
            agent=agent, caller=request.user.caller, content=data["content"]
        )
        body = SoulBootstrapOutput(outcome.version, context={"skipped": outcome.skipped}).data
        code = status.HTTP_200_OK if outcome.skipped else status.HTTP_201_CREATED
        return Response(body, status=code)


class SafetyContractApi(AgentRouteApi):
    """The agent's Core Safety Contract every proposal is evaluated against: what its SOUL's
    marked sections state (refreshed when that text changed), and the staff's additions."""

    risk_levels = {"put": RiskLevel.HIGH}

    @extend_schema(
        responses=answers(
            200,
            SafetyContractOutput,
            not_found="No such agent, or no contract yet (every evaluation fails closed)",
        )
    )
    def get(self, request: Request, agent_id: int | None = None) -> Response:
        contract = services.safety_contract_fresh(agent=route_agent(request, agent_id))
        if contract is None:
            raise NotFound(
                "No Core Safety Contract yet: bootstrap the SOUL, or a staff client PUTs one. "
                "Until then every evaluation fails (GUARD_CONTRACT_UNAVAILABLE)."
            )
        return Response(SafetyContractOutput(contract).data)

    @extend_schema(
        request=SafetyContractInput,
        responses=answers(200, SafetyContractOutput, "The new version", forbidden=STAFF_ONLY),
    )
    def put(self, request: Request, agent_id: int | None = None) -> Response:
        agent = route_agent(request, agent_id)
        data = validated_input(SafetyContractInput, request.data)
        contract = services.safety_contract_update(
            agent=agent,
            caller=request.user.caller,
            anchors=data["anchors"],
            constraints=data["constraints"],
        )
        return Response(SafetyContractOutput(contract).data)


class SoulProposalApi(AgentRouteApi):
    """Propose a change: it is recorded as the next version, evaluated, and (when it passes and
    `auto_apply`) applied."""

    risk_levels = {"post": RiskLevel.HIGH}

    @extend_schema(
        request=SoulProposalInput,
        responses=answers(
            201,
            SoulProposalResultOutput,
            "Recorded: applied, rejected or proposed",
            forbidden="Staff proposing to another client's agent (SOUL_STAFF_PROPOSALS off)",
            not_found="No such agent",
            conflict="No SOUL yet, the proposal changes nothing, or the active version changed "
            "before it could be applied",
        ),
    )
    def post(self, request: Request, agent_id: int | None = None) -> Response:
        agent = route_agent(request, agent_id)
        proposed = soul_propose_result(caller=request.user.caller, agent=agent, params=request.data)
        return Response(proposed, status=status.HTTP_201_CREATED)


class SoulVersionListApi(AgentRouteApi):
    """Every version, newest first: the audit trail."""

    pagination_class = EnvelopeCursorPagination  # also what the schema reads

    @extend_schema(responses=SoulVersionSummaryOutput(many=True))
    def get(self, request: Request, agent_id: int | None = None) -> Response:
        return page_response(
            request,
            self,
            soul_versions(agent=route_agent(request, agent_id)),
            ordering=("-version",),
            item_output=SoulVersionSummaryOutput,
        )


class SoulVersionDetailApi(AgentRouteApi):
    """One version with its events, its evaluation and its diff against its predecessor."""

    @extend_schema(responses=SoulVersionDetailOutput)
    def get(self, request: Request, version: int, agent_id: int | None = None) -> Response:
        detail = soul_version_detail(agent=route_agent(request, agent_id), version=version)
        return Response(SoulVersionDetailOutput(detail).data)


class SoulEvaluateApi(AgentRouteApi):
    """Evaluate a proposal not evaluated yet (an evaluation is recorded once)."""

    risk_levels = {"post": RiskLevel.HIGH}

    @version_step_schema(
        "The proposal with its evaluation", conflict="Not a proposal, or evaluated already"
    )
    def post(self, request: Request, version: int, agent_id: int | None = None) -> Response:
        agent = route_agent(request, agent_id)
        evaluated = services.soul_evaluate(agent=agent, caller=request.user.caller, version=version)
        return Response(SoulVersionOutput(evaluated).data)


class SoulApplyApi(AgentRouteApi):
    """Make a proposal whose evaluation passed the active version."""

    risk_levels = {"post": RiskLevel.HIGH}

    @version_step_schema(
        "The version, now active",
        conflict="Not a proposal, not evaluated, rejected by its evaluation, or made against a "
        "version no longer active",
    )
    def post(self, request: Request, version: int, agent_id: int | None = None) -> Response:
        agent = route_agent(request, agent_id)
        applied = services.soul_apply(agent=agent, caller=request.user.caller, version=version)
        return Response(SoulVersionOutput(applied).data)


class SoulVetoApi(AgentRouteApi):
    """Veto a proposal (it can never be applied) or the active version (the previous stable
    version is restored as a new active one)."""

    risk_levels = {"post": RiskLevel.HIGH}

    @extend_schema(
        request=SoulVetoInput,
        responses=answers(
            200,
            SoulVetoOutput,
            conflict="Neither proposed nor active, or no earlier stable version to return to",
        ),
    )
    def post(self, request: Request, version: int, agent_id: int | None = None) -> Response:
        agent = route_agent(request, agent_id)
        data = validated_input(SoulVetoInput, request.data)
        result = services.soul_veto(
            agent=agent, caller=request.user.caller, version=version, reason=data["reason"]
        )
        active = result if result.status == SoulStatus.ACTIVE else soul_active(agent=agent)
        return Response(SoulVetoOutput({"vetoed": version, "active": active}).data)


class SoulRollbackApi(AgentRouteApi):
    """On the user's word: `rollback` makes a new active version with the content of the
    previous stable version, or of `to_version` (the current one becomes rolled_back); `veto`
    refuses a version (default: the active one, replaced by the previous stable version)."""

    risk_levels = {"post": RiskLevel.HIGH}

    @extend_schema(
        request=SoulRollbackInput,
        responses=answers(
            201,
            SoulVersionOutput,
            "The new active version",
            existing="A proposal vetoed: it, as it is now",
            not_found="No such agent, or the version named does not exist",
            conflict="No active SOUL, nothing earlier to return to, `to_version` was never "
            "active, or the version vetoed is neither proposed nor active",
        ),
    )
    def post(self, request: Request, agent_id: int | None = None) -> Response:
        agent = route_agent(request, agent_id)
        result = soul_rollback_result(caller=request.user.caller, agent=agent, params=request.data)
        created = result["status"] != SoulStatus.VETOED
        return Response(result, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
