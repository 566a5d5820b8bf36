"""An end user's conversations (sessions and messages) and what they asked to forget."""

from typing import Any

from django.conf import settings
from drf_spectacular.extensions import OpenApiSerializerExtension
from rest_framework import serializers

from memories.api.serializers.memories import RedactionsField
from memories.forgetting.plan import REASONS
from memories.models import ConversationMessage, ConversationSession, ForgetRequest, Memory
from memories.services.forgetting import MEMORY_IDS_MAX, TOPIC_MAX_CHARS
from neuromem_site.api.serializers import (
    JsonObjectField,
    OutputModelSerializer,
    StrictInputSerializer,
    TextField,
    UserIdField,
    UserIdLookupField,
    UuidField,
)


class SessionCreateInput(StrictInputSerializer):
    user_id = UserIdField()
    metadata = JsonObjectField(required=False, default=dict)


class SessionOutput(OutputModelSerializer):
    class Meta:
        model = ConversationSession
        fields = ["id", "user_id", "started_at", "ended_at", "last_reflected_at", "metadata"]


class MessageInput(StrictInputSerializer):
    role = serializers.ChoiceField(["user", "assistant", "system"])
    content = TextField(max_length=settings.MEMORY_MAX_CHARS)
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


class ForgetInput(StrictInputSerializer):
    """What to forget: a `topic` as a person would say it, or the memories by id."""

    topic = TextField(
        required=False,
        max_length=TOPIC_MAX_CHARS,
        help_text='What to forget, in words: "my home address", "everything about Alex", '
        '"my medical information", "我的病史". Memories about it are found by its words, its '
        "names and the kind of information it names; a topic that names nothing "
        '("everything") forgets nothing and says why.',
    )
    memory_ids = serializers.ListField(
        child=UuidField(),
        required=False,
        min_length=1,
        max_length=MEMORY_IDS_MAX,
        help_text="The memories to forget (with their older versions), instead of `topic`.",
    )
    dry_run = serializers.BooleanField(
        default=False,
        help_text="Answer what would be forgotten (with its content) and change nothing.",
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if ("topic" in data) == ("memory_ids" in data):
            raise serializers.ValidationError({"topic": ["Give either `topic` or `memory_ids`."]})
        return data


class ForgetInputSchema(OpenApiSerializerExtension):
    target_class = ForgetInput

    def map_serializer(self, auto_schema, direction) -> dict:
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        return {**schema, "oneOf": [{"required": ["topic"]}, {"required": ["memory_ids"]}]}


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
