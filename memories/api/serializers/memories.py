"""Memories in and out: writes, lookups, filters, links, and the memory as the API answers it."""

from typing import Any, ClassVar

import numpy as np
from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.validation import HALFVEC_MAX, embedding_problem, is_number
from memories.hooks import trait_belief
from memories.models import LEGACY_MEMORY_TYPES, Memory
from memories.predicates import STATES
from memories.selectors import memory_state, trait_field
from memories.traits import TRAIT_METADATA
from neuromem_site.api.serializers import (
    ChoiceListField,
    Float4Field,
    JsonObjectField,
    OutputModelSerializer,
    QueryInputSerializer,
    RangedIntegerField,
    StrictInputSerializer,
    TextField,
    UserIdField,
    UserIdLookupField,
    UuidField,
)

MEMORY_TYPE_CHOICES = ["fact", "episodic", "trait", "document", *LEGACY_MEMORY_TYPES]
# The largest magnitude halfvec rounds to zero (2^-25: ties go to even).
HALFVEC_ZERO = 2.0**-25


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "number", "minimum": -HALFVEC_MAX, "maximum": HALFVEC_MAX},
        "minItems": settings.EMBEDDING_DIM,
        "maxItems": settings.EMBEDDING_DIM,
        # Not a zero vector once stored as halfvec: it has no direction (embedding_problem).
        "not": {
            "type": "array",
            "items": {"type": "number", "minimum": -HALFVEC_ZERO, "maximum": HALFVEC_ZERO},
        },
    }
)
class EmbeddingField(serializers.ListField):
    child = serializers.FloatField()

    def to_internal_value(self, data):
        if isinstance(data, list) and not all(map(is_number, data)):
            raise serializers.ValidationError("Must be a list of numbers.")
        vector = super().to_internal_value(data)
        problem = embedding_problem(vector, dimensions=settings.EMBEDDING_DIM)
        if problem is not None:
            raise serializers.ValidationError(problem)
        return vector


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {"type": "integer", "minimum": 1},
        "description": "What was redacted from what was written (docs/privacy.md): kind → "
        'count, e.g. {"password": 1}; {} when nothing. The secrets themselves are never '
        "stored: the content holds `[redacted: <kind>]` in their place.",
    }
)
class RedactionsField(serializers.Field):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(read_only=True, source="*", **kwargs)

    def to_representation(self, instance: Any) -> dict[str, int]:
        return dict(instance.redactions or {})


class MemoryCreateInput(StrictInputSerializer):
    user_id = UserIdField()
    content = TextField(max_length=settings.MEMORY_MAX_CHARS)
    memory_type = serializers.ChoiceField(MEMORY_TYPE_CHOICES)
    metadata = JsonObjectField(required=False, default=dict)
    importance = Float4Field(required=False, min_value=0, max_value=1)
    valid_at = serializers.DateTimeField(required=False)
    key = serializers.CharField(required=False, max_length=255, allow_null=True)
    embedding = EmbeddingField(required=False, allow_null=True)
    session_id = UuidField(required=False, allow_null=True)
    source_episode_ids = serializers.ListField(child=UuidField(), required=False)


class MemoryBatchInput(StrictInputSerializer):
    # Items are validated one by one in the view, so one bad item (`null` included) fails
    # nothing else.
    items = serializers.ListField(
        child=serializers.JSONField(allow_null=True),
        min_length=1,
        max_length=settings.MEMORY_BATCH_MAX,
    )


class MemoryUpdateInput(StrictInputSerializer):
    version = serializers.IntegerField(min_value=1)
    content = TextField(required=False, max_length=settings.MEMORY_MAX_CHARS)
    memory_type = serializers.ChoiceField(MEMORY_TYPE_CHOICES, required=False)
    metadata = JsonObjectField(required=False)
    importance = Float4Field(required=False, min_value=0, max_value=1)
    valid_at = serializers.DateTimeField(required=False)
    key = serializers.CharField(required=False, max_length=255, allow_null=True)


class MemorySupersedeInput(StrictInputSerializer):
    content = TextField(max_length=settings.MEMORY_MAX_CHARS)
    version = serializers.IntegerField(min_value=1, required=False)
    metadata = JsonObjectField(required=False)


class MemoryInvalidateInput(StrictInputSerializer):
    invalid_at = serializers.DateTimeField(required=False)


@extend_schema_field({"type": "boolean", "default": True})
class SortLinksField(serializers.Field):
    """`sort_links`: true or false, as a JSON boolean or the string "true" / "false"; any other
    value is an error (seed 004), not DRF's lenient yes/1/on."""

    VALUES: ClassVar[dict[Any, bool]] = {True: True, False: False, "true": True, "false": False}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, default=True, **kwargs)

    def to_internal_value(self, data: Any) -> bool:
        if isinstance(data, bool | str) and data in self.VALUES:
            return self.VALUES[data]
        raise serializers.ValidationError('Must be true or false (or "true" / "false").')

    def to_representation(self, value: bool) -> bool:
        return value


class ActivityFilterInput(QueryInputSerializer):
    """Filters by activity score and state, shared by listing and search."""

    state = ChoiceListField(STATES, required=False, help_text=f"Comma list of {', '.join(STATES)}.")
    score_min = Float4Field(required=False, min_value=0, max_value=100)
    score_max = Float4Field(required=False, min_value=0, max_value=100)
    include_all_states = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Without `state`: also deprecated memories (hidden by default).",
    )
    sort_order = serializers.ChoiceField(["asc", "desc"], required=False, default="desc")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        low, high = data.get("score_min"), data.get("score_max")
        if low is not None and high is not None and low > high:
            raise serializers.ValidationError(
                {"score_min": [f"Must not exceed the highest score asked for ({high:g})."]}
            )
        return data


class MemoryListInput(ActivityFilterInput):
    user_id = UserIdLookupField(required=False)
    memory_type = serializers.ChoiceField(["fact", "episodic", "trait", "document"], required=False)
    include_expired = serializers.BooleanField(required=False, default=False)
    as_of = serializers.DateTimeField(required=False)
    key = serializers.CharField(required=False, max_length=255)
    sort_by = serializers.ChoiceField(
        ["created_at", "score", "importance", "valid_at"], required=False, default="created_at"
    )
    include = serializers.CharField(required=False)


class MemoryLookupInput(QueryInputSerializer):
    """Which memory: `memory_id`, or `user_id` and `key` (unique among the user's current
    memories)."""

    memory_id = UuidField(required=False)
    user_id = UserIdLookupField(required=False)
    key = serializers.CharField(required=False, max_length=255)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if "memory_id" in data:
            if "key" in data:  # the two could name two memories
                raise serializers.ValidationError(
                    {"key": ["Give `memory_id`, or `user_id` and `key`, not both."]}
                )
            return data
        for name in ("user_id", "key"):
            if name not in data:
                raise serializers.ValidationError(
                    {name: ["Required with `key` (or give `memory_id`)."]}
                )
        return data


class MemoryGetParams(QueryInputSerializer):
    sort_links = SortLinksField()
    include = serializers.CharField(required=False, help_text="`embedding`; others ignored")


class MemoryGetInput(MemoryLookupInput, MemoryGetParams):
    pass


def bulk_limit(name: str) -> RangedIntegerField:
    default, most = settings.BULK_READ_LIMITS[name]
    return RangedIntegerField(minimum=1, maximum=most, required=False, default=default)


class BulkLimitsInput(QueryInputSerializer):
    depth = bulk_limit("depth")
    breadth = bulk_limit("breadth")
    total = bulk_limit("total")


class BulkReadInput(MemoryLookupInput, BulkLimitsInput):
    pass


class LinkInput(StrictInputSerializer):
    target_id = UuidField()
    weight = Float4Field(min_value=0, max_value=1)


class LinkRemoveInput(QueryInputSerializer):
    target_id = UuidField()


class LinkOutput(serializers.Serializer):
    """A link to a current memory, with what orders it."""

    target_id = serializers.UUIDField(source="target.id")
    key = serializers.CharField(source="target.key", allow_null=True)
    weight = serializers.FloatField()
    target_score = serializers.FloatField(source="target.score")
    combined_score = serializers.FloatField(
        source="combined", help_text="weight × target_score, the sort key"
    )
    created_at = serializers.DateTimeField()


class TraitOutput(serializers.Serializer):
    """Trait fields: the dedicated column first, V1 metadata as the fallback."""

    def to_representation(self, memory: Memory) -> dict:
        trait = {
            column.removeprefix("trait_"): trait_field(memory, key)
            for key, (column, _) in TRAIT_METADATA.items()
        }
        # Believed traits carry the decay view's value; any other trait is decayed live.
        trait["decayed_confidence"] = getattr(memory, "decayed_confidence", None)
        if trait["decayed_confidence"] is None:
            trait["decayed_confidence"] = trait_belief().decayed(memory)
        return trait


class MemoryOutput(OutputModelSerializer):
    state = serializers.SerializerMethodField()
    trait = serializers.SerializerMethodField()
    redactions = RedactionsField()

    class Meta:
        model = Memory
        fields = [
            "id",
            "user_id",
            "memory_type",
            "content",
            "key",
            "importance",
            "score",
            "state",
            "metadata",
            "valid_at",
            "invalid_at",
            "created_at",
            "updated_at",
            "expired_at",
            "version",
            "superseded_by",
            "content_hash",
            "access_count",
            "last_accessed_at",
            "embedding_status",
            "source_episode_ids",
            "subject_entity_id",
            "object_entity_id",
            "redactions",
            "trait",
        ]

    def get_state(self, memory: Memory) -> str:
        return memory_state(memory)

    def get_trait(self, memory: Memory) -> dict | None:
        return TraitOutput(memory).data if memory.memory_type == "trait" else None

    def to_representation(self, memory: Memory) -> dict:
        data = super().to_representation(memory)
        if self.context.get("include_embedding"):
            # As halfvec stores them, however the connection loaded them (text or binary).
            data["embedding"] = (
                None
                if memory.embedding is None
                else np.asarray(memory.embedding, dtype=np.float16).astype(float).tolist()
            )
        return data


class MemoryWithLinksOutput(MemoryOutput):
    """A memory with its links, in their order (`sort_links`)."""

    links = LinkOutput(many=True, read_only=True)

    class Meta(MemoryOutput.Meta):
        fields = [*MemoryOutput.Meta.fields, "links"]


class HistoryOutput(serializers.Serializer):
    id = serializers.UUIDField()
    memory_id = serializers.UUIDField()
    memory_type = serializers.CharField()
    event = serializers.CharField()
    old_content = serializers.CharField(allow_null=True)
    new_content = serializers.CharField(allow_null=True)
    old_metadata = serializers.JSONField(allow_null=True)
    new_metadata = serializers.JSONField(allow_null=True)
    actor = serializers.CharField()
    created_at = serializers.DateTimeField()
