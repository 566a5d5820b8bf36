"""Staff views of the agents' SOUL documents: their versions, their Core Safety Contracts, the
event log, and what each agent's runtime guardrail recorded; each list filters by agent.

Nothing is edited in place. A version changes only through the services (docs/evolution.md)
that the API uses too, reached from its page: veto (with a reason), evaluate and apply a
proposal, roll back to a version that was active once. Each needs the
`evolution.change_soulversion` permission, and is recorded in the admin's history besides
the database's own event log. A contract change is a new contract version
(`safety_contract_update`, the `evolution.add_safetycontract` permission).

A version's pages are addressed by its agent and number (`soulversion/a2-v8/change/`), never
by its row id, which differs: an address by row id leads to the version's own address, saying
so.
"""

import re

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator

from core.admin_base import (
    AuditTrail,
    ObjectPageContext,
    ReadOnlyAdmin,
    ServiceReasonForm,
    StaffActionAdmin,
    staff_caller,
)
from core.errors import DomainError
from evolution.models import (
    Agent,
    GuardEvent,
    SafetyContract,
    SoulEvent,
    SoulStatus,
    SoulVersion,
)
from evolution.selectors import (
    safety_contract_current,
    soul_active,
    soul_markdown,
    soul_version_detail,
)
from evolution.services import (
    REASON_MAX_CHARS,
    agent_update,
    safety_contract_update,
    soul_apply,
    soul_evaluate,
    soul_rollback,
    soul_veto,
)

# Versions that may be vetoed, and versions that may be restored (soul_veto, soul_rollback).
VETOABLE = (SoulStatus.PROPOSED, SoulStatus.ACTIVE)
RESTORABLE = (SoulStatus.SUPERSEDED, SoulStatus.ROLLED_BACK)
VETO_RECORDED = "The reason is recorded with your name in the SOUL's event log."
# How the admin's URLs name a version: "a", its agent's id, "-v" and its number.
VERSION_URL_ID = re.compile(r"a(\d+)-v(\d+)")


def version_url_id(agent_id: int, number: int) -> str:
    return f"a{agent_id}-v{number}"


def eval_summary(version: SoulVersion) -> str:
    result = version.eval_result
    if result is None:
        return "not evaluated"
    verdict = "passed" if result.get("passed") else "failed"
    summary = result.get("summary") or ""
    return f"{verdict} — {summary}" if summary else verdict


def intent_of(version: SoulVersion) -> str:
    """What a version is for: a proposal's intent, what a restore brings back, the bootstrap."""
    proposal = version.proposal or {}
    if proposal.get("intent"):
        return proposal["intent"]
    if "restores" in proposal:
        return f"restores v{proposal['restores']} (replacing v{proposal.get('replaces')})"
    if version.created_by == "bootstrap":
        return "bootstrap"
    return ""


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """A unified diff's lines with the CSS class each is shown with."""
    lines = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            css = "diff-file"
        elif line.startswith("@@"):
            css = "diff-hunk"
        elif line.startswith("+"):
            css = "diff-add"
        elif line.startswith("-"):
            css = "diff-del"
        else:
            css = "diff-context"
        lines.append((css, line))
    return lines


# --- Agents ----------------------------------------------------------------------------------


@admin.register(Agent)
class AgentAdmin(ReadOnlyAdmin):
    """The agents, each linking to its SOUL's versions, contract and events and to what its
    runtime guardrail recorded; staff turn an agent's guard on or off (agent_update)."""

    list_display = ["name", "client", "is_default", "guard_enabled", "created_at", "soul_links"]
    list_filter = ["is_default", "guard_enabled"]
    list_select_related = ["client"]
    search_fields = ["name", "client__name"]
    fields = ["name", "client", "is_default", "guard_enabled", "created_at", "soul_links"]
    readonly_fields = fields
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
    readonly_fields = fields


# --- SOUL versions ---------------------------------------------------------------------------


class SoulVersionChangeList(ChangeList):
    """The version list, each row linking to its version's address (v<number>)."""

    def url_for_result(self, result: SoulVersion) -> str:
        return self.model_admin.change_url(result)


@admin.register(SoulVersion)
class SoulVersionAdmin(ObjectPageContext, StaffActionAdmin):
    """The SOUL's versions, read-only; the actions on a version's page go through the
    services and need the `evolution.change_soulversion` permission."""

    list_display = [
        "version",
        "agent",
        "status",
        "created_by",
        "created_at",
        "evaluation",
        "intent",
    ]
    list_display_links = ["version"]
    list_filter = ["agent", "status", "created_by"]
    list_select_related = ["agent"]
    ordering = ["agent", "-version"]
    sortable_by = ["version", "created_at"]
    fields = ["agent", "version", "status", "created_by", "created_at"]
    readonly_fields = fields
    object_actions = ("veto", "evaluate", "apply", "rollback")

    @admin.display(description="evaluation")
    def evaluation(self, obj: SoulVersion) -> str:
        return eval_summary(obj)

    @admin.display(description="intent")
    def intent(self, obj: SoulVersion) -> str:
        return Truncator(intent_of(obj)).chars(80)

    # --- Addressed by number ----------------------------------------------------------------

    def url_id(self, obj: SoulVersion) -> str:
        return version_url_id(obj.agent_id, obj.version)

    def get_object(self, request, object_id, from_field=None):
        """`a<agent>-v<number>`: that agent's version with that number. A row id only comes
        from code (the history page's log lookup): one in a URL never gets here
        (row_id_view)."""
        named = VERSION_URL_ID.fullmatch(object_id)
        if named is None:
            return super().get_object(request, object_id, from_field)
        found = self.get_queryset(request).filter(agent_id=int(named[1]), version=int(named[2]))
        return found.first()

    def get_changelist(self, request, **kwargs):
        return SoulVersionChangeList

    def get_urls(self):
        # Before Django's `<path:object_id>/...`, which would take the number for a row id.
        row_id_view = self.admin_site.admin_view(self.row_id_view)
        return [
            path("<int:row_id>/", row_id_view),
            path("<int:row_id>/<path:rest>", row_id_view),
            *super().get_urls(),
        ]

    def row_id_view(self, request: HttpRequest, row_id: int, rest: str = "") -> HttpResponse:
        """An address by row id (the admin's log links versions so; so did the admin before
        versions were addressed by number): to that version's own address, saying which it is,
        so the number in the address is always the version shown."""
        obj = self.get_queryset(request).filter(pk=row_id).first()
        if obj is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, str(row_id))
        if not self.has_view_permission(request, obj):
            raise PermissionDenied
        address = f"{reverse('admin:evolution_soulversion_changelist')}{self.url_id(obj)}/{rest}"
        messages.info(
            request,
            f"SOUL versions are addressed by their number now: {row_id} in the address you "
            f"opened is a row id, that of v{obj.version}, shown here.",
        )
        query = request.GET.urlencode()
        return HttpResponseRedirect(f"{address}?{query}" if query else address)

    def audit_trail(self, request: HttpRequest, obj: SoulVersion) -> AuditTrail:
        return AuditTrail(
            "admin/includes/soul_events.html",
            {"events": soul_version_detail(agent=obj.agent, version=obj.version).events},
        )

    # --- Actions ----------------------------------------------------------------------------

    def log_version(self, request: HttpRequest, agent: Agent, number: int, message: str) -> None:
        self.log_change(request, SoulVersion.objects.get(agent=agent, version=number), message)

    def veto(self, request: HttpRequest, obj: SoulVersion, reason: str) -> str:
        """soul_veto (which judges the reason) and the admin's history of it; run by
        run_action."""
        after = soul_veto(
            agent=obj.agent, caller=staff_caller(request), version=obj.version, reason=reason
        )
        self.log_version(request, obj.agent, obj.version, f"Vetoed: {reason.strip()}")
        if after.version == obj.version:
            return f"Vetoed the proposal v{obj.version}; it can never be applied."
        # It was active: `after` restores another.
        restores = after.proposal["restores"]
        self.log_version(
            request,
            obj.agent,
            after.version,
            f"Restored v{restores} after the veto of v{obj.version}: {reason.strip()}",
        )
        return (
            f"Vetoed SOUL v{obj.version}; v{after.version} (the content of v{restores}) is "
            "active now."
        )

    def veto_page(self, request: HttpRequest, obj: SoulVersion, reason: str) -> HttpResponse:
        if obj.status == SoulStatus.ACTIVE:
            explanation = format_html(
                "Vetoing the active version marks it <em>vetoed</em> and restores the previous "
                "stable version as a new active one. {}",
                VETO_RECORDED,
            )
        else:
            explanation = f"A vetoed proposal can never be applied. {VETO_RECORDED}"
        return self.confirmation_page(
            request,
            title=f"Veto SOUL v{obj.version}",
            button="Veto",
            explanation=explanation,
            form=ServiceReasonForm(reason, max_chars=REASON_MAX_CHARS),
            cancel_url=self.change_url(obj),
            original=obj,
        )

    def veto_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return self.reason_view(
            request,
            object_id,
            run=lambda obj, reason: self.veto(request, obj, reason),
            failure="Nothing was vetoed",
            page=lambda obj, reason: self.veto_page(request, obj, reason),
        )

    def post_only(self, request: HttpRequest, object_id: str, failure: str, action):
        """An action its page's button posts: `action(version)`, then back to the page."""
        obj = self.action_object(request, object_id)
        if isinstance(obj, HttpResponse):
            return obj
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        self.run_action(request, lambda: action(obj), failure=failure)
        return HttpResponseRedirect(self.change_url(obj))

    def evaluate_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        def evaluate(obj: SoulVersion) -> str:
            done = soul_evaluate(agent=obj.agent, caller=staff_caller(request), version=obj.version)
            summary = eval_summary(done)
            self.log_change(request, done, f"Evaluated: {summary}")
            return f"Evaluated SOUL v{obj.version}: {summary}."

        return self.post_only(request, object_id, "Not evaluated", evaluate)

    def apply_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        def apply(obj: SoulVersion) -> str:
            applied = soul_apply(agent=obj.agent, caller=staff_caller(request), version=obj.version)
            self.log_change(request, applied, "Applied")
            # The version it changed was the active one (soul_apply checks that, locked).
            superseded = applied.proposal["base_version"]
            self.log_version(request, obj.agent, superseded, f"Superseded by v{obj.version}")
            return f"Applied SOUL v{obj.version}; it is the active version now."

        return self.post_only(request, object_id, "Nothing was applied", apply)

    def rollback_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        def rollback(obj: SoulVersion) -> str:
            reason = request.POST.get("reason", "")
            restored = soul_rollback(
                agent=obj.agent, caller=staff_caller(request), to_version=obj.version, reason=reason
            )
            why = f": {reason.strip()}" if reason.strip() else ""
            self.log_addition(request, restored, f"Restores v{obj.version}{why}")
            self.log_version(
                request,
                obj.agent,
                restored.proposal["replaces"],
                f"Rolled back to v{obj.version} as v{restored.version}{why}",
            )
            return (
                f"Rolled back to SOUL v{obj.version}: v{restored.version} with its content "
                "is active now."
            )

        return self.post_only(request, object_id, "Nothing was rolled back", rollback)

    # --- The version's page -----------------------------------------------------------------

    def page_context(self, request: HttpRequest, obj: SoulVersion) -> dict:
        """The content, the diff, the evaluation, the proposal, the events, and the actions
        the staff member may take."""
        detail = soul_version_detail(agent=obj.agent, version=obj.version)
        version = detail.version
        result = version.eval_result
        proposal = dict(version.proposal or {})
        proposal.pop("diff", None)  # shown as the diff against the predecessor
        context = {
            "detail": detail,
            "markdown": soul_markdown(version),
            "diff_lines": diff_lines(detail.diff),
            "predecessor_url": detail.predecessor and self.change_url(detail.predecessor),
            "eval_result": result,
            "eval_summary": eval_summary(version),
            "proposal_fields": proposal_rows(proposal),
            "events": detail.events,
            "history_url": self.action_url("history", obj),
        }
        if self.has_action_permission(request, obj):
            actions = self.version_actions(version)
            context.update(actions, soul_actions=bool(actions), reason_max=REASON_MAX_CHARS)
        return context

    def version_actions(self, version: SoulVersion) -> dict[str, str]:
        """The actions the version's state allows (their URLs), or why apply is not one."""
        result = version.eval_result
        actions = {}
        active = soul_active(agent=version.agent)
        if version.status in VETOABLE:
            actions["veto_url"] = self.action_url("veto", version)
        if version.status == SoulStatus.PROPOSED:
            base = (version.proposal or {}).get("base_version")
            if result is None:
                actions["evaluate_url"] = self.action_url("evaluate", version)
            elif not result.get("passed"):
                pass  # a rejected proposal is never applied
            elif active is not None and active.version == base:
                actions["apply_url"] = self.action_url("apply", version)
            else:
                actions["stale_note"] = (
                    f"This proposal changes v{base}, which is no longer active: it "
                    "cannot be applied. Propose the change again."
                )
        if version.status in RESTORABLE and active is not None:
            actions["rollback_url"] = self.action_url("rollback", version)
        return actions


PROPOSAL_LABELS = {
    "intent": "intent",
    "risk_notes": "risk notes",
    "justification": "justification",
    "evidence_refs": "evidence refs",
    "base_version": "changes version",
    "restores": "restores version",
    "replaces": "replaces version",
    "requested_by": "requested by",
}


def proposal_rows(proposal: dict) -> list[tuple[str, str]]:
    """The proposal's fields as (label, text) rows: the known ones first, in order."""
    rows = []
    for key in [*PROPOSAL_LABELS, *sorted(set(proposal) - set(PROPOSAL_LABELS))]:
        if key not in proposal:
            continue
        value = proposal[key]
        if isinstance(value, list):
            value = ", ".join(str(item) for item in value)
        rows.append((PROPOSAL_LABELS.get(key, key), "" if value is None else str(value)))
    return rows


# --- The Core Safety Contract ----------------------------------------------------------------


def lines_of(text: str) -> list[str]:
    """One item per non-blank line, without the whitespace around it."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


class SafetyContractForm(forms.Form):
    agent = forms.ModelChoiceField(
        queryset=Agent.objects.order_by("id"),
        help_text="Whose contract: the staff additions below join what its SOUL states.",
    )
    anchors = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 10, "cols": 100}),
        required=False,
        help_text="One anchor per line: a phrase every SOUL version must keep (case-insensitive).",
    )
    constraints = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 10, "cols": 100}),
        required=False,
        help_text=(
            "One regular expression per line (case-insensitive, multi-line): a pattern no SOUL "
            "version may match. Whitespace at either end of a line is dropped."
        ),
    )


@admin.register(SafetyContract)
class SafetyContractAdmin(ReadOnlyAdmin):
    """The contract's versions, read-only; "Add" makes the next version through the service
    (`evolution.add_safetycontract`)."""

    list_display = [
        "version",
        "agent",
        "anchors_count",
        "constraints_count",
        "hash_prefix",
        "created_by",
        "created_at",
    ]
    list_filter = ["agent"]
    list_select_related = ["agent"]
    ordering = ["agent", "-version"]
    sortable_by = ["version", "created_at"]
    fields = [
        "agent",
        "version",
        "content_hash",
        "source_hash",
        "created_by",
        "created_at",
        "extracted_anchors_list",
        "extracted_constraints_list",
        "anchors_list",
        "constraints_list",
    ]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return admin.ModelAdmin.has_add_permission(self, request)

    @admin.display(description="anchors")
    def anchors_count(self, obj: SafetyContract) -> int:
        return len(obj.anchors or []) + len(obj.extracted_anchors or [])

    @admin.display(description="constraints")
    def constraints_count(self, obj: SafetyContract) -> int:
        return len(obj.constraints or []) + len(obj.extracted_constraints or [])

    @admin.display(description="hash")
    def hash_prefix(self, obj: SafetyContract) -> str:
        return obj.content_hash[:12]

    @staticmethod
    def items_html(items: list[str]) -> str:
        if not items:
            return "–"
        return format_html(
            "<ol>{}</ol>", format_html_join("", "<li><code>{}</code></li>", ((i,) for i in items))
        )

    @admin.display(description="anchors from the SOUL (every later SOUL must keep)")
    def extracted_anchors_list(self, obj: SafetyContract) -> str:
        return self.items_html(obj.extracted_anchors or [])

    @admin.display(description="constraints from the SOUL (every later SOUL must keep stating)")
    def extracted_constraints_list(self, obj: SafetyContract) -> str:
        return self.items_html(obj.extracted_constraints or [])

    @admin.display(description="staff anchors (every SOUL must keep)")
    def anchors_list(self, obj: SafetyContract) -> str:
        return self.items_html(obj.anchors or [])

    @admin.display(description="staff constraints (patterns no SOUL may match)")
    def constraints_list(self, obj: SafetyContract) -> str:
        return self.items_html(obj.constraints or [])

    def add_view(self, request, form_url="", extra_context=None):
        """A new contract version of an agent: the form starts from the contract named by
        `?from=<id>` (or the first agent's current one) and is saved through
        `safety_contract_update`."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        current = None
        if request.method == "POST":
            form = SafetyContractForm(request.POST)
            if form.is_valid():
                current = safety_contract_current(agent=form.cleaned_data["agent"])
                created = self.create_contract(request, form)
                if created is not None:
                    messages.success(
                        request,
                        f"Created safety contract v{created.version}; evaluations use it now.",
                    )
                    return HttpResponseRedirect(
                        reverse("admin:evolution_safetycontract_change", args=[created.pk])
                    )
        else:
            start = None
            if request.GET.get("from", "").isdigit():
                start = SafetyContract.objects.filter(pk=int(request.GET["from"])).first()
            first_agent = Agent.objects.order_by("id").first()
            if start is None and first_agent is not None:
                start = safety_contract_current(agent=first_agent)
            initial = {"agent": start.agent if start else first_agent}
            if start is not None:
                current = safety_contract_current(agent=start.agent)
                initial |= {
                    "anchors": "\n".join(start.anchors or []),
                    "constraints": "\n".join(start.constraints or []),
                }
            form = SafetyContractForm(initial=initial)
        return TemplateResponse(
            request,
            "admin/evolution/safetycontract/add_form.html",
            {
                **self.admin_site.each_context(request),
                **(extra_context or {}),
                "title": "New safety contract version",
                "opts": self.opts,
                "form": form,
                "current": current,
                "next_version": (current.version if current else 0) + 1,
            },
        )

    def create_contract(self, request: HttpRequest, form: SafetyContractForm):
        anchors = lines_of(form.cleaned_data["anchors"])
        constraints = lines_of(form.cleaned_data["constraints"])
        try:
            with transaction.atomic():
                created = safety_contract_update(
                    agent=form.cleaned_data["agent"],
                    caller=staff_caller(request),
                    anchors=anchors,
                    constraints=constraints,
                )
                self.log_addition(request, created, f"Created safety contract v{created.version}")
        except DomainError as error:
            name, _, index = (error.field or "").partition("[")
            if name in form.fields:
                message = error.message
                if index.rstrip("]").isdigit():
                    items = anchors if name == "anchors" else constraints
                    number = int(index.rstrip("]"))
                    message = f"Line {number + 1} ({items[number]!r}): {message}"
                form.add_error(name, message)
            else:
                form.add_error(None, error.message)
            return None
        return created

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        if self.has_add_permission(request):
            extra_context["new_version_url"] = (
                reverse("admin:evolution_safetycontract_add") + f"?from={unquote(object_id)}"
            )
        return super().change_view(request, object_id, form_url, extra_context)


# --- The event log ---------------------------------------------------------------------------


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
