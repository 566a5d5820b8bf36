"""Recall and search: their parameters and their hits."""

from dataclasses import asdict
from functools import cached_property

from django.conf import settings
from rest_framework import serializers

from memories.api.serializers.memories import ActivityFilterInput, MemoryOutput
from memories.models import MemoryType
from memories.predicates import STATES
from memories.recall import RecallHit
from neuromem_site.api.serializers import (
    ChoiceListField,
    RangedIntegerField,
    StrictInputSerializer,
    UserIdLookupField,
)


def recall_limit() -> RangedIntegerField:
    return RangedIntegerField(
        minimum=1, maximum=settings.RECALL_LIMIT_MAX, required=False, default=10
    )


class RecallInput(StrictInputSerializer):
    user_id = UserIdLookupField()
    query = serializers.CharField(max_length=settings.RECALL_QUERY_MAX_CHARS)
    limit = recall_limit()
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


class SearchInput(ActivityFilterInput):
    """Search reads current memories: `deleted` is no state it could find."""

    state = ChoiceListField(
        tuple(state for state in STATES if state != "deleted"),
        required=False,
        help_text="Comma list of active, cold, deprecated (search reads current memories).",
    )
    user_id = UserIdLookupField()
    q = serializers.CharField(max_length=settings.RECALL_QUERY_MAX_CHARS)
    limit = recall_limit()
    memory_type = serializers.ChoiceField(MemoryType.values, required=False)
    sort_by = serializers.ChoiceField(
        ["relevance", "score"],
        required=False,
        default="relevance",
        help_text="`score`: the hits (the `limit` most relevant) by activity score.",
    )


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
        # One serializer for every hit: each instance copies its fields (docs/benchmarks.md).
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


# What a compact hit and a search hit hold first: the memory's id, content and type. (No
# docstring: CompactHitOutput would publish it as its own.)
class HitOutput(serializers.Serializer):
    id = serializers.UUIDField(source="memory.id")
    content = serializers.CharField(source="memory.content")
    memory_type = serializers.CharField(source="memory.memory_type")


class CompactHitOutput(HitOutput):
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


class SearchHitOutput(HitOutput):
    """The V1 search result: id, content, type, metadata and score."""

    metadata = serializers.JSONField(source="memory.metadata")
    score = serializers.FloatField()


class ScoredSearchHitOutput(SearchHitOutput):
    """V1's scored search result: relevance (the fused RRF score), the two boosts, and the
    final score."""

    relevance = serializers.FloatField(source="rrf_score")
    recency = serializers.FloatField(source="boosts.recency")
    importance = serializers.FloatField(source="boosts.importance")
