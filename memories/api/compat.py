"""Seed 004's routes: `/add_memory`, `/get_memory`, `/update_memory`, `/update_memory_key`,
`/search`, `/fulltext` and `/api/memories/{key}/bulk`, for clients written against that API.

Served by the same operations, selectors and services as /api/v1/ (memories/api/operations.py),
in the seed's shapes: memories are addressed by `key` (unique among a user's current
memories), parameters are camelCase (`scoreMin`, `sortLinks`, ...), and a memory reads
`{key, value: {text, summary, links}, meta: {...}}`. Errors name the camelCase field. Like
every route they take a `user_id` and the caller's token, and the removed fields `domain` and
`type` are refused.
"""

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import transaction
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.access import Caller, user_access_check
from core.errors import DomainError, Invalid
from memories.access import accesses_record
from memories.api.operations import bulk_read, bulk_shaped, search_hits
from memories.api.serializers import (
    MEMORY_TYPE_CHOICES,
    ActivityFilterInput,
    SortLinksField,
)
from memories.links import Link, memory_label, memory_links
from memories.models import Memory, MemoryLink
from memories.selectors import (
    activity_filter,
    memories_fulltext,
    memory_get_by_key,
    memory_state,
)
from memories.services import (
    MemoryInput,
    Operation,
    memory_add,
    memory_key_rename,
    memory_link_remove,
    memory_link_set,
    memory_update,
)
from neuromem_site.api.envelope import ApiError
from neuromem_site.api.permissions import user_ids_agree
from neuromem_site.api.serializers import (
    Float4Field,
    JsonObjectField,
    StrictInputSerializer,
    UserIdField,
    UserIdLookupField,
)
from neuromem_site.api.views import validated

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


@contextmanager
def seed_field_names() -> Iterator[None]:
    """Errors raised inside name the field as the seed's routes call it."""
    try:
        yield
    except serializers.ValidationError as error:
        if isinstance(error.detail, dict):
            error.detail = {SEED_NAMES.get(name, name): d for name, d in error.detail.items()}
        raise
    except (ApiError, DomainError) as error:
        error.field = SEED_NAMES.get(error.field, error.field)
        raise


def v1_params(request: Request) -> dict[str, Any]:
    """The query string's seed parameters under their /api/v1/ names (others ignored)."""
    present = [name for name in REMOVED_FIELDS if name in request.query_params]
    if present:
        raise removed_field(present[0])
    return {
        QUERY_NAMES[name]: value
        for name, value in request.query_params.items()
        if name in QUERY_NAMES
    }


def removed_field(name: str) -> ApiError:
    return ApiError(f"'{name}' was removed from the memory API (seed 004).", field=name)


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
    """A memory in seed 004's shape."""
    value: dict[str, Any] = {"text": memory.content}
    summary = (memory.metadata or {}).get("summary")
    if summary is not None:
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
    """A memory in seed 004's shape (for the schema; `seed_memory` builds it)."""

    key = serializers.CharField(help_text="The memory's key, else its id")
    value = serializers.DictField(help_text="`text`, `summary` (when set), `links`")
    meta = serializers.DictField(
        help_text="id, userId, memoryType, score, state, ..., redactions (kind → count)"
    )


NO_MEMORY_WITH_KEY = OpenApiResponse(
    description="No current memory holds the key (or the user is outside the prefixes)"
)
USER_NOT_VISIBLE = OpenApiResponse(description="user_id outside this client's prefixes")


class SeedBodyInput(StrictInputSerializer):
    """A seed route's JSON body: `domain` and `type` name the fields seed 004 removed."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            present = [name for name in REMOVED_FIELDS if name in data]
            if present:
                raise removed_field(present[0])
        return super().to_internal_value(data)


class SeedValueInput(StrictInputSerializer):
    text = serializers.CharField(max_length=settings.MEMORY_MAX_CHARS, trim_whitespace=False)
    summary = serializers.CharField(required=False, max_length=2000)

    def validate_text(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("Must not be blank.")
        return value


class SeedLinkInput(StrictInputSerializer):
    key = serializers.CharField(max_length=255)
    weight = Float4Field(min_value=0, max_value=1)


class AddMemoryInput(SeedBodyInput):
    user_id = UserIdField()
    key = serializers.CharField(max_length=255)
    value = SeedValueInput()
    memoryType = serializers.ChoiceField(MEMORY_TYPE_CHOICES, required=False, default="fact")
    importance = Float4Field(required=False, min_value=0, max_value=1)
    metadata = JsonObjectField(required=False, default=dict)
    links = SeedLinkInput(many=True, required=False, max_length=100)


class GetMemoryInput(SeedBodyInput):
    user_id = UserIdLookupField()
    key = serializers.CharField(max_length=255)
    sortLinks = SortLinksField()


class UpdateMemoryInput(SeedBodyInput):
    user_id = UserIdLookupField()
    key = serializers.CharField(max_length=255)
    value = SeedValueInput(required=False)
    importance = Float4Field(required=False, min_value=0, max_value=1)
    metadata = JsonObjectField(required=False)
    links = SeedLinkInput(
        many=True, required=False, max_length=100, help_text="Replaces the memory's links."
    )


class UpdateMemoryKeyInput(SeedBodyInput):
    user_id = UserIdLookupField()
    key = serializers.CharField(max_length=255)
    newKey = serializers.CharField(max_length=255)


def link_targets(*, caller: Caller, user_id: str, links: list[dict]) -> dict[str, Memory]:
    """The memories `links` name by key, checked before anything is written."""
    targets = {}
    for index, entry in enumerate(links):
        try:
            targets[entry["key"]] = memory_get_by_key(
                caller=caller, user_id=user_id, key=entry["key"]
            )
        except DomainError:
            raise Invalid(
                f"No current memory with key '{entry['key']}'.", field=f"links[{index}].key"
            ) from None
    return targets


def links_replace(*, caller: Caller, memory: Memory, links: list[dict], targets: dict) -> None:
    """Make `links` the memory's links: others removed, new ones made, changed weights set;
    a link that stays as it was is not touched (making a link stamps `last_linked_at`)."""
    wanted = {targets[entry["key"]].id: entry["weight"] for entry in links}
    held = dict(MemoryLink.objects.filter(source_id=memory.id).values_list("target_id", "weight"))
    for target_id in held.keys() - wanted.keys():
        memory_link_remove(source=memory, target_id=target_id, caller=caller)
    for target_id, weight in wanted.items():
        if held.get(target_id) != weight:  # both float4-rounded
            memory_link_set(source=memory, target_id=target_id, weight=weight, caller=caller)


def seed_response(memory: Memory, **extra: Any) -> dict[str, Any]:
    return {**seed_memory(memory, links=memory_links(memory=memory)), **extra}


class AddMemoryApi(APIView):
    @extend_schema(
        request=AddMemoryInput,
        responses={
            201: SeedMemoryOutput,
            200: OpenApiResponse(SeedMemoryOutput, "NOOP: already held"),
            403: OpenApiResponse(description="user_id outside this client's prefixes"),
            409: OpenApiResponse(description="The key is held by another current memory"),
        },
    )
    def post(self, request: Request) -> Response:
        caller = request.user.caller
        data = validated(AddMemoryInput, request.data)
        user_ids_agree(request, data["user_id"])
        user_access_check(caller=caller, user_id=data["user_id"], write=True)
        links = data.get("links", [])
        targets = link_targets(caller=caller, user_id=data["user_id"], links=links)
        metadata = dict(data["metadata"])
        if "summary" in data["value"]:
            metadata["summary"] = data["value"]["summary"]
        with transaction.atomic():  # the memory and its links, or nothing
            result = memory_add(
                item=MemoryInput(
                    user_id=data["user_id"],
                    content=data["value"]["text"],
                    memory_type=data["memoryType"],
                    metadata=metadata,
                    importance=data.get("importance"),
                    key=data["key"],
                ),
                caller=caller,
            )
            # A NOOP changes nothing, links included (update_memory changes them).
            if links and result.operation != Operation.NOOP:
                links_replace(caller=caller, memory=result.memory, links=links, targets=targets)
        code = status.HTTP_200_OK if result.operation == Operation.NOOP else status.HTTP_201_CREATED
        return Response(seed_response(result.memory, operation=result.operation), status=code)


class GetMemoryApi(APIView):
    @extend_schema(
        request=GetMemoryInput, responses={200: SeedMemoryOutput, 404: NO_MEMORY_WITH_KEY}
    )
    def post(self, request: Request) -> Response:
        data = validated(GetMemoryInput, request.data)
        user_ids_agree(request, data["user_id"])
        memory = memory_get_by_key(
            caller=request.user.caller, user_id=data["user_id"], key=data["key"]
        )
        links = memory_links(memory=memory, sort_links=data["sortLinks"])
        return Response(seed_memory(memory, links=links))


class UpdateMemoryApi(APIView):
    @extend_schema(
        request=UpdateMemoryInput,
        responses={
            200: SeedMemoryOutput,
            404: NO_MEMORY_WITH_KEY,
            409: OpenApiResponse(description="The memory changed meanwhile"),
        },
    )
    def post(self, request: Request) -> Response:
        """New `value.text` makes a new version (the key moves to it); `importance`,
        `metadata` and `value.summary` change in place; `links` replace the links. The score
        is the algorithm's."""
        caller = request.user.caller
        data = validated(UpdateMemoryInput, request.data)
        user_ids_agree(request, data["user_id"])
        memory = memory_get_by_key(caller=caller, user_id=data["user_id"], key=data["key"])
        links = data.get("links")
        targets = link_targets(caller=caller, user_id=memory.user_id, links=links or [])
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
        with transaction.atomic():
            if changes:
                memory = memory_update(
                    memory=memory, version=memory.version, changes=changes, caller=caller
                )
            if links is not None:
                links_replace(caller=caller, memory=memory, links=links, targets=targets)
        return Response(seed_response(memory))


class UpdateMemoryKeyApi(APIView):
    @extend_schema(
        request=UpdateMemoryKeyInput,
        responses={
            200: SeedMemoryOutput,
            404: NO_MEMORY_WITH_KEY,
            409: OpenApiResponse(description="`newKey` is held by another current memory"),
        },
    )
    def post(self, request: Request) -> Response:
        caller = request.user.caller
        data = validated(UpdateMemoryKeyInput, request.data)
        user_ids_agree(request, data["user_id"])
        memory = memory_get_by_key(caller=caller, user_id=data["user_id"], key=data["key"])
        try:
            renamed = memory_key_rename(memory=memory, key=data["newKey"], caller=caller)
        except DomainError as error:
            error.field = "newKey" if error.field == "key" else error.field
            raise
        return Response(seed_response(renamed))


class SeedSearchParams(ActivityFilterInput):
    """For the schema: the seed's names of /api/v1/search/'s parameters."""

    user_id = UserIdLookupField()
    q = serializers.CharField()
    limit = serializers.IntegerField(required=False, default=10)
    memoryType = serializers.ChoiceField(["fact", "episodic", "trait", "document"], required=False)
    scoreMin = Float4Field(required=False, min_value=0, max_value=100)
    scoreMax = Float4Field(required=False, min_value=0, max_value=100)
    states = serializers.CharField(required=False)
    includeAllStates = serializers.BooleanField(required=False, default=False)
    sortBy = serializers.ChoiceField(["relevance", "score"], required=False, default="relevance")
    sortOrder = serializers.ChoiceField(["asc", "desc"], required=False, default="desc")
    sortLinks = SortLinksField()

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        for snake in ("state", "score_min", "score_max", "include_all_states", "sort_order"):
            fields.pop(snake)
        return fields


class SearchApi(APIView):
    @extend_schema(
        parameters=[SeedSearchParams],
        responses={200: SeedMemoryOutput(many=True), 404: USER_NOT_VISIBLE},
    )
    def get(self, request: Request) -> Response:
        """Hybrid search (as /api/v1/search/), each hit as a seed memory with its links and
        its `relevance`."""
        with seed_field_names():
            sort_links = sort_links_param(request.query_params.get("sortLinks"))
            hits = search_hits(
                caller=request.user.caller,
                params=v1_params(request),
                agree=lambda user_id: user_ids_agree(request, user_id),
            )
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
    limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=200)

    def validate_keywords(self, value: str) -> list[str]:
        keywords = [keyword.strip() for keyword in value.split(",") if keyword.strip()]
        if not keywords:
            raise serializers.ValidationError("Give at least one keyword.")
        if len(keywords) > 20:
            raise serializers.ValidationError("At most 20 keywords.")
        return keywords


class FulltextApi(APIView):
    @extend_schema(
        parameters=[FulltextInput],
        responses={200: SeedMemoryOutput(many=True), 404: USER_NOT_VISIBLE},
    )
    def get(self, request: Request) -> Response:
        """Full-text search for several keywords (CJK-aware, as recall's text side), best
        match first; each memory with `matched`, the keywords it holds."""
        with seed_field_names():
            sort_links = sort_links_param(request.query_params.get("sortLinks"))
            params = {**v1_params(request), **fulltext_params(request.query_params)}
            data = validated(FulltextInput, params)
        user_ids_agree(request, data["user_id"])
        found = memories_fulltext(
            caller=request.user.caller,
            user_id=data["user_id"],
            keywords=data["keywords"],
            match_all=data["match"] == "all",
            limit=data["limit"],
            activity=activity_filter(data),
        )
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


class BulkApi(APIView):
    @extend_schema(
        parameters=[
            inline_serializer(
                "SeedBulkParams",
                {
                    "user_id": UserIdLookupField(),
                    "depth": serializers.IntegerField(required=False, default=3),
                    "breadth": serializers.IntegerField(required=False, default=5),
                    "total": serializers.IntegerField(required=False, default=20),
                },
            )
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
        """Depth-first read of the memories linked from the one holding `key` (seed 004)."""
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
