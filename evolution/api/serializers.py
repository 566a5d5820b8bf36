from typing import Any

from django.conf import settings
from drf_spectacular.extensions import OpenApiSerializerExtension, OpenApiSerializerFieldExtension
from rest_framework import serializers

from core.validation import regex_problem
from evolution.models import (
    Agent,
    GuardEvent,
    GuardEventKind,
    SafetyContract,
    SoulAuthor,
    SoulEvent,
    SoulStatus,
    SoulVersion,
)
from evolution.selectors import SoulVersionDetail
from evolution.services import AGENT_NAME_MAX_CHARS, REASON_MAX_CHARS, TEXT_MAX_CHARS
from evolution.services.guard import SESSION_MAX_CHARS
from neuromem_site.api.serializers import (
    NameField,
    OutputModelSerializer,
    QueryInputSerializer,
    StrictInputSerializer,
    TextField,
)

CONTRACT_ITEMS_MAX = 200
CONTRACT_ITEM_MAX_CHARS = 500
EVIDENCE_REFS_MAX = 100
EVIDENCE_REF_MAX_CHARS = 255
VERSION_MAX = 2**31 - 1  # the column is an integer
# A version's status is published as a string, not an enum: a second `status` choice set used
# by several components needs an ENUM_NAME_OVERRIDES entry (settings) to be named cleanly.


class JsonStringField(TextField):
    """A list item that must arrive as a JSON string (DRF would turn 7 into "7"), not blank."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            raise serializers.ValidationError("Must be a string.")
        return super().to_internal_value(data)


class RegexField(JsonStringField):
    """A Python regular expression."""

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if (problem := regex_problem(value)) is not None:
            raise serializers.ValidationError(problem)
        return value


class RegexFieldSchema(OpenApiSerializerFieldExtension):
    """`python-regex`: JSON Schema's `regex` is ECMA-262's syntax, which differs (`(?P<name>)`,
    a lone `]`)."""

    target_class = RegexField

    def map_serializer_field(self, auto_schema, direction) -> dict:
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        return {**schema, "format": "python-regex"}


# --- Input -----------------------------------------------------------------------------------


def optional_text(max_length: int, help_text: str | None = None) -> serializers.CharField:
    """Free text the caller may leave out or blank: then ""."""
    return serializers.CharField(
        max_length=max_length, required=False, default="", allow_blank=True, help_text=help_text
    )


def version_field(help_text: str) -> serializers.IntegerField:
    """An optional version number; null or absent: the default `help_text` names."""
    return serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=VERSION_MAX, help_text=help_text
    )


class AgentInput(StrictInputSerializer):
    name = NameField(
        max_length=AGENT_NAME_MAX_CHARS,
        help_text="Unique among this client's agents; no control characters.",
    )


class AgentUpdateInput(StrictInputSerializer):
    guard_enabled = serializers.BooleanField(
        help_text="Turn the runtime guardrail on: high-risk calls made for this agent are "
        "refused while its session's latest guard check failed."
    )


class GuardCheckInput(StrictInputSerializer):
    context = TextField(
        max_length=settings.GUARD_CONTEXT_MAX_CHARS,
        help_text="What the agent is about to send its model: system prompt, compacted context "
        "and history, as one text.",
    )
    session = serializers.CharField(
        max_length=SESSION_MAX_CHARS,
        allow_blank=True,
        trim_whitespace=False,
        required=False,
        help_text="The agent session (one conversation, one loop) whose guard state this check "
        'sets; default: the X-NeuroMem-Session header, else the default session "".',
    )


class GuardEventListInput(QueryInputSerializer):
    kind = serializers.ChoiceField(GuardEventKind.choices, required=False)
    # As stored: a check's session keeps its spaces.
    session = serializers.CharField(
        max_length=SESSION_MAX_CHARS, trim_whitespace=False, required=False
    )


class AgentIdInput(StrictInputSerializer):
    """How a SOUL tool names its agent (REST: `/agents/{id}/soul/…`)."""

    agent_id = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=2**63 - 1,
        help_text="One of this client's agents (GET /agents/); default: its default agent.",
    )


class SoulBootstrapInput(StrictInputSerializer):
    content = TextField(help_text="The initial SOUL (markdown), kept exactly as given.")


class SafetyContractInput(StrictInputSerializer):
    anchors = serializers.ListField(
        child=JsonStringField(max_length=CONTRACT_ITEM_MAX_CHARS),
        max_length=CONTRACT_ITEMS_MAX,
        help_text="Phrases every SOUL must keep (case-insensitive).",
    )
    constraints = serializers.ListField(
        child=RegexField(max_length=CONTRACT_ITEM_MAX_CHARS),
        max_length=CONTRACT_ITEMS_MAX,
        help_text="Python regular expressions (case-insensitive, multi-line) no SOUL may match.",
    )


class SafetyContractInputSchema(OpenApiSerializerExtension):
    """Staff name at least one addition: the service refuses none (on `anchors`)."""

    target_class = SafetyContractInput

    def map_serializer(self, auto_schema, direction) -> dict:
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        return {
            **schema,
            "anyOf": [
                {"properties": {name: {"minItems": 1}}} for name in ("anchors", "constraints")
            ],
        }


class SoulProposalInput(StrictInputSerializer):
    intent = serializers.CharField(max_length=TEXT_MAX_CHARS, help_text="What the change is for.")
    new_content = TextField(help_text="The whole new SOUL (markdown), not a diff.")
    risk_notes = optional_text(TEXT_MAX_CHARS)
    justification = optional_text(
        TEXT_MAX_CHARS,
        help_text="Needed when the change rewrites more than SOUL_DIFF_MAX_SHARE of the document.",
    )
    evidence_refs = serializers.ListField(
        child=JsonStringField(max_length=EVIDENCE_REF_MAX_CHARS),
        max_length=EVIDENCE_REFS_MAX,
        required=False,
        default=list,
        help_text="What the change is based on (memory ids, trait ids, URLs ...).",
    )
    auto_apply = serializers.BooleanField(
        default=True, help_text="Apply the proposal at once when its evaluation passes."
    )


class SoulVetoInput(StrictInputSerializer):
    reason = serializers.CharField(max_length=REASON_MAX_CHARS, help_text="Why (in the log).")


class SoulRollbackInput(StrictInputSerializer):
    action = serializers.ChoiceField(
        ["rollback", "veto"],
        required=False,
        default="rollback",
        help_text="rollback: return to an earlier version (the current one becomes "
        "rolled_back). veto: the user refuses a version (a proposal, or the active one, which "
        "is replaced by the previous stable version).",
    )
    to_version = version_field(
        "rollback only: a version that was active once; default: the previous stable version."
    )
    version = version_field("veto only: the version vetoed; default: the active version.")
    reason = optional_text(
        REASON_MAX_CHARS, help_text="Why, in the user's words (in the log); needed for a veto."
    )

    def validate(self, data: dict) -> dict:
        misplaced = "version" if data["action"] == "rollback" else "to_version"
        if data.get(misplaced) is not None:
            raise serializers.ValidationError(
                {misplaced: f"Not taken by action '{data['action']}'."}
            )
        return data


# --- Output ----------------------------------------------------------------------------------


class SoulCheckOutput(serializers.Serializer):
    name = serializers.CharField()
    passed = serializers.BooleanField()
    detail = serializers.CharField()


class SoulEvalOutput(serializers.Serializer):
    passed = serializers.BooleanField()
    checks = SoulCheckOutput(many=True)
    summary = serializers.CharField()
    error_code = serializers.CharField(
        allow_null=True, help_text="GUARD_CONTRACT_UNAVAILABLE when there was no contract."
    )
    contract_version = serializers.IntegerField(allow_null=True)
    contract_hash = serializers.CharField(allow_null=True)
    evaluated_at = serializers.DateTimeField()


class SoulProposalOutput(serializers.Serializer):
    """A proposal's fields, or a restore's (`restores`, `replaces`, `requested_by`)."""

    intent = serializers.CharField(required=False)
    risk_notes = serializers.CharField(required=False)
    justification = serializers.CharField(required=False)
    evidence_refs = serializers.ListField(child=serializers.CharField(), required=False)
    base_version = serializers.IntegerField(
        required=False, help_text="A proposal: the active version it changes."
    )
    restores = serializers.IntegerField(
        required=False, help_text="A restore: the version whose content it carries."
    )
    replaces = serializers.IntegerField(
        required=False, help_text="A restore: the active version it replaced."
    )
    requested_by = serializers.CharField(required=False)
    diff = serializers.CharField(
        required=False, help_text="Unified diff against the version it changes."
    )


class SoulVersionOutput(OutputModelSerializer):
    status = serializers.ChoiceField(SoulStatus.choices)
    created_by = serializers.ChoiceField(SoulAuthor.choices)
    eval = SoulEvalOutput(source="eval_result", allow_null=True, help_text="null until evaluated.")
    proposal = SoulProposalOutput(allow_null=True, help_text="null for the bootstrap.")

    class Meta:
        model = SoulVersion
        fields = ["version", "status", "content", "created_by", "created_at", "eval", "proposal"]


class SoulActiveOutput(SoulVersionOutput):
    soul_md = serializers.SerializerMethodField(help_text="The `SOUL.md` file an agent loads.")
    pending_proposals = serializers.SerializerMethodField(
        help_text="Version numbers of the proposals not yet applied or vetoed, oldest first."
    )

    class Meta(SoulVersionOutput.Meta):
        fields = [*SoulVersionOutput.Meta.fields, "soul_md", "pending_proposals"]

    def get_soul_md(self, version: SoulVersion) -> str:
        return self.context["soul_md"]

    def get_pending_proposals(self, version: SoulVersion) -> list[int]:
        return self.context["pending_proposals"]


class SoulEvalSummaryOutput(serializers.Serializer):
    passed = serializers.BooleanField()
    summary = serializers.CharField()


class SoulVersionSummaryOutput(OutputModelSerializer):
    status = serializers.ChoiceField(SoulStatus.choices)
    created_by = serializers.ChoiceField(SoulAuthor.choices)
    eval = SoulEvalSummaryOutput(
        source="eval_result", allow_null=True, help_text="null until evaluated."
    )
    intent = serializers.SerializerMethodField()

    class Meta:
        model = SoulVersion
        fields = ["version", "status", "created_by", "created_at", "eval", "intent"]

    def get_intent(self, version: SoulVersion) -> str | None:
        return (version.proposal or {}).get("intent")


class SoulEventOutput(OutputModelSerializer):
    class Meta:
        model = SoulEvent
        fields = ["from_status", "to_status", "actor", "reason", "created_at"]


class SoulVersionDetailOutput(SoulVersionOutput):
    predecessor = serializers.IntegerField(
        allow_null=True,
        help_text="The version it changed (a proposal's base, a restore's replaced version).",
    )
    diff = serializers.CharField(help_text='Unified diff against `predecessor` ("" for none).')
    events = SoulEventOutput(many=True, help_text="Its state changes, oldest first.")

    class Meta(SoulVersionOutput.Meta):
        fields = [*SoulVersionOutput.Meta.fields, "predecessor", "diff", "events"]

    def to_representation(self, detail: SoulVersionDetail) -> dict:
        data = SoulVersionOutput(detail.version).data
        data.update(
            predecessor=None if detail.predecessor is None else detail.predecessor.version,
            diff=detail.diff,
            events=SoulEventOutput(detail.events, many=True).data,
        )
        return data


class AgentOutput(OutputModelSerializer):
    client = serializers.CharField(
        source="client.name",
        allow_null=True,
        help_text="The API client that owns it (null: the deployment's own agent).",
    )

    class Meta:
        model = Agent
        fields = ["id", "name", "client", "is_default", "guard_enabled", "created_at"]


class GuardCheckOutput(serializers.Serializer):
    """A guard check's result (`GuardCheckResult`): whether the agent's Core Safety Contract is
    visible in the context, what is missing or violated, and the session it speaks for."""

    passed = serializers.BooleanField()
    missing_anchors = serializers.ListField(
        child=serializers.CharField(), help_text="Anchors not visible in the context."
    )
    violated_constraints = serializers.ListField(
        child=serializers.CharField(),
        help_text="Constraints the SOUL states that are not in view, and staff patterns the "
        "context matches.",
    )
    error_code = serializers.CharField(
        allow_null=True,
        help_text="Null when it passed; else GUARD_ANCHOR_MISSING, GUARD_CONSTRAINT_VIOLATED or "
        "GUARD_CONTRACT_UNAVAILABLE.",
    )
    detail = serializers.CharField()
    session = serializers.CharField(allow_blank=True)

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["error_code"] = data["error_code"] or None
        return data


class GuardEventOutput(OutputModelSerializer):
    class Meta:
        model = GuardEvent
        fields = [
            "id",
            "agent",
            "session",
            "kind",
            "action",
            "risk_level",
            "error_code",
            "detail",
            "actor",
            "created_at",
        ]


class SoulBootstrapOutput(SoulVersionOutput):
    skipped = serializers.SerializerMethodField(
        help_text="True when the agent had a SOUL already: nothing changed, and this is its "
        "active version."
    )

    class Meta(SoulVersionOutput.Meta):
        fields = [*SoulVersionOutput.Meta.fields, "skipped"]

    def get_skipped(self, version: SoulVersion) -> bool:
        return self.context["skipped"]


class SoulProposalResultOutput(serializers.Serializer):
    status = serializers.ChoiceField(
        ["applied", "rejected", "proposed"],
        help_text="applied: now active; rejected: its evaluation failed (it stays a proposal "
        "that can never be applied); proposed: passed, not applied (auto_apply false).",
    )
    version = serializers.IntegerField()
    eval = SoulEvalOutput()


class SoulVetoOutput(serializers.Serializer):
    vetoed = serializers.IntegerField(help_text="The version vetoed.")
    active = SoulVersionOutput(
        allow_null=True,
        help_text="The active version afterwards: unchanged after a proposal's veto, a new "
        "version restoring the previous stable one after the active version's.",
    )


class SafetyContractOutput(OutputModelSerializer):
    anchors = serializers.ListField(
        child=serializers.CharField(), help_text="Staff additions: phrases every SOUL keeps."
    )
    constraints = serializers.ListField(
        child=serializers.CharField(),
        help_text="Staff additions: patterns no SOUL may match.",
    )
    extracted_anchors = serializers.ListField(
        child=serializers.CharField(),
        help_text="From the active SOUL's Core principles / Anchors sections.",
    )
    extracted_constraints = serializers.ListField(
        child=serializers.CharField(),
        help_text="From the active SOUL's Constraints section: rules every SOUL keeps stating.",
    )
    source_hash = serializers.CharField(
        help_text='SHA-256 of the SOUL text extracted from ("" when none yet).'
    )

    class Meta:
        model = SafetyContract
        fields = [
            "version",
            "anchors",
            "constraints",
            "extracted_anchors",
            "extracted_constraints",
            "source_hash",
            "content_hash",
            "created_by",
            "created_at",
        ]
