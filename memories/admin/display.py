"""How the memory admins show things: page URLs, text and JSON blocks, id links, and what
every admin over the memories table shares (the heavy columns left unloaded, the short content
column, a memory's audit history)."""

import json
import uuid
from collections.abc import Callable

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.text import Truncator

from core.access import Caller
from core.admin_base import AuditTrail, staff_caller
from memories.models import Memory
from memories.selectors import memory_history

# Columns the admin never loads: vectors are big and unreadable, the tsvector is derived.
HEAVY_COLUMNS = ("embedding", "lexical_vector", "search_vector")
# A memory's (or a trait's) page shows the newest history rows, oldest first; the rest is a
# click away.
HISTORY_ROWS = 100


def memory_url(memory_id) -> str:
    return reverse("admin:memories_memory_change", args=[memory_id])


def session_url(session_id) -> str:
    return reverse("admin:memories_conversationsession_change", args=[session_id])


def pretty_json(value) -> str:
    return format_html(
        '<pre class="memory-json">{}</pre>',
        json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str),
    )


def text_block(text: str) -> str:
    return format_html('<div class="memory-text">{}</div>', text)


def redactions_text(redactions: dict[str, int] | None) -> str:
    """What a write redacted, "password 1, api_key 2", or "–"."""
    if not redactions:
        return "–"
    return ", ".join(f"{kind} {number}" for kind, number in sorted(redactions.items()))


def id_links(ids: list, url_of: Callable[[uuid.UUID], str]) -> str:
    """Ids, one a line, each linking to its page."""
    if not ids:
        return "–"
    return format_html_join(
        mark_safe("<br>"), '<a href="{}">{}</a>', ((url_of(value), value) for value in ids)
    )


def history_context(caller: Caller, memory: Memory) -> dict:
    """The history rows a page shows (admin/includes/memory_history.html): the newest
    HISTORY_ROWS, oldest first."""
    newest = memory_history(caller=caller, memory=memory).reverse()[:HISTORY_ROWS]
    return {"history": list(reversed(newest)), "history_rows": HISTORY_ROWS}


class RecordFields:
    """A model admin mixin: the page fields of what an end user's words became (memories,
    sessions, messages), each shown whole."""

    @admin.display(description="content")
    def content_text(self, obj) -> str:
        return text_block(obj.content)

    @admin.display(description="metadata")
    def metadata_json(self, obj) -> str:
        return pretty_json(obj.metadata)

    @admin.display(description="redacted")
    def redacted(self, obj) -> str:
        return redactions_text(obj.redactions)


class MemoryRows:
    """A model admin mixin for lists of memories (any type): the heavy columns are never
    loaded, `content_short` never shows what a forgotten memory said, and the history page shows
    the memory's audit history (ReadOnlyAdmin.audit_trail)."""

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).defer(*HEAVY_COLUMNS)

    @admin.display(description="content")
    def content_short(self, obj: Memory) -> str:
        if obj.forgotten_at is not None:
            return "(forgotten)"
        return Truncator(obj.content).chars(80)

    def audit_trail(self, request: HttpRequest, obj: Memory) -> AuditTrail:
        return AuditTrail(
            "admin/includes/memory_history.html", history_context(staff_caller(request), obj)
        )
