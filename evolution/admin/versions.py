"""The SOUL's versions: read-only pages addressed by agent and number, and the actions staff
take on a version's page through the services (veto, evaluate, apply, roll back)."""

from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from core.admin_base import (
    AuditTrail,
    ObjectPageContext,
    ServiceReasonForm,
    StaffActionAdmin,
    staff_caller,
)
from evolution.admin.display import (
    VERSION_URL_ID,
    diff_lines,
    eval_summary,
    intent_of,
    proposal_rows,
    version_url_id,
)
from evolution.models import Agent, SoulStatus, SoulVersion
from evolution.selectors import soul_active, soul_markdown, soul_version_detail
from evolution.services import (
    REASON_MAX_CHARS,
    soul_apply,
    soul_evaluate,
    soul_rollback,
    soul_veto,
)

# Versions that may be vetoed, and versions that may be restored (soul_veto, soul_rollback).
VETOABLE = (SoulStatus.PROPOSED, SoulStatus.ACTIVE)
RESTORABLE = (SoulStatus.SUPERSEDED, SoulStatus.ROLLED_BACK)
VETO_RECORDED = "The reason is recorded with your name in the SOUL's event log."


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
        if max(len(named[1]), len(named[2])) > 19:  # no bigint has more digits; int() refuses
            return None  # to read over 4,300
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
