"""The key-addressed routes: `/add_memory`, `/get_memory`, `/update_memory`,
`/update_memory_key`, `/search`, `/fulltext` and `/api/memories/{key}/bulk`, at the site root,
for clients written against an older memory API.

Served by the same operations, selectors and services as /api/v1/ (memories/api/operations.py),
in that API's shapes: memories are addressed by `key` (unique among a user's current
memories), parameters are camelCase (`scoreMin`, `sortLinks`, ...), and a memory reads
`{key, value: {text, summary, links}, meta: {...}}`. Errors name the camelCase field. Like
every route they take a `user_id` and the caller's token, and the removed fields `domain` and
`type` are refused.
"""

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, ClassVar

from django.conf import settings
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import DomainError
from core.risk import RiskLevel
from core.validation import NON_BLANK_TEXT_PATTERN
from memories.access_counts import accesses_record
from memories.api.operations import bulk_read, bulk_shaped, search_hits
from memories.api.serializers.memories import (
    MEMORY_TYPE_CHOICES,
    ActivityFilterInput,
    BulkLimitsInput,
    SortLinksField,
)
from memories.api.serializers.recall import SearchInput
from memories.api.views import memory_add_answers
from memories.links import Link, memory_label, memory_links
from memories.models import Memory
from memories.selectors import (
    activity_filter,
    memories_fulltext,
    memory_get_by_key,
    memory_state,
)
from memories.services import (
    KeyedLink,
    MemoryInput,
    Operation,
    memory_add_with_links,
    memory_key_rename,
    memory_update_with_links,
)
from neuromem_site.api.envelope import ApiError, error_fields_renamed
from neuromem_site.api.permissions import user_ids_agree
from neuromem_site.api.schema import answers, list_schema
from neuromem_site.api.serializers import (
    Float4Field,
    JsonObjectField,
    QueryInputSerializer,
    RangedIntegerField,
    StrictInputSerializer,
    TextField,
    UserIdField,
    UserIdLookupField,
)
from neuromem_site.api.views import validated_user_input

# camelCase query parameters → the /api/v1/ names the shared serializers validate.
QUERY_NAMES = {
    "user_id": "user_id",
    "q": "q",
    "limit": "limit",
    "memoryType": "memory_type",
    "scoreMin": "score_min",
    "scoreMax": "score_max",
    "states": "state",
    "includeAllStates": "include_all_states",
    "sortBy": "sort_by",
    "sortOrder": "sort_order",
    "depth": "depth",
    "breadth": "breadth",
    "total": "total",
}
SEED_NAMES = {snake: camel for camel, snake in QUERY_NAMES.items()}
REMOVED_FIELDS = ("domain", "type")


def seed_field_names() -> AbstractContextManager[None]:
    """Errors raised inside name the field as these routes call it (camelCase)."""
    return error_fields_renamed(SEED_NAMES)


def v1_params(request: Request) -> dict[str, Any]:
    """The query string's camelCase parameters under their /api/v1/ names (others ignored)."""
    present = [name for name in REMOVED_FIELDS if name in request.query_params]
    if present:
        raise removed_field(present[0])
    return {
        QUERY_NAMES[name]: value
        for name, value in request.query_params.items()
        if name in QUERY_NAMES
    }


def removed_field(name: str) -> ApiError:
    return ApiError(f"'{name}' was removed from the memory API.", field=name)


def sort_links_param(value: Any) -> bool:
    field = SortLinksField()
    try:
        return field.run_validation(True if value is None else value)
    except serializers.ValidationError as error:
        raise serializers.ValidationError({"sortLinks": error.detail}) from None


def seed_link(link: Link) -> dict[str, Any]:
    return {
        "key": link.label,
        "id": str(link.target.id),
        "weight": link.weight,
        "score": link.target.score,
    }


def seed_memory(memory: Memory, *, links: list[Link] | None = None) -> dict[str, Any]:
    """A memory in the key-addressed routes' shape."""
    value: dict[str, Any] = {"text": memory.content}
    summary = (memory.metadata or {}).get("summary")
    if isinstance(summary, str):  # metadata written over /api/v1/ may hold anything there
        value["summary"] = summary
    if links is not None:
        value["links"] = [seed_link(link) for link in links]
    return {
        "key": memory_label(memory),
        "value": value,
        "meta": {
            "id": str(memory.id),
            "userId": memory.user_id,
            "memoryType": memory.memory_type,
            "score": memory.score,
            "state": memory_state(memory),
            "importance": memory.importance,
            "version": memory.version,
            "metadata": memory.metadata,
            "createdAt": memory.created_at.isoformat(),
            "updatedAt": memory.updated_at.isoformat() if memory.updated_at else None,
            "accessCount": memory.access_count,
            "lastAccessedAt": (
                memory.last_accessed_at.isoformat() if memory.last_accessed_at else None
            ),
            "redactions": memory.redactions or {},
        },
    }


class SeedMemoryOutput(serializers.Serializer):
    """A memory in the key-addressed routes' shape (for the schema; `seed_memory` builds it)."""

    key = serializers.CharField(help_text="The memory's key, else its id")
    value = serializers.DictField(help_text="`text`, `summary` (when set), `links`")
    meta = serializers.DictField(
        help_text="id, userId, memoryType, score, state, ..., redactions (kind → count)"
    )


class SeedMemoryWriteOutput(SeedMemoryOutput):
    operation = serializers.ChoiceField(
        [op.value for op in Operation], help_text="ADD, UPDATE or NOOP, as POST /memories/"
    )


class SeedSearchHitOutput(SeedMemoryOutput):
    relevance = serializers.FloatField(help_text="The recall score")


class SeedFulltextHitOutput(SeedMemoryOutput):
    matched = serializers.ListField(
        child=serializers.CharField(), help_text="The keywords the memory holds"
    )


NO_MEMORY_WITH_KEY = OpenApiResponse(
    description="No current memory holds the key (or the user is outside the prefixes)"
)


class SeedBodyInput(StrictInputSerializer):
    """A key-addressed route's JSON body. `domain` and `type`, fields the memory API no longer
    has, are refused (VALIDATION_ERROR naming the field)."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            present = [name for name in REMOVED_FIELDS if name in data]
            if present:
                raise removed_field(present[0])
        return super().to_internal_value(data)


SUMMARY_MAX_CHARS = 2000


class SeedValueInput(StrictInputSerializer):
    text = TextField(max_length=settings.MEMORY_MAX_CHARS)
    summary = serializers.CharField(required=False, max_length=SUMMARY_MAX_CHARS)


class SeedMetadataField(JsonObjectField):
    """`metadata`, whose `summary` is `value.summary`: text, as that is."""

    def to_internal_value(self, data: Any) -> dict:
        metadata = super().to_internal_value(data)
        summary = metadata.get("summary")
        if summary is not None and (
            not isinstance(summary, str) or len(summary) > SUMMARY_MAX_CHARS
        ):
            raise serializers.ValidationError(
                {"summary": [f"Must be text of at most {SUMMARY_MAX_CHARS} characters."]}
            )
        return metadata


class SeedValueChangeInput(SeedValueInput):
    """An update's value: either part alone, the other kept."""

    text = TextField(max_length=settings.MEMORY_MAX_CHARS, required=False)


class SeedLinkInput(StrictInputSerializer):
    key = serializers.CharField(max_length=255)
    weight = Float4Field(min_value=0, max_value=1)


class AddMemoryInput(SeedBodyInput):
    user_id = UserIdField()
    key = serializers.CharField(max_length=255)
    value = SeedValueInput()
    memoryType = serializers.ChoiceField(MEMORY_TYPE_CHOICES, required=False, default="fact")
    importance = Float4Field(required=False, min_value=0, max_value=1)
    metadata = SeedMetadataField(required=False, default=dict)
    links = SeedLinkInput(many=True, required=False, max_length=100)


class GetMemoryInput(SeedBodyInput):
    user_id = UserIdLookupField()
    key = serializers.CharField(max_length=255)
    sortLinks = SortLinksField()


class UpdateMemoryInput(SeedBodyInput):
    user_id = UserIdLookupField()
    key = serializers.CharField(max_length=255)
    value = SeedValueChangeInput(required=False)
    importance = Float4Field(required=False, min_value=0, max_value=1)
    metadata = SeedMetadataField(required=False)
    links = SeedLinkInput(
        many=True, required=False, max_length=100, help_text="Replaces the memory's links."
    )


class UpdateMemoryKeyInput(SeedBodyInput):
    user_id = UserIdLookupField()
    key = serializers.CharField(max_length=255)
    newKey = serializers.CharField(max_length=255)


def keyed_memory(request: Request, input_class: type[SeedBodyInput]) -> tuple[dict, Memory]:
    """The body validated by `input_class`, and the current memory its `user_id` and `key`
    name."""
    data = validated_user_input(request, input_class, request.data)
    memory = memory_get_by_key(caller=request.user.caller, user_id=data["user_id"], key=data["key"])
    return data, memory


def keyed_schema(input_class: type[SeedBodyInput], *, conflict: str | None = None) -> Any:
    """The schema of a route on the memory its body's `user_id` and `key` name (keyed_memory):
    the memory, 404 when no current memory holds the key, and 409 `conflict`."""
    return extend_schema(
        request=input_class,
        responses=answers(200, SeedMemoryOutput, not_found=NO_MEMORY_WITH_KEY, conflict=conflict),
    )


def keyed_links(links: list[dict] | None) -> list[KeyedLink] | None:
    return None if links is None else [KeyedLink(**link) for link in links]


def seed_response(memory: Memory, **extra: Any) -> dict[str, Any]:
    return {**seed_memory(memory, links=memory_links(memory=memory)), **extra}


class AddMemoryApi(APIView):
    risk_levels = {"post": RiskLevel.HIGH}

    @extend_schema(
        request=AddMemoryInput,
        responses=memory_add_answers(
            SeedMemoryWriteOutput, conflict="The key is held by another current memory"
        ),
    )
    def post(self, request: Request) -> Response:
        data = validated_user_input(request, AddMemoryInput, request.data)
        metadata = dict(data["metadata"])
        if "summary" in data["value"]:
            metadata["summary"] = data["value"]["summary"]
        result = memory_add_with_links(
            caller=request.user.caller,
            item=MemoryInput(
                user_id=data["user_id"],
                content=data["value"]["text"],
                memory_type=data["memoryType"],
                metadata=metadata,
                importance=data.get("importance"),
                key=data["key"],
            ),
            links=keyed_links(data.get("links", [])),
        )
        code = status.HTTP_200_OK if result.operation == Operation.NOOP else status.HTTP_201_CREATED
        return Response(seed_response(result.memory, operation=result.operation), status=code)


class GetMemoryApi(APIView):
    risk_levels = {"post": RiskLevel.LOW}  # reads: a POST for its JSON body

    @keyed_schema(GetMemoryInput)
    def post(self, request: Request) -> Response:
        data, memory = keyed_memory(request, GetMemoryInput)
        links = memory_links(memory=memory, sort_links=data["sortLinks"])
        return Response(seed_memory(memory, links=links))


class UpdateMemoryApi(APIView):
    risk_levels = {"post": RiskLevel.HIGH}

    @keyed_schema(UpdateMemoryInput, conflict="The memory changed meanwhile")
    def post(self, request: Request) -> Response:
        """New `value.text` makes a new version (the key moves to it); `importance`,
        `metadata` and `value.summary` change in place; `links` replace the links. The score
        is the algorithm's."""
        data, memory = keyed_memory(request, UpdateMemoryInput)
        changes: dict[str, Any] = {}
        value = data.get("value") or {}
        if "text" in value:
            changes["content"] = value["text"]
        if "metadata" in data or "summary" in value:
            changes["metadata"] = dict(data.get("metadata", memory.metadata))
            if "summary" in value:
                changes["metadata"]["summary"] = value["summary"]
        if "importance" in data:
            changes["importance"] = data["importance"]
        with error_fields_renamed({"content": "value.text"}):
            updated = memory_update_with_links(
                caller=request.user.caller,
                memory=memory,
                changes=changes,
                links=keyed_links(data.get("links")),
            )
        return Response(seed_response(updated))


class UpdateMemoryKeyApi(APIView):
    risk_levels = {"post": RiskLevel.HIGH}

    @keyed_schema(UpdateMemoryKeyInput, conflict="`newKey` is held by another current memory")
    def post(self, request: Request) -> Response:
        data, memory = keyed_memory(request, UpdateMemoryKeyInput)
        try:
            renamed = memory_key_rename(
                memory=memory, key=data["newKey"], caller=request.user.caller
            )
        except DomainError as error:
            error.field = "newKey" if error.field == "key" else error.field
            raise
        return Response(seed_response(renamed))


class SeedParams(QueryInputSerializer):
    """For the schema: the parameters `v1_input` validates, as these routes spell them
    (camelCase), and `sortLinks`."""

    v1_input: ClassVar[type[serializers.Serializer]]

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = self.v1_input().get_fields()
        return {SEED_NAMES.get(name, name): field for name, field in fields.items()} | {
            "sortLinks": SortLinksField()
        }


class SeedSearchParams(SeedParams):
    v1_input = SearchInput


class SeedSearchApi(APIView):
    @list_schema(SeedSearchParams, SeedSearchHitOutput)
    def get(self, request: Request) -> Response:
        """Hybrid search (as /api/v1/search/, but under recall's question rules: these routes'
        clients recall by it), each hit a memory in these routes' shape with its links and its
        `relevance` (the recall score)."""
        with seed_field_names():
            sort_links = sort_links_param(request.query_params.get("sortLinks"))
            data = validated_user_input(request, SearchInput, v1_params(request))
            hits = search_hits(caller=request.user.caller, data=data, answering=True)
        return Response(
            [
                {
                    **seed_memory(
                        hit.memory, links=memory_links(memory=hit.memory, sort_links=sort_links)
                    ),
                    "relevance": hit.score,
                }
                for hit in hits
            ]
        )


class FulltextInput(ActivityFilterInput):
    user_id = UserIdLookupField()
    keywords = serializers.CharField(max_length=2000, help_text="Comma-separated keywords.")
    match = serializers.ChoiceField(
        ["any", "all"], required=False, default="any", help_text="Any keyword, or all of them."
    )
    limit = RangedIntegerField(minimum=1, maximum=200, required=False, default=10)

    def validate_keywords(self, value: str) -> list[str]:
        keywords = [keyword.strip() for keyword in value.split(",") if keyword.strip()]
        if not keywords:
            raise serializers.ValidationError("Give at least one keyword.")
        if len(keywords) > 20:
            raise serializers.ValidationError("At most 20 keywords.")
        return keywords


class SeedFulltextParams(SeedParams):
    v1_input = FulltextInput


class FulltextApi(APIView):
    @list_schema(SeedFulltextParams, SeedFulltextHitOutput)
    def get(self, request: Request) -> Response:
        """Full-text search for several keywords (CJK-aware, as recall's text side), best
        match first; each memory with `matched`, the keywords it holds."""
        with seed_field_names():
            sort_links = sort_links_param(request.query_params.get("sortLinks"))
            params = {**v1_params(request), **fulltext_params(request.query_params)}
            data = validated_user_input(request, FulltextInput, params)
        found = memories_fulltext(
            caller=request.user.caller,
            user_id=data["user_id"],
            keywords=data["keywords"],
            match_all=data["match"] == "all",
            limit=data["limit"],
            activity=activity_filter(data),
        )
        if data["sort_order"] == "asc":  # as /search: the same hits, best last
            found.reverse()
        accesses_record(memory_ids=[memory.id for memory, _ in found])  # as search hits do
        return Response(
            [
                {
                    **seed_memory(memory, links=memory_links(memory=memory, sort_links=sort_links)),
                    "matched": matched,
                }
                for memory, matched in found
            ]
        )


def fulltext_params(query: Mapping[str, str]) -> dict[str, str]:
    return {name: query[name] for name in ("keywords", "match") if name in query}


class SeedBulkParams(BulkLimitsInput):
    user_id = UserIdLookupField()


class BulkApi(APIView):
    @extend_schema(
        parameters=[
            SeedBulkParams,
            # As MemoryLookupInput's `key`.
            OpenApiParameter(
                "key",
                {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 255,
                    "pattern": NON_BLANK_TEXT_PATTERN,
                },
                OpenApiParameter.PATH,
            ),
        ],
        responses=inline_serializer(
            "SeedBulkRead",
            {
                "targetMemory": SeedMemoryOutput(),
                "associatedMemories": serializers.ListField(child=serializers.DictField()),
                "metadata": serializers.DictField(),
            },
        ),
    )
    def get(self, request: Request, key: str) -> Response:
        """Depth-first read of the memories linked from the one holding `key`, each in these
        routes' shape."""
        with seed_field_names():
            params = {**v1_params(request), "key": key}
            if "user_id" not in params:
                raise ApiError("This parameter is required.", field="user_id")
            user_ids_agree(request, params["user_id"])
            read = bulk_read(caller=request.user.caller, params=params)
        return Response(
            bulk_shaped(
                read,
                target=lambda memory: seed_memory(memory, links=memory_links(memory=memory)),
                reached=seed_memory,
            )
        )
