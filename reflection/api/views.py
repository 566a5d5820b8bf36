from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.risk import RiskLevel
from memories.api.serializers.memories import MemoryOutput
from neuromem_site.api.pagination import EnvelopeCursorPagination, page_response
from neuromem_site.api.permissions import user_filter_check, user_ids_agree
from neuromem_site.api.schema import OUTSIDE_PREFIXES, STAFF_ONLY, answers, list_schema
from neuromem_site.api.serializers import validated_input
from neuromem_site.api.views import validated_user_input
from reflection.api.operations import traits_get_result
from reflection.api.serializers import (
    PromptContextInput,
    PromptContextOutput,
    ReflectionCycleListInput,
    ReflectionCycleOutput,
    ReflectionCycleRequestInput,
    TraitDetailOutput,
    TraitVetoInput,
    UserTraitsOutput,
)
from reflection.selectors import (
    prompt_context,
    reflection_cycle_get,
    reflection_cycles,
    trait_detail,
)
from reflection.services.cycles import reflection_cycle_request
from reflection.services.traits import trait_veto

# POST /reflection/cycles/: the cycle and whether this request queued it.
CycleRequestedOutput = {
    "allOf": [
        {"$ref": "#/components/schemas/ReflectionCycleOutput"},
        {
            "type": "object",
            "required": ["created"],
            "properties": {
                "created": {
                    "type": "boolean",
                    "description": "false: a cycle already queued for the user, answered "
                    "instead of a second one.",
                }
            },
        },
    ]
}


class UserTraitsApi(APIView):
    """The user's believed traits (emerging, established or core, decayed confidence above the
    recall minimum) by subtype, from the decay view (refreshed every 30 minutes and after each
    cycle)."""

    @extend_schema(responses=answers(200, UserTraitsOutput, not_found=OUTSIDE_PREFIXES))
    def get(self, request: Request, user_id: str) -> Response:
        user_ids_agree(request, user_id)  # the path's user_id and the query string's agree
        return Response(traits_get_result(caller=request.user.caller, params={"user_id": user_id}))


class PromptContextApi(APIView):
    """A markdown block for an agent's system prompt: the user's established and core traits,
    then their most important facts, within `max_tokens`."""

    @extend_schema(
        parameters=[PromptContextInput],
        responses=answers(200, PromptContextOutput, not_found=OUTSIDE_PREFIXES),
    )
    def get(self, request: Request, user_id: str) -> Response:
        user_ids_agree(request, user_id)
        params = validated_input(PromptContextInput, request.query_params)
        context = prompt_context(
            caller=request.user.caller, user_id=user_id, max_tokens=params["max_tokens"]
        )
        return Response(PromptContextOutput(context).data)


class TraitDetailApi(APIView):
    @extend_schema(responses=TraitDetailOutput)
    def get(self, request: Request, trait_id: str) -> Response:
        detail = trait_detail(caller=request.user.caller, trait_id=trait_id)
        return Response(TraitDetailOutput(detail).data)


class TraitVetoApi(APIView):
    risk_levels = {"post": RiskLevel.HIGH}

    @extend_schema(
        request=TraitVetoInput,
        responses=answers(
            200,
            MemoryOutput,
            "The trait, now dissolved",
            forbidden=STAFF_ONLY,
            conflict="The trait is already dissolved or no longer current",
        ),
    )
    def post(self, request: Request, trait_id: str) -> Response:
        data = validated_input(TraitVetoInput, request.data)
        trait = trait_veto(caller=request.user.caller, trait_id=trait_id, reason=data["reason"])
        return Response(MemoryOutput(trait).data)


class ReflectionCycleListCreateApi(APIView):
    risk_levels = {"post": RiskLevel.HIGH}
    pagination_class = EnvelopeCursorPagination  # also what the schema reads

    @extend_schema(
        request=ReflectionCycleRequestInput,
        responses=answers(
            202, CycleRequestedOutput, "Queued (or already queued)", forbidden=OUTSIDE_PREFIXES
        ),
    )
    def post(self, request: Request) -> Response:
        data = validated_user_input(request, ReflectionCycleRequestInput, request.data)
        cycle, created = reflection_cycle_request(
            caller=request.user.caller,
            user_id=data["user_id"],
            trigger_type=data["trigger_type"],
        )
        return Response(
            {**ReflectionCycleOutput(cycle).data, "created": created},
            status=status.HTTP_202_ACCEPTED,
        )

    @list_schema(ReflectionCycleListInput, ReflectionCycleOutput)
    def get(self, request: Request) -> Response:
        filters = validated_input(ReflectionCycleListInput, request.query_params)
        user_filter_check(request, filters.get("user_id"))
        cycles = reflection_cycles(caller=request.user.caller, user_id=filters.get("user_id"))
        return page_response(
            request,
            self,
            cycles,
            ordering=("-started_at", "-id"),
            item_output=ReflectionCycleOutput,
        )


class ReflectionCycleDetailApi(APIView):
    @extend_schema(responses=ReflectionCycleOutput)
    def get(self, request: Request, cycle_id: str) -> Response:
        cycle = reflection_cycle_get(caller=request.user.caller, cycle_id=cycle_id)
        return Response(ReflectionCycleOutput(cycle).data)
