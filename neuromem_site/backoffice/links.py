"""Admin URLs the back-office and the model admins link each other with. `end_user_url` is the
one other admins use (a user_id column linking to the end user's page)."""

from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.contrib.admin.utils import quote
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from memories.models import Memory, MemoryType


def admin_url(name: str, *args, query: dict | None = None) -> str | None:
    """The admin URL `name` (with `query` as its query string), or None while that page does
    not exist (a model admin not registered, or no longer)."""
    try:
        url = reverse(name, args=args)
    except NoReverseMatch:
        return None
    return f"{url}?{urlencode(query)}" if query else url


def end_user_url(user_id: str) -> str:
    """The end user's page. The id is quoted the admin's way (a '/' or '?' in a V1 user_id
    stays one path segment), then percent-encoded by reverse."""
    return reverse("admin:backoffice_end_user", args=[quote(user_id)])


class EndUserColumn:
    """A model admin mixin: `end_user`, the row's user_id linking to the end user's page."""

    @admin.display(description="user_id", ordering="user_id")
    def end_user(self, obj: Any) -> str:
        if not obj.user_id:
            return "–"
        return format_html('<a href="{}">{}</a>', end_user_url(obj.user_id), obj.user_id)


def memory_url(memory: Memory) -> str | None:
    """A memory's admin page: a trait's on the trait admin, any other's on the memory admin."""
    if memory.memory_type == MemoryType.TRAIT:
        return trait_url(memory.pk)
    return admin_url("admin:memories_memory_change", quote(memory.pk))


def trait_url(trait_id) -> str | None:
    """A trait's page on the trait admin."""
    return admin_url("admin:reflection_trait_change", quote(trait_id))


def message_url(message_id) -> str | None:
    """A conversation message's admin page."""
    return admin_url("admin:memories_conversationmessage_change", quote(message_id))


def forget_request_url(request_id) -> str | None:
    """A forget request's admin page: what it forgot, by id."""
    return admin_url("admin:memories_forgetrequest_change", quote(request_id))


def memories_of_user_url(user_id: str, **filters: str) -> str | None:
    """The memory list filtered to one end user (and `filters`)."""
    return admin_url("admin:memories_memory_changelist", query={"user_id": user_id, **filters})
