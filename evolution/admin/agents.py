"""The agents, and what each agent's runtime guardrail recorded."""

from django.contrib import admin
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html_join

from core.admin_base import ReadOnlyAdmin, staff_caller
from evolution.models import Agent, GuardEvent
from evolution.services import agent_update


@admin.register(Agent)
class AgentAdmin(ReadOnlyAdmin):
    """The agents, each linking to its SOUL's versions, contract and events and to what its
    runtime guardrail recorded; staff turn an agent's guard on or off (agent_update)."""

    list_display = ["name", "client", "is_default", "guard_enabled", "created_at", "soul_links"]
    list_filter = ["is_default", "guard_enabled"]
    list_select_related = ["client"]
    search_fields = ["name", "client__name"]
    fields = ["name", "client", "is_default", "guard_enabled", "created_at", "soul_links"]
    actions = ["guard_on", "guard_off"]

    def has_guard_permission(self, request: HttpRequest) -> bool:
        # Django's own check of `evolution.change_agent`.
        return admin.ModelAdmin.has_change_permission(self, request)

    @admin.display(description="SOUL")
    def soul_links(self, obj: Agent) -> str:
        links = [
            (reverse(f"admin:evolution_{model}_changelist") + f"?agent__id__exact={obj.pk}", label)
            for model, label in (
                ("soulversion", "versions"),
                ("safetycontract", "contract"),
                ("soulevent", "events"),
                ("guardevent", "guardrail"),
            )
        ]
        return format_html_join(" · ", '<a href="{}">{}</a>', links)

    def set_guard(self, request: HttpRequest, queryset: QuerySet, enabled: bool) -> None:
        caller, state = staff_caller(request), "on" if enabled else "off"
        with transaction.atomic():  # the changes and their log entries, or neither
            agents = list(queryset.exclude(guard_enabled=enabled).select_for_update(of=("self",)))
            for agent in agents:
                agent_update(caller=caller, agent=agent, guard_enabled=enabled)
                self.log_change(request, agent, f"Turned the runtime guardrail {state}.")
        self.message_user(request, f"Turned the guardrail {state} for {len(agents)} agent(s).")

    @admin.action(description="Turn the runtime guardrail on", permissions=["guard"])
    def guard_on(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.set_guard(request, queryset, True)

    @admin.action(description="Turn the runtime guardrail off", permissions=["guard"])
    def guard_off(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.set_guard(request, queryset, False)


@admin.register(GuardEvent)
class GuardEventAdmin(ReadOnlyAdmin):
    """What the agents' runtime guardrails recorded: failed checks, refused calls, calls let
    through while a check had failed (append-only)."""

    list_display = ["created_at", "agent", "kind", "action", "risk_level", "error_code", "session"]
    list_filter = ["kind", "agent", "error_code"]
    list_select_related = ["agent"]
    ordering = ["-id"]
    sortable_by = ["created_at"]
    search_fields = ["session", "actor", "action"]
    search_help_text = "A session, an actor (an API client's name) or an action (a tool, a route)."
    fields = [field.name for field in GuardEvent._meta.fields if field.name != "id"]
