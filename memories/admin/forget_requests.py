"""Forget requests, read-only: who asked, when, by which path, and what was erased, by id.
Never what was asked: the topic is not stored (it may be the secret)."""

from collections.abc import Callable

from django.contrib import admin
from django.utils.html import format_html

from core.admin_base import ExactSearch, ReadOnlyAdmin
from memories.admin.display import id_links, memory_url
from memories.forgetting.plan import REASONS
from memories.models import ForgetRequest
from neuromem_site.backoffice.links import EndUserColumn, message_url, trait_url


def ids_count(field: str, description: str):
    """A list column: how many ids the request's `field` holds."""

    @admin.display(description=description)
    def column(self, obj: ForgetRequest) -> int:
        return len(getattr(obj, field))

    return column


def ids_links(field: str, url_of: Callable, description: str):
    """A page field: the ids the request's `field` holds, each linking to its page."""

    @admin.display(description=description)
    def column(self, obj: ForgetRequest) -> str:
        return id_links(getattr(obj, field), url_of)

    return column


@admin.register(ForgetRequest)
class ForgetRequestAdmin(EndUserColumn, ExactSearch, ReadOnlyAdmin):
    """Forget requests, read-only, newest first."""

    list_display = [
        "created_at",
        "end_user",
        "requested_by",
        "via",
        "forgotten_count",
        "erased_count",
        "messages_count",
        "reason_code",
    ]
    list_display_links = ["created_at"]
    list_filter = ["via"]  # the choices of the field: no query for them
    ordering = ["-created_at", "-id"]  # idx_forget_requests_recent
    sortable_by = ["created_at"]
    search_fields = ["user_id"]
    search_help_text = "An exact user_id, or a forget request's id."
    exact_text = ("user_id",)
    exact_ids = ("id",)
    fields = [
        "id",
        "end_user",
        "created_at",
        "requested_by",
        "via",
        "asked_in",
        "reason_text",
        "forgotten_links",
        "erased_links",
        "message_links",
        "traits_reweighed_links",
        "traits_dissolved_links",
    ]

    forgotten_count = ids_count("memory_ids", "forgotten")
    erased_count = ids_count("erased_memory_ids", "erased in part")
    messages_count = ids_count("message_ids", "messages")
    forgotten_links = ids_links("memory_ids", memory_url, "memories forgotten whole")
    erased_links = ids_links("erased_memory_ids", memory_url, "memories erased in part")
    message_links = ids_links("message_ids", message_url, "messages erased")
    traits_reweighed_links = ids_links("traits_reweighed", trait_url, "traits re-weighed")
    traits_dissolved_links = ids_links("traits_dissolved", trait_url, "traits dissolved")

    @admin.display(description="reason")
    def reason_code(self, obj: ForgetRequest) -> str:
        return obj.reason or "–"

    @admin.display(description="why nothing was forgotten")
    def reason_text(self, obj: ForgetRequest) -> str:
        if not obj.reason:
            return "–"
        return format_html("<code>{}</code>: {}", obj.reason, REASONS.get(obj.reason, ""))

    @admin.display(description="asked in message")
    def asked_in(self, obj: ForgetRequest) -> str:
        return id_links([obj.message_id] if obj.message_id else [], message_url)
