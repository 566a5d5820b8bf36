"""The SOUL's event log: every state change of a version, by whom and why."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from core.admin_base import ReadOnlyAdmin
from evolution.admin.display import version_url_id
from evolution.models import SoulEvent


@admin.register(SoulEvent)
class SoulEventAdmin(ReadOnlyAdmin):
    list_display = [
        "version_link",
        "agent",
        "from_status",
        "to_status",
        "actor",
        "reason_short",
        "created_at",
    ]
    list_filter = ["agent", "to_status"]
    list_select_related = ["agent"]
    ordering = ["-id"]
    sortable_by = ["created_at"]
    search_fields = ["actor"]
    search_help_text = "An actor, or part of one: staff:<username>, an API client's name, system."

    @admin.display(description="version")
    def version_link(self, obj: SoulEvent) -> str:
        url = reverse(
            "admin:evolution_soulversion_change",
            args=[version_url_id(obj.agent_id, obj.version)],
        )
        return format_html('<a href="{}">v{}</a>', url, obj.version)

    @admin.display(description="reason")
    def reason_short(self, obj: SoulEvent) -> str:
        return Truncator(obj.reason or "").chars(120)
