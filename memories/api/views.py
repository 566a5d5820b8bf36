from collections.abc import Callable
from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import DomainError
from core.risk import RiskLevel
from memories.api.operations import (
    entity_get_result,
    memory_add_result,
    memory_bulk_result,
    memory_delete_result,
    memory_get_result,
    memory_history_result,
    memory_invalidate_result,
    memory_link_remove_result,
    memory_link_set_result,
    memory_recall_result,
    memory_supersede_result,
    memory_update_result,
    memory_versions_result,
    search_hits,
    session_end_result,
    session_message_result,
    session_open_result,
    user_export_result,
    user_forget_result,
)
from memories.api.serializers.graph import (
    EdgeRecordOutput,
    EntitiesParams,
    EntityDetailOutput,
    EntityOutput,
)
from memories.api.serializers.memories import (
    BulkLimitsInput,
    HistoryOutput,
    LinkInput,
    LinkOutput,
    LinkRemoveInput,
    MemoryBatchInput,
    MemoryCreateInput,
    MemoryGetParams,
    MemoryInvalidateInput,
    MemoryListInput,
    MemoryOutput,
    MemorySupersedeInput,
    MemoryUpdateInput,
    MemoryWithLinksOutput,
)
from memories.api.serializers.recall import (
    CompactRecallOutput,
    RecallInput,
    RecallOutput,
    ScoredSearchHitOutput,
    SearchHitOutput,
    SearchInput,
)
from memories.api.serializers.users import (
    ForgetInput,
    ForgetOutput,
    ForgetRequestOutput,
    ForgottenRecordOutput,
    MessageInput,
    MessageOutput,
    SessionCreateInput,
    SessionOutput,
)
from memories.graph.selectors import ENTITY_ORDERING, entities_list
from memories.models import ForgetVia
from memories.selectors import MEMORY_SORT_FIELDS, memory_get, memory_list
from memories.services import MemoryInput, Operation, memory_add_many, user_purge
from neuromem_site.api.envelope import api_error_response
from neuromem_site.api.pagination import EnvelopeCursorPagination, page_response
from neuromem_site.api.permissions import user_filter_check, user_ids_agree
from neuromem_site.api.schema import OUTSIDE_PREFIXES, answers, list_schema
from neuromem_site.api.serializers import validated_input
from neuromem_site.api.views import validated_user_input

WriteOutput = inline_serializer(
    "MemoryWrite",
    {
        "operation": serializers.ChoiceField([op.value for op in Operation]),
        "memory": MemoryOutput(),
        "redactions": serializers.DictField(
            child=serializers.IntegerField(),
            help_text="What was redacted from the memory, kind → count (its own `redactions`)",
        ),
        "superseded": serializers.UUIDField(required=False),
    },
)


def memory_add_answers(output: Any, description: str | None = None, *, conflict: str) -> Any:
    """The answers of a route that adds a memory (here and seed 004's): `output` on 201, or on
    200 when it is held already (NOOP); 403 for a user_id outside the client's prefixes, 409
    `conflict`."""
    return answers(
        201,
        output,
        description,
        existing="NOOP: already held",
        forbidden=OUTSIDE_PREFIXES,
        conflict=conflict,
    )


class MemoryListCreateApi(APIView):
    risk_levels = {"post": RiskLevel.HIGH}

    @extend_schema(
        request=MemoryCreateInput,
        responses=memory_add_answers(
            WriteOutput,
            "ADD, or UPDATE (a near duplicate superseded)",
            conflict="The key is held, or the content is held under another key",
        ),
    )
    def post(self, request: Request) -> Response:
        data = validated_user_input(request, MemoryCreateInput, request.data)
        added = memory_add_result(caller=request.user.caller, data=data)
        code = status.HTTP_201_CREATED if added.created else status.HTTP_200_OK
        return Response(added.data, status=code)

    @list_schema(MemoryListInput, MemoryOutput)
    def get(self, request: Request) -> Response:
        filters = validated_input(MemoryListInput, request.query_params)
        user_filter_check(request, filters.get("user_id"))
        direction = "-" if filters["sort_order"] == "desc" else ""
        return page_response(
            request,
            self,
            memory_list(caller=request.user.caller, filters=filters),
            ordering=(direction + MEMORY_SORT_FIELDS[filters["sort_by"]], "-id"),
            item_output=MemoryOutput,
            context={"include_embedding": filters.get("include") == "embedding"},
            may_lag_for=request.user.caller.name,
        )


class MemoryBatchApi(APIView):
    risk_levels = {"post": RiskLevel.HIGH}
    max_body_bytes = settings.API_BATCH_BODY_MAX_BYTES  # see ApiErrorEnvelopeMiddleware

    @extend_schema(
        request=MemoryBatchInput,
        responses=inline_serializer(
            "MemoryBatchResult",
            {"results": serializers.ListField(child=serializers.DictField())},
        ),
    )
    def post(self, request: Request) -> Response:
        raw_items = validated_input(MemoryBatchInput, request.data)["items"]
        items, errors = [], {}
        for index, raw in enumerate(raw_items):
            serializer = MemoryCreateInput(data=raw)
            if not serializer.is_valid():
                errors[index] = api_error_response(serializers.ValidationError(serializer.errors))
                continue
            try:
                user_ids_agree(request, serializer.validated_data["user_id"])
            except exceptions.APIException as error:  # for this item only
                errors[index] = api_error_response(error)
                continue
            items.append((index, MemoryInput(**serializer.validated_data)))
        outcomes = memory_add_many(items=[item for _, item in items], caller=request.user.caller)
        results: dict[int, dict[str, Any]] = {}
        for (index, _), outcome in zip(items, outcomes, strict=True):
            if isinstance(outcome, DomainError):
                errors[index] = api_error_response(outcome)
            else:
                # Compact: a batch answers with ids, not 1,000 full memories (GET them).
                results[index] = {
                    "index": index,
                    "ok": True,
                    "operation": outcome.operation,
                    "id": str(outcome.memory.id),
                    "version": outcome.memory.version,
                    "redactions": outcome.memory.redactions or {},
                    **({"superseded": str(outcome.superseded.id)} if outcome.superseded else {}),
                }
        for index, response in errors.items():
            results[index] = {"index": index, "ok": False, "error": response.data["error"]}
        return Response({"results": [results[index] for index in sorted(results)]})


def path_params(request: Request, memory_id: str) -> dict[str, Any]:
    """The query string's parameters and the memory the path names: the path names it alone
    (a `user_id` or `key` in the query string is no parameter of these routes: ignored, as
    other unknown ones are)."""
    query = request.query_params.dict()
    named = {name: value for name, value in query.items() if name not in ("user_id", "key")}
    return {**named, "memory_id": memory_id}


def on_path_memory(
    request: Request, memory_id: str, operation: Callable[..., Any], **arguments: Any
) -> Any:
    """`operation(caller=, memory=, **arguments)` on the memory the path names (NOT_FOUND if
    not the caller's)."""
    caller = request.user.caller
    memory = memory_get(caller=caller, memory_id=memory_id)
    return operation(caller=caller, memory=memory, **arguments)


def memory_step_schema(
    request: type[serializers.Serializer],
    code: int,
    description: str | None = None,
    *,
    conflict: str,
) -> Any:
    """The schema of a change to the memory the path names, with a `request` body: the memory
    as the change leaves it, on `code`; 409 `conflict` when the change no longer applies."""
    return extend_schema(
        request=request, responses=answers(code, MemoryOutput, description, conflict=conflict)
    )


class MemoryDetailApi(APIView):
    risk_levels = {"patch": RiskLevel.HIGH, "delete": RiskLevel.HIGH}

    @extend_schema(parameters=[MemoryGetParams], responses=MemoryWithLinksOutput)
    def get(self, request: Request, memory_id: str) -> Response:
        return Response(
            memory_get_result(caller=request.user.caller, params=path_params(request, memory_id))
        )

    @memory_step_schema(
        MemoryUpdateInput, 200, conflict="`version` is stale (`current_version`) or deleted"
    )
    def patch(self, request: Request, memory_id: str) -> Response:
        return Response(
            on_path_memory(request, memory_id, memory_update_result, params=request.data)
        )

    @extend_schema(responses=answers(200, MemoryOutput, "The memory, now expired"))
    def delete(self, request: Request, memory_id: str) -> Response:
        return Response(
            memory_delete_result(caller=request.user.caller, params={"memory_id": memory_id})
        )


class MemoryLinksApi(APIView):
    risk_levels = {"post": RiskLevel.HIGH, "delete": RiskLevel.HIGH}

    @extend_schema(
        request=LinkInput,
        responses=answers(
            201,
            LinkOutput,
            "A new link",
            existing="The existing link, with the new weight",
            conflict="The memory is no longer current",
        ),
    )
    def post(self, request: Request, memory_id: str) -> Response:
        linked = on_path_memory(request, memory_id, memory_link_set_result, params=request.data)
        code = status.HTTP_201_CREATED if linked.created else status.HTTP_200_OK
        return Response(linked.data, status=code)

    @extend_schema(
        parameters=[LinkRemoveInput],
        responses={200: OpenApiResponse(description="Removed"), 404: OpenApiResponse()},
    )
    def delete(self, request: Request, memory_id: str) -> Response:
        return Response(
            on_path_memory(
                request, memory_id, memory_link_remove_result, params=request.query_params
            )
        )


BulkReadOutput = inline_serializer(
    "BulkRead",
    {
        "targetMemory": MemoryWithLinksOutput(),
        "associatedMemories": serializers.ListField(child=serializers.DictField()),
        "metadata": inline_serializer(
            "BulkReadMetadata",
            {
                "depthReached": serializers.IntegerField(),
                "totalRetrieved": serializers.IntegerField(),
                "duplicatesSkipped": serializers.IntegerField(),
                "executionTimeMs": serializers.FloatField(),
            },
        ),
    },
)


class MemoryBulkApi(APIView):
    @extend_schema(parameters=[BulkLimitsInput], responses=BulkReadOutput)
    def get(self, request: Request, memory_id: str) -> Response:
        return Response(
            memory_bulk_result(caller=request.user.caller, params=path_params(request, memory_id))
        )


class MemorySupersedeApi(APIView):
    risk_levels = {"post": RiskLevel.HIGH}

    @memory_step_schema(
        MemorySupersedeInput,
        201,
        "The new version",
        conflict="`version` is stale, or the memory is not current",
    )
    def post(self, request: Request, memory_id: str) -> Response:
        return Response(
            on_path_memory(request, memory_id, memory_supersede_result, params=request.data),
            status=status.HTTP_201_CREATED,
        )


class MemoryInvalidateApi(APIView):
    risk_levels = {"post": RiskLevel.HIGH}

    @memory_step_schema(MemoryInvalidateInput, 200, conflict="The memory is no longer current")
    def post(self, request: Request, memory_id: str) -> Response:
        return Response(
            on_path_memory(request, memory_id, memory_invalidate_result, params=request.data)
        )


class MemoryHistoryApi(APIView):
    @extend_schema(responses=HistoryOutput(many=True))
    def get(self, request: Request, memory_id: str) -> Response:
        return Response(on_path_memory(request, memory_id, memory_history_result))


class MemoryVersionsApi(APIView):
    @extend_schema(responses=MemoryOutput(many=True))
    def get(self, request: Request, memory_id: str) -> Response:
        return Response(on_path_memory(request, memory_id, memory_versions_result))


class UserApi(APIView):
    risk_levels = {"delete": RiskLevel.HIGH}

    @extend_schema(
        responses={
            200: inline_serializer(
                "UserPurge",
                {
                    "user_id": serializers.CharField(),
                    "deleted": serializers.DictField(child=serializers.IntegerField()),
                },
            ),
            403: OUTSIDE_PREFIXES,
        }
    )
    def delete(self, request: Request, user_id: str) -> Response:
        user_ids_agree(request, user_id)
        deleted = user_purge(caller=request.user.caller, user_id=user_id)
        return Response({"user_id": user_id, "deleted": deleted})


class UserExportApi(APIView):
    @extend_schema(
        responses=inline_serializer(
            "UserExport",
            {
                "user_id": serializers.CharField(),
                "memories": MemoryOutput(many=True),
                "history": HistoryOutput(many=True),
                "evidence": serializers.ListField(child=serializers.DictField()),
                "sources": serializers.ListField(child=serializers.DictField()),
                "links": serializers.ListField(child=serializers.DictField()),
                "sessions": SessionOutput(many=True),
                "messages": MessageOutput(many=True),
                "cycles": serializers.ListField(child=serializers.DictField()),
                "consistency_issues": serializers.ListField(child=serializers.DictField()),
                "forgotten": ForgottenRecordOutput(many=True),
                "forget_requests": ForgetRequestOutput(many=True),
                "entities": EntityOutput(many=True),
                "edges": EdgeRecordOutput(many=True),
            },
        )
    )
    def get(self, request: Request, user_id: str) -> Response:
        user_ids_agree(request, user_id)
        return Response(user_export_result(caller=request.user.caller, user_id=user_id))


class UserEntitiesApi(APIView):
    """The end user's entities in their memory graph (the user, people, pets, places,
    organisations, things), in the order they became known; `as_of`: those known then."""

    pagination_class = EnvelopeCursorPagination  # also what the schema reads

    @list_schema(EntitiesParams, EntityOutput)
    def get(self, request: Request, user_id: str) -> Response:
        user_ids_agree(request, user_id)
        params = validated_input(EntitiesParams, request.query_params)
        return page_response(
            request,
            self,
            entities_list(caller=request.user.caller, user_id=user_id, as_of=params.get("as_of")),
            ordering=ENTITY_ORDERING,
            item_output=EntityOutput,
        )


class UserEntityApi(APIView):
    """One entity with its edges, current and past (`as_of`: as NeuroMem knew them then)."""

    @extend_schema(
        parameters=[
            EntitiesParams,
            OpenApiParameter("entity_id", OpenApiTypes.UUID, OpenApiParameter.PATH),
        ],
        responses=answers(
            200,
            EntityDetailOutput,
            not_found="user_id outside this client's prefixes, or no such entity of the user",
        ),
    )
    def get(self, request: Request, user_id: str, entity_id: str) -> Response:
        user_ids_agree(request, user_id)
        params = {**request.query_params.dict(), "user_id": user_id, "entity_id": entity_id}
        return Response(entity_get_result(caller=request.user.caller, params=params))


class UserForgetApi(APIView):
    """Forget a topic, or memories by id, for one end user: their content is erased from every
    table (memories, versions, history, messages, search columns); the record of the request
    stays (docs/privacy.md)."""

    risk_levels = {"post": RiskLevel.HIGH}

    @extend_schema(
        request=ForgetInput,
        responses=answers(
            200,
            ForgetOutput,
            forbidden=OUTSIDE_PREFIXES,
            not_found="A memory in `memory_ids` is not this user's",
        ),
    )
    def post(self, request: Request, user_id: str) -> Response:
        user_ids_agree(request, user_id)
        validated_input(ForgetInput, request.data)  # the body alone: its user_id is the path's
        return Response(
            user_forget_result(
                caller=request.user.caller,
                params={**request.data, "user_id": user_id},
                via=ForgetVia.API,
            )
        )


class SessionCreateApi(APIView):
    risk_levels = {"post": RiskLevel.HIGH}

    @extend_schema(
        request=SessionCreateInput,
        responses=answers(201, SessionOutput, forbidden=OUTSIDE_PREFIXES),
    )
    def post(self, request: Request) -> Response:
        data = validated_user_input(request, SessionCreateInput, request.data)
        return Response(
            session_open_result(caller=request.user.caller, data=data),
            status=status.HTTP_201_CREATED,
        )


IngestedMessageOutput = inline_serializer(
    "IngestedMessage",
    {
        "message": MessageOutput(),
        "memories": serializers.ListField(child=serializers.DictField()),
        "forget": ForgetOutput(
            many=True, help_text="One outcome per request to forget in the message."
        ),
        "redactions": serializers.DictField(
            child=serializers.IntegerField(),
            help_text="What was redacted from the message (kind → count).",
        ),
    },
)


class SessionMessageApi(APIView):
    risk_levels = {"post": RiskLevel.HIGH}

    @extend_schema(
        request=MessageInput,
        responses=answers(201, IngestedMessageOutput, conflict="The session has ended"),
    )
    def post(self, request: Request, session_id: str) -> Response:
        return Response(
            session_message_result(
                caller=request.user.caller, session_id=session_id, params=request.data
            ),
            status=status.HTTP_201_CREATED,
        )


class SessionEndApi(APIView):
    risk_levels = {"post": RiskLevel.HIGH}

    @extend_schema(request=None, responses=SessionOutput)
    def post(self, request: Request, session_id: str) -> Response:
        return Response(session_end_result(caller=request.user.caller, session_id=session_id))


class RecallApi(APIView):
    risk_levels = {"post": RiskLevel.LOW}

    @extend_schema(
        request=RecallInput,
        responses={
            200: PolymorphicProxySerializer(
                component_name="RecallResult",
                serializers={"full": RecallOutput, "compact": CompactRecallOutput},
                resource_type_field_name="fields",
            ),
            404: OUTSIDE_PREFIXES,
        },
    )
    def post(self, request: Request) -> Response:
        data = validated_user_input(request, RecallInput, request.data)
        return Response(memory_recall_result(caller=request.user.caller, data=data))


def search_schema(hit_output: type[serializers.Serializer]) -> Any:
    """A search route's schema: SearchInput's parameters, each hit as `hit_output`."""
    return extend_schema_view(get=list_schema(SearchInput, hit_output))


@search_schema(SearchHitOutput)
class MemorySearchApi(APIView):
    # Hybrid search (search_hits), each hit as `hit_output` says.
    hit_output: type[serializers.Serializer] = SearchHitOutput

    def get(self, request: Request) -> Response:
        data = validated_user_input(request, SearchInput, request.query_params)
        hits = search_hits(caller=request.user.caller, data=data)
        return Response(self.hit_output(hits, many=True).data)


@search_schema(ScoredSearchHitOutput)
class MemoryScoredSearchApi(MemorySearchApi):
    # Each hit with the parts of its score.
    hit_output = ScoredSearchHitOutput
