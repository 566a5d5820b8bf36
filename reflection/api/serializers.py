from django.conf import settings
from rest_framework import serializers

from memories.api.serializers.memories import MemoryOutput
from memories.models import Memory, MemoryType, TraitContext, TraitStage, TraitSubtype
from memories.selectors import trait_field
from neuromem_site.api.serializers import (
    OutputModelSerializer,
    QueryInputSerializer,
    StrictInputSerializer,
    UserIdLookupField,
)
from reflection.models import (
    CYCLE_COUNTS,
    EvidenceQuality,
    EvidenceType,
    ReflectionCycle,
    ReflectionTrigger,
)
from reflection.selectors import PROMPT_HEADINGS, TraitDetail
from reflection.services.traits import REASON_MAX_CHARS

PROMPT_MIN_TOKENS = 50
PROMPT_MAX_TOKENS = 8000
# The groups of GET /users/{user_id}/traits/, in the selector's order; "other": any other or no
# subtype (V1 traits).
TRAIT_GROUPS = (TraitSubtype.CORE, TraitSubtype.PREFERENCE, TraitSubtype.BEHAVIOR)


class BelievedTraitOutput(serializers.Serializer):
    """A trait as `mv_trait_decayed` holds it: confidence decayed as of `computed_at`."""

    id = serializers.UUIDField()
    content = serializers.CharField()
    subtype = serializers.ChoiceField(TraitSubtype.choices, source="trait_subtype", allow_null=True)
    stage = serializers.ChoiceField(TraitStage.choices, source="trait_stage", allow_null=True)
    context = serializers.ChoiceField(TraitContext.choices, source="trait_context", allow_null=True)
    parent_id = serializers.UUIDField(source="trait_parent_id", allow_null=True)
    confidence = serializers.FloatField(
        source="raw_confidence", allow_null=True, help_text="As last reinforced, before decay."
    )
    decayed_confidence = serializers.FloatField(
        allow_null=True,
        help_text="confidence · exp(−λ · days since last reinforced), as of `computed_at`.",
    )
    reinforcement_count = serializers.IntegerField(
        source="trait_reinforcement_count", allow_null=True
    )
    contradiction_count = serializers.IntegerField(
        source="trait_contradiction_count", allow_null=True
    )
    first_observed = serializers.DateTimeField(source="trait_first_observed", allow_null=True)
    last_reinforced = serializers.DateTimeField(source="trait_last_reinforced", allow_null=True)
    computed_at = serializers.DateTimeField(help_text="The decay view's last refresh.")


class UserTraitsOutput(serializers.Serializer):
    core = BelievedTraitOutput(many=True)
    preference = BelievedTraitOutput(many=True)
    behavior = BelievedTraitOutput(many=True)
    other = BelievedTraitOutput(many=True, help_text="Traits with no (or another) subtype.")


class PromptContextInput(QueryInputSerializer):
    max_tokens = serializers.IntegerField(
        required=False,
        default=settings.PROMPT_CONTEXT_MAX_TOKENS,
        min_value=PROMPT_MIN_TOKENS,
        max_value=PROMPT_MAX_TOKENS,
        help_text="The block's budget in estimated tokens.",
    )


class PromptAttributeOutput(serializers.Serializer):
    """One current value of an attribute of the user or of an entity around them."""

    entity = serializers.CharField(help_text='Whose: "the user", "Mark (the user\'s brother)".')
    relation = serializers.CharField(help_text='The attribute or relation ("lives in", "brother").')
    value = serializers.CharField(help_text="Its current value (or the other entity).")
    valid_at = serializers.DateTimeField(help_text="Since when it holds.")


class PromptContextOutput(serializers.Serializer):
    markdown = serializers.CharField(help_text="Empty when nothing fits or nothing is known.")
    language = serializers.ChoiceField(list(PROMPT_HEADINGS), help_text="The headings' language.")
    tokens = serializers.IntegerField(help_text="The block's estimated tokens.")
    trait_ids = serializers.ListField(child=serializers.UUIDField())
    fact_ids = serializers.ListField(child=serializers.UUIDField())
    attributes = PromptAttributeOutput(
        many=True, help_text="The current attributes the block holds, in its order."
    )


class TraitSummaryOutput(serializers.Serializer):
    id = serializers.UUIDField()
    content = serializers.CharField()
    subtype = serializers.ChoiceField(TraitSubtype.choices, allow_null=True)
    stage = serializers.ChoiceField(TraitStage.choices, allow_null=True)
    confidence = serializers.FloatField(allow_null=True)

    def to_representation(self, trait: Memory) -> dict:
        return super().to_representation(
            {
                "id": trait.id,
                "content": trait.content,
                "subtype": trait_field(trait, "trait_subtype"),
                "stage": trait_field(trait, "trait_stage"),
                "confidence": trait_field(trait, "confidence"),
            }
        )


class CitedMemoryOutput(serializers.Serializer):
    id = serializers.UUIDField()
    memory_type = serializers.ChoiceField(MemoryType.choices)
    content = serializers.CharField()
    created_at = serializers.DateTimeField()


class EvidenceOutput(serializers.Serializer):
    id = serializers.UUIDField(source="evidence.id")
    memory_id = serializers.UUIDField(source="evidence.memory_id")
    evidence_type = serializers.ChoiceField(EvidenceType.choices, source="evidence.evidence_type")
    quality = serializers.ChoiceField(EvidenceQuality.choices, source="evidence.quality")
    created_at = serializers.DateTimeField(source="evidence.created_at")
    memory = CitedMemoryOutput(allow_null=True, help_text="null: the memory is gone.")


class TraitDetailOutput(MemoryOutput):
    """The trait (a memory) with its decay computed now, its evidence, its parent chain and its
    children."""

    decayed_confidence = serializers.FloatField(
        allow_null=True, help_text="The trait's confidence decayed until now."
    )
    evidence = EvidenceOutput(many=True)
    parents = TraitSummaryOutput(many=True, help_text="Nearest first.")
    children = TraitSummaryOutput(many=True)

    class Meta(MemoryOutput.Meta):
        fields = [
            *MemoryOutput.Meta.fields,
            "decayed_confidence",
            "evidence",
            "parents",
            "children",
        ]

    def to_representation(self, detail: TraitDetail) -> dict:
        data = MemoryOutput(detail.trait, context=self.context).data
        data.update(
            decayed_confidence=detail.decayed_confidence,
            evidence=EvidenceOutput(detail.evidence, many=True).data,
            parents=TraitSummaryOutput(detail.parents, many=True).data,
            children=TraitSummaryOutput(detail.children, many=True).data,
        )
        return data


class TraitVetoInput(StrictInputSerializer):
    reason = serializers.CharField(
        max_length=REASON_MAX_CHARS, help_text="Why the trait is wrong (kept in `metadata.veto`)."
    )


class ReflectionCycleRequestInput(StrictInputSerializer):
    user_id = UserIdLookupField()
    trigger_type = serializers.ChoiceField(
        ReflectionTrigger.choices, required=False, default=ReflectionTrigger.MANUAL
    )


class ReflectionCycleListInput(QueryInputSerializer):
    user_id = UserIdLookupField(required=False)


class ReflectionCycleOutput(OutputModelSerializer):
    class Meta:
        model = ReflectionCycle
        fields = [
            "id",
            "user_id",
            "trigger_type",
            "trigger_value",
            "status",
            *CYCLE_COUNTS,
            "started_at",
            "completed_at",
            "error_message",
            "requested_by",
        ]
