"""Conversation sessions and messages, read-only, newest first, each message with the
memories written from it. No content search: the messages table has no full-text index, and
ILIKE would read all of it."""

import uuid

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.text import Truncator

from core.admin_base import ExactSearch, ObjectPageContext, ReadOnlyAdmin
from memories.admin.display import (
    HEAVY_COLUMNS,
    RecordFields,
    memory_url,
    session_url,
)
from memories.admin.filters import EndedFilter, ExtractionStatusFilter, SessionFilter, UserIdFilter
from memories.models import ConversationMessage, ConversationSession, Memory, MemorySource
from neuromem_site.backoffice.links import EndUserColumn, message_url

# A session's page shows its first messages; the rest is a click away.
MESSAGE_ROWS = 200


def message_memories(messages: list[ConversationMessage]) -> dict[uuid.UUID, list[tuple]]:
    """message id → the memories written from it: (memory, url). Read by session
    (idx_sources_session); memory_sources has no index on the message."""
    sessions = {message.session_id for message in messages}
    wanted = {message.pk for message in messages}
    sources = [
        source
        for source in MemorySource.objects.filter(session_id__in=sessions).order_by("created_at")
        if source.conversation_id in wanted
    ]
    memories = Memory.objects.defer(*HEAVY_COLUMNS).in_bulk(
        [source.memory_id for source in sources]
    )
    written: dict[uuid.UUID, list[tuple]] = {}
    for source in sources:
        memory = memories.get(source.memory_id)
        if memory is not None:
            written.setdefault(source.conversation_id, []).append((memory, memory_url(memory.pk)))
    return written


class ConversationAdmin(EndUserColumn, RecordFields, ExactSearch, ObjectPageContext, ReadOnlyAdmin):
    """What the session and message admins share: read-only, searched by an exact user_id or
    id, a page with what the conversation wrote."""

    search_fields = ["user_id"]  # for the search box to show; ExactSearch searches
    exact_text = ("user_id",)


@admin.register(ConversationSession)
class ConversationSessionAdmin(ConversationAdmin):
    """Sessions, read-only, newest first; a session's page lists its messages."""

    list_display = ["session_id", "end_user", "started_at", "ended_at", "last_reflected_at"]
    list_display_links = ["session_id"]
    list_filter = [UserIdFilter, EndedFilter]
    ordering = ["-started_at", "-id"]  # idx_sessions_started (migration 0012)
    sortable_by = ["started_at"]
    search_help_text = "An exact user_id, or a session's id."
    exact_ids = ("id",)
    fields = ["id", "end_user", "started_at", "ended_at", "last_reflected_at", "metadata_json"]

    @admin.display(description="session")
    def session_id(self, obj: ConversationSession) -> str:
        return str(obj.pk)

    def page_context(self, request: HttpRequest, session: ConversationSession) -> dict:
        """Its first messages, each with the memories written from it."""
        first = list(session.messages.order_by("created_at", "id")[: MESSAGE_ROWS + 1])
        written = message_memories(first[:MESSAGE_ROWS])
        return {
            "session_messages": [
                (message, message_url(message.pk), written.get(message.pk, []))
                for message in first[:MESSAGE_ROWS]
            ],
            "more_messages": len(first) > MESSAGE_ROWS,
            "message_rows": MESSAGE_ROWS,
            "all_messages_url": reverse("admin:memories_conversationmessage_changelist")
            + "?"
            + urlencode({"session_id": session.pk}),
        }


@admin.register(ConversationMessage)
class ConversationMessageAdmin(ConversationAdmin):
    """Messages, read-only, newest first, with the memories written from each."""

    list_display = [
        "content_short",
        "role",
        "end_user",
        "session_link",
        "extraction_status",
        "redacted",
        "created_at",
    ]
    list_display_links = ["content_short"]
    list_filter = [UserIdFilter, SessionFilter, ExtractionStatusFilter]
    ordering = ["-created_at", "-id"]  # idx_conversations_created (migration 0012)
    sortable_by = ["created_at"]
    search_help_text = "An exact user_id, or a message's or session's id."
    exact_ids = ("id", "session_id")
    fields = [
        "id",
        "session_link",
        "end_user",
        "role",
        "created_at",
        "extraction_status",
        "redacted",
        "content_text",
    ]

    @admin.display(description="content")
    def content_short(self, obj: ConversationMessage) -> str:
        return Truncator(obj.content).chars(80)

    @admin.display(description="session")
    def session_link(self, obj: ConversationMessage) -> str:
        return format_html('<a href="{}">{}</a>', session_url(obj.session_id), obj.session_id)

    def page_context(self, request: HttpRequest, message: ConversationMessage) -> dict:
        return {"written": message_memories([message]).get(message.pk, [])}
