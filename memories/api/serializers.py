from dataclasses import asdict
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.validation import embedding_problem
from memories.forgetting.plan import REASONS
from memories.meaning import STATES
from memories.models import (
    LEGACY_MEMORY_TYPES,
    ConversationMessage,
    ConversationSession,
    ForgetRequest,
    Memory,
    MemoryType,
)
from memories.recall import RecallHit
from memories.selectors import memory_state, trait_field
from memories.services.forgetting import MEMORY_IDS_MAX, TOPIC_MAX_CHARS
from memories.traits import TRAIT_METADATA
from neuromem_site.api.envelope import checked_range
from neuromem_site.api.serializers import (
    Float4Field,
    JsonObjectField,
    OutputModelSerializer,
    QueryInputSerializer,
    StrictInputSerializer,
    UserIdField,
    UserIdLookupField,
    is_number,
)
from reflection.selectors import decayed_confidence

MEMORY_TYPE_CHOICES = ["fact", "episodic", "trait", "document", *LEGACY_MEMORY_TYPES]


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
    content = serializers.CharField(max_length=settings.MEMORY_MAX_CHARS, trim_whitespace=False)
    memory_type = serializers.ChoiceField(MEMORY_TYPE_CHOICES)
    metadata = JsonObjectField(required=False, default=dict)
    importance = Float4Field(required=False, min_value=0, max_value=1)
    valid_at = serializers.DateTimeField(required=False)
    key = serializers.CharField(required=False, max_length=255, allow_null=True)
    embedding = EmbeddingField(required=False, allow_null=True)
    session_id = serializers.UUIDField(required=False, allow_null=True)
    source_episode_ids = serializers.ListField(child=serializers.UUIDField(), required=False)

    def validate_content(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("Must not be blank.")
        return value


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
    content = serializers.CharField(
        required=False, max_length=settings.MEMORY_MAX_CHARS, trim_whitespace=False
    )
    memory_type = serializers.ChoiceField(MEMORY_TYPE_CHOICES, required=False)
    metadata = JsonObjectField(required=False)
    importance = Float4Field(required=False, min_value=0, max_value=1)
    valid_at = serializers.DateTimeField(required=False)
    key = serializers.CharField(required=False, max_length=255, allow_null=True)


class MemorySupersedeInput(StrictInputSerializer):
    content = serializers.CharField(max_length=settings.MEMORY_MAX_CHARS, trim_whitespace=False)
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


def states_parsed(value: str) -> list[str]:
    states = [state.strip() for state in value.split(",") if state.strip()]
    unknown = [state for state in states if state not in STATES]
    if unknown:
        raise serializers.ValidationError(f"Unknown state '{unknown[0]}'; use {', '.join(STATES)}.")
    return states


class ActivityFilterInput(QueryInputSerializer):
    """Filters by activity score and state, shared by listing and search."""

    state = serializers.CharField(required=False, help_text=f"Comma list of {', '.join(STATES)}.")
    score_min = Float4Field(required=False, min_value=0, max_value=100)
    score_max = Float4Field(required=False, min_value=0, max_value=100)
    include_all_states = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Without `state`: also deprecated memories (hidden by default).",
    )
    sort_order = serializers.ChoiceField(["asc", "desc"], required=False, default="desc")

    def validate_state(self, value: str) -> list[str]:
        return states_parsed(value)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        low, high = data.get("score_min"), data.get("score_max")
        if low is not None and high is not None and low > high:
            raise serializers.ValidationError(
                {"score_min": [f"Must not exceed score_max ({high:g})."]}
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

    memory_id = serializers.UUIDField(required=False)
    user_id = UserIdLookupField(required=False)
    key = serializers.CharField(required=False, max_length=255)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if "memory_id" in data:
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


class BulkLimitsInput(QueryInputSerializer):
    depth = serializers.IntegerField(required=False, default=settings.BULK_READ_LIMITS["depth"][0])
    breadth = serializers.IntegerField(
        required=False, default=settings.BULK_READ_LIMITS["breadth"][0]
    )
    total = serializers.IntegerField(required=False, default=settings.BULK_READ_LIMITS["total"][0])

    def validate_depth(self, value: int) -> int:
        return bulk_limit("depth", value)

    def validate_breadth(self, value: int) -> int:
        return bulk_limit("breadth", value)

    def validate_total(self, value: int) -> int:
        return bulk_limit("total", value)


class BulkReadInput(MemoryLookupInput, BulkLimitsInput):
    pass


def bulk_limit(name: str, value: int) -> int:
    return checked_range(name, value, min_allowed=1, max_allowed=settings.BULK_READ_LIMITS[name][1])


class LinkInput(StrictInputSerializer):
    target_id = serializers.UUIDField()
    weight = Float4Field(min_value=0, max_value=1)


class LinkRemoveInput(QueryInputSerializer):
    target_id = serializers.UUIDField()


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
            trait["decayed_confidence"] = decayed_confidence(memory)
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


class SessionCreateInput(StrictInputSerializer):
    user_id = UserIdField()
    metadata = JsonObjectField(required=False, default=dict)


class SessionOutput(OutputModelSerializer):
    class Meta:
        model = ConversationSession
        fields = ["id", "user_id", "started_at", "ended_at", "last_reflected_at", "metadata"]


class MessageInput(StrictInputSerializer):
    role = serializers.ChoiceField(["user", "assistant", "system"])
    content = serializers.CharField(max_length=settings.MEMORY_MAX_CHARS, trim_whitespace=False)
    sent_at = serializers.DateTimeField(
        required=False,
        help_text="When the message was said, for importing a past conversation: not in the "
        "future, not before the session's last message. Default: now.",
    )


class MessageOutput(OutputModelSerializer):
    redactions = RedactionsField()

    class Meta:
        model = ConversationMessage
        fields = ["id", "session_id", "user_id", "role", "content", "created_at", "redactions"]


class RecallInput(StrictInputSerializer):
    user_id = UserIdLookupField()
    query = serializers.CharField(max_length=settings.RECALL_QUERY_MAX_CHARS)
    limit = serializers.IntegerField(required=False, default=10)
    memory_types = serializers.ListField(
        child=serializers.ChoiceField(MemoryType.values), required=False, min_length=1
    )
    as_of = serializers.DateTimeField(required=False)
    include_traits = serializers.BooleanField(required=False, default=True)
    fields = serializers.ChoiceField(
        ["full", "compact"],
        required=False,
        default="full",
        help_text="`compact`: each hit as id, content, memory_type, valid_at and score only "
        "(for building prompts); `full`: the memory and every part of its score.",
    )

    def validate_limit(self, value: int) -> int:
        return checked_limit(value)


class SearchInput(ActivityFilterInput):
    """Search reads current memories: `deleted` is no state it could find."""

    user_id = UserIdLookupField()
    q = serializers.CharField(max_length=settings.RECALL_QUERY_MAX_CHARS)
    limit = serializers.IntegerField(required=False, default=10)
    memory_type = serializers.ChoiceField(MemoryType.values, required=False)
    sort_by = serializers.ChoiceField(
        ["relevance", "score"],
        required=False,
        default="relevance",
        help_text="`score`: the hits (the `limit` most relevant) by activity score.",
    )

    def validate_limit(self, value: int) -> int:
        return checked_limit(value)

    def validate_state(self, value: str) -> list[str]:
        states = states_parsed(value)
        if "deleted" in states:
            raise serializers.ValidationError(
                "Search reads current memories: use active, cold or deprecated."
            )
        return states


def checked_limit(value: int) -> int:
    return checked_range("limit", value, min_allowed=1, max_allowed=settings.RECALL_LIMIT_MAX)


class BoostsOutput(serializers.Serializer):
    recency = serializers.FloatField()
    importance = serializers.FloatField()
    trait_stage = serializers.FloatField()


class RecallHitOutput(MemoryOutput):
    """A recalled memory: the memory object, whose `score` is the recall score (its 0–100
    activity score moves to `activity_score`), with the parts of that score."""

    score = serializers.FloatField(help_text="rrf_score × (1 + recency + importance + trait_stage)")
    activity_score = serializers.FloatField(help_text="The memory's activity score (0–100).")
    rrf_score = serializers.FloatField()
    vector_rank = serializers.IntegerField(allow_null=True)
    text_rank = serializers.IntegerField(allow_null=True)
    similarity = serializers.FloatField(allow_null=True)
    text_coverage = serializers.FloatField(allow_null=True)
    boosts = BoostsOutput()

    class Meta(MemoryOutput.Meta):
        fields = [
            *MemoryOutput.Meta.fields,
            "activity_score",
            "rrf_score",
            "vector_rank",
            "text_rank",
            "similarity",
            "text_coverage",
            "boosts",
        ]

    @cached_property
    def memory_output(self) -> MemoryOutput:
        # One serializer for every hit: each instance copies its fields (~0.6 ms).
        return MemoryOutput(context=self.context)

    def to_representation(self, hit: RecallHit) -> dict:
        data = self.memory_output.to_representation(hit.memory)
        data.update(
            score=hit.score,
            activity_score=hit.memory.score,
            rrf_score=hit.rrf_score,
            vector_rank=hit.vector_rank,
            text_rank=hit.text_rank,
            similarity=hit.similarity,
            text_coverage=hit.text_coverage,
            boosts=asdict(hit.boosts),  # plain floats: BoostsOutput documents them
        )
        return data


class RecallOutput(serializers.Serializer):
    fields = serializers.ChoiceField(["full"], help_text="What each hit holds: the request's.")
    merged = RecallHitOutput(many=True)
    traits = MemoryOutput(many=True)


class CompactHitOutput(serializers.Serializer):
    id = serializers.UUIDField(source="memory.id")
    content = serializers.CharField(source="memory.content")
    memory_type = serializers.CharField(source="memory.memory_type")
    valid_at = serializers.DateTimeField(source="memory.valid_at", allow_null=True)
    score = serializers.FloatField()


class CompactTraitOutput(serializers.Serializer):
    id = serializers.UUIDField()
    content = serializers.CharField()
    memory_type = serializers.CharField()
    valid_at = serializers.DateTimeField(allow_null=True)


class CompactRecallOutput(serializers.Serializer):
    """`fields=compact`."""

    fields = serializers.ChoiceField(["compact"], help_text="What each hit holds: the request's.")
    merged = CompactHitOutput(many=True)
    traits = CompactTraitOutput(many=True)


class SearchHitOutput(serializers.Serializer):
    """The V1 search result: id, content, type, metadata and score."""

    id = serializers.UUIDField(source="memory.id")
    content = serializers.CharField(source="memory.content")
    memory_type = serializers.CharField(source="memory.memory_type")
    metadata = serializers.JSONField(source="memory.metadata")
    score = serializers.FloatField()


class ScoredSearchHitOutput(SearchHitOutput):
    """V1's scored search result: relevance (the fused RRF score), the two boosts, and the
    final score."""

    relevance = serializers.FloatField(source="rrf_score")
    recency = serializers.FloatField(source="boosts.recency")
    importance = serializers.FloatField(source="boosts.importance")


class ForgetInput(StrictInputSerializer):
    """What to forget: a `topic` as a person would say it, or the memories by id."""

    topic = serializers.CharField(
        required=False,
        max_length=TOPIC_MAX_CHARS,
        trim_whitespace=False,
        help_text='What to forget, in words: "my home address", "everything about Alex", '
        '"my medical information", "我的病史". Memories about it are found by its words, its '
        "names and the kind of information it names; a topic that names nothing "
        '("everything") forgets nothing and says why.',
    )
    memory_ids = serializers.ListField(
        child=serializers.UUIDField(),
        required=False,
        min_length=1,
        max_length=MEMORY_IDS_MAX,
        help_text="The memories to forget (with their older versions), instead of `topic`.",
    )
    dry_run = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Answer what would be forgotten (with its content) and change nothing.",
    )

    def validate_topic(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("Must not be blank.")
        return value

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if ("topic" in data) == ("memory_ids" in data):
            raise serializers.ValidationError({"topic": ["Give either `topic` or `memory_ids`."]})
        return data


class UserForgetInput(ForgetInput):
    """MCP's forget: the end user too (the REST route has them in its path)."""

    user_id = UserIdLookupField()


class ForgottenMemoryOutput(serializers.Serializer):
    id = serializers.UUIDField()
    memory_type = serializers.CharField()
    erased = serializers.ChoiceField(
        ["whole", "part"],
        help_text="`whole`: the memory is forgotten (its record stays, its content is erased); "
        "`part`: the sentences on the topic are erased, the rest stays.",
    )
    content = serializers.CharField(required=False, help_text="Dry run only: the content now.")
    content_after = serializers.CharField(
        required=False, help_text="Dry run only, `part`: what would stay."
    )


class ForgottenMessageOutput(serializers.Serializer):
    id = serializers.UUIDField()
    session_id = serializers.UUIDField()
    content_after = serializers.CharField(
        required=False, help_text='Dry run only: the message with "[forgotten]" in place.'
    )


class ForgetReasonOutput(serializers.Serializer):
    code = serializers.ChoiceField(list(REASONS))
    message = serializers.CharField()


class ForgetOutput(serializers.Serializer):
    """What a forget request erased (or, in a dry run, would erase)."""

    id = serializers.UUIDField(allow_null=True, help_text="The forget request; null for a dry run.")
    user_id = serializers.CharField()
    dry_run = serializers.BooleanField()
    memories = ForgottenMemoryOutput(many=True)
    messages = ForgottenMessageOutput(many=True)
    traits_reweighed = serializers.ListField(child=serializers.UUIDField())
    traits_dissolved = serializers.ListField(child=serializers.UUIDField())
    reason = ForgetReasonOutput(
        allow_null=True, help_text="Why nothing was forgotten; null when something was."
    )


class ForgetRequestOutput(OutputModelSerializer):
    class Meta:
        model = ForgetRequest
        fields = [
            "id",
            "requested_by",
            "via",
            "message_id",
            "memory_ids",
            "erased_memory_ids",
            "message_ids",
            "traits_reweighed",
            "traits_dissolved",
            "reason",
            "created_at",
        ]


class ForgottenRecordOutput(OutputModelSerializer):
    """A forgotten memory as it is still held: the record, never the content."""

    class Meta:
        model = Memory
        fields = ["id", "memory_type", "created_at", "forgotten_at", "forget_request_id"]
