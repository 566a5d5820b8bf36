from django.contrib import admin
from django.db import transaction

from core.admin_base import CheckedParameters
from neuromem_site.api.models import ApiClient


@admin.register(ApiClient)
class ApiClientAdmin(CheckedParameters, admin.ModelAdmin):
    """Browse and revoke clients. Tokens are created with `manage.py create_api_client`,
    which prints the token once; the admin never sees it."""

    list_display = ["name", "token_hint", "user_prefixes", "is_staff", "is_active", "last_used_at"]
    list_filter = ["is_staff", "is_active"]
    search_fields = ["name"]
    readonly_fields = ["id", "token_hint", "created_at", "last_used_at"]
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description="Revoke the selected clients' tokens", permissions=["change"])
    def revoke(self, request, queryset) -> None:
        with transaction.atomic():  # the revocations and their log entries, or neither
            clients = list(queryset.filter(is_active=True).select_for_update())
            queryset.filter(pk__in=[client.pk for client in clients]).update(is_active=False)
            for client in clients:
                self.log_change(request, client, "Revoked the token.")
        self.message_user(request, f"Revoked {len(clients)} client(s).")
