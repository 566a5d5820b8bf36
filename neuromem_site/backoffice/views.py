"""The back-office's own admin pages: end users (find one, their page, export, forget a topic,
purge) and the dashboard on the admin's index; and the forgetting steps the memory admin shares
(a dry run to show, then the forget itself). Thin: parse, check the permission, call selectors
and services, render. Every page is behind the admin's login (AdminSite.admin_view)."""

import re
import uuid
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin import AdminSite
from django.contrib.admin.models import ADDITION, CHANGE, DELETION
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse
from django.urls import path
from django_celery_beat.models import PeriodicTask

from core.access import Caller
from core.admin_base import log_entry, staff_caller
from core.errors import DomainError
from core.validation import user_id_problem
from memories.api.operations import user_export_result
from memories.forgetting.plan import REASONS
from memories.models import ForgetRequest, ForgetVia, Memory, MemoryType
from memories.predicates import STATES
from memories.selectors import memory_state
from memories.services import user_purge
from memories.services.forgetting import TOPIC_MAX_CHARS, ForgetOutcome, user_forget
from neuromem_site.api.envelope import EnvelopeJSONRenderer
from neuromem_site.backoffice.links import (
    admin_url,
    end_user_url,
    forget_request_url,
    memories_of_user_url,
    memory_url,
    message_url,
)
from neuromem_site.backoffice.selectors import (
    USERS_FOUND_MAX,
    embeddings_waiting,
    end_user_counts,
    end_user_overview,
    end_users_find,
    forget_requests_recent,
    jobs_last_runs,
    memory_counts,
    redactions_by_kind,
    reflection_failures,
)

VIEW_PERMISSION = "memories.view_memory"
PURGE_PERMISSION = "memories.purge_end_user"
# Forgetting erases part of what is held about an end user: the purge's permission (operators).
FORGET_PERMISSION = PURGE_PERMISSION


def may_view_end_users(request: HttpRequest) -> bool:
    return request.user.has_perm(VIEW_PERMISSION)


def user_export_body(*, caller: Caller, user_id: str) -> bytes:
    """GET /api/v1/users/{id}/export/'s body, byte for byte: the same operation, written by
    the API's renderer (the envelope)."""
    return EnvelopeJSONRenderer().render(user_export_result(caller=caller, user_id=user_id))


def log_end_user(request: HttpRequest, user_id: str, action_flag: int, message: str) -> None:
    """The admin's history of what staff did to an end user (who has no row of their own):
    recorded against the Memory model, under the user_id."""
    log_entry(
        request,
        model=Memory,
        object_id=user_id,
        object_repr=f"end user {user_id}",
        action_flag=action_flag,
        message=message,
    )


def export_filename(user_id: str) -> str:
    return f"neuromem-export-{re.sub(r'[^A-Za-z0-9._-]+', '_', user_id)[:100]}.json"


# --- Forgetting ------------------------------------------------------------------------------


class TopicForm(forms.Form):
    topic = forms.CharField(
        max_length=TOPIC_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 80}),
        help_text="What to forget, as the end user would say it: “my home address”, “everything "
        "about Alex”. NeuroMem does not record it: the forget request keeps ids only.",
    )


def forget_preview(
    request: HttpRequest,
    *,
    user_id: str,
    topic: str | None = None,
    memory_ids: list[uuid.UUID] | None = None,
) -> dict[str, Any]:
    """What forgetting the topic (or the memories) would erase, as a page shows it: the
    memories (with their content, and what an erasure in part leaves), the messages, and why
    nothing would be. A dry run: nothing is written."""
    plan = user_forget(
        caller=staff_caller(request),
        user_id=user_id,
        topic=topic,
        memory_ids=memory_ids,
        dry_run=True,
        via=ForgetVia.ADMIN,
    ).plan
    return {
        "plan_memories": [
            (erasure, memory_url(erasure.memory)) for erasure in plan.memories.values()
        ],
        "plan_messages": [
            (erasure, message_url(erasure.message.pk)) for erasure in plan.messages.values()
        ],
        "plan_reason": REASONS[plan.reason] if plan.reason else None,
        "nothing_to_forget": plan.empty or plan.reason is not None,
    }


def forget_confirmed(
    request: HttpRequest,
    *,
    user_id: str,
    topic: str | None = None,
    memory_ids: list[uuid.UUID] | None = None,
) -> HttpResponse:
    """Forget the topic (or the memories) as staff via the admin, log it, and go to the forget
    request's page. The log entry names the request and counts, never the topic (it may be the
    secret). It is written after the forget's own transaction, which must not be held open
    around the topic's embedding: the ForgetRequest is the record, this is the admin's copy."""
    outcome = user_forget(
        caller=staff_caller(request),
        user_id=user_id,
        topic=topic,
        memory_ids=memory_ids,
        via=ForgetVia.ADMIN,
    )
    forget_request = outcome.request
    asked = "a topic" if topic is not None else "memory " + ", ".join(map(str, memory_ids))
    log_entry(
        request,
        model=ForgetRequest,
        object_id=str(forget_request.pk),
        object_repr=str(forget_request),
        action_flag=ADDITION,
        message=f"Forgot {asked} of end user {user_id} (forget request "
        f"{forget_request.pk}): {forget_summary(outcome)}.",
    )
    if outcome.plan.reason:
        messages.warning(request, REASONS[outcome.plan.reason])
    else:
        messages.success(request, f"Forgotten: {forget_summary(outcome)}.")
    return HttpResponseRedirect(forget_request_url(forget_request.pk))


def forget_summary(outcome: ForgetOutcome) -> str:
    """How much a forget erased, in numbers only."""
    erasures = outcome.plan.memories.values()
    whole = sum(erasure.whole for erasure in erasures)
    messages_erased = len(outcome.plan.messages)
    return (
        f"{whole} memor{pluralize(whole, 'y,ies')} forgotten whole, {len(erasures) - whole} "
        f"erased in part, {messages_erased} message{pluralize(messages_erased)} erased"
    )


class EndUserPages:
    """The end-user pages of one admin site (urls() goes into its get_urls)."""

    def __init__(self, site: AdminSite) -> None:
        self.site = site

    def urls(self) -> list:
        wrap = self.site.admin_view
        # The action routes first: `<path:...>/` would take "<id>/export" as an id.
        return [
            path("end-users/", wrap(self.search_view), name="backoffice_end_users"),
            path(
                "end-users/<path:quoted_id>/export/",
                wrap(self.export_view),
                name="backoffice_end_user_export",
            ),
            path(
                "end-users/<path:quoted_id>/forget/",
                wrap(self.forget_view),
                name="backoffice_end_user_forget",
            ),
            path(
                "end-users/<path:quoted_id>/purge/",
                wrap(self.purge_view),
                name="backoffice_end_user_purge",
            ),
            path("end-users/<path:quoted_id>/", wrap(self.user_view), name="backoffice_end_user"),
        ]

    def render(self, request: HttpRequest, template: str, context: dict[str, Any]):
        return TemplateResponse(
            request,
            f"admin/backoffice/{template}",
            {**self.site.each_context(request), **context},
        )

    def user_id_of(self, request: HttpRequest, quoted_id: str, permission: str) -> str:
        """The URL's user_id, after the permission check (403) and the id's (404)."""
        if not request.user.has_perm(permission):
            raise PermissionDenied
        user_id = unquote(quoted_id)
        if user_id_problem(user_id, new=False) is not None:
            raise Http404("Not a user_id.")
        return user_id

    # --- Finding an end user ----------------------------------------------------------------

    def search_view(self, request: HttpRequest) -> HttpResponse:
        if not may_view_end_users(request):
            raise PermissionDenied
        term = request.GET.get("q", "").strip()
        found = (
            end_users_find(term=term) if term and user_id_problem(term, new=False) is None else []
        )
        return self.render(
            request,
            "end_users.html",
            {
                "title": "End users",
                "term": term,
                "found": [(user_id, end_user_url(user_id)) for user_id in found],
                "found_max": USERS_FOUND_MAX,
            },
        )

    # --- One end user -----------------------------------------------------------------------

    def user_view(self, request: HttpRequest, quoted_id: str) -> HttpResponse:
        user_id = self.user_id_of(request, quoted_id, VIEW_PERMISSION)
        overview = end_user_overview(caller=staff_caller(request), user_id=user_id)
        counts = [
            (
                kind,
                [
                    (overview.counts[kind][state], memories_of_user_url(user_id, state=state))
                    for state in STATES
                ],
                overview.totals_by_type[kind],
                memories_of_user_url(user_id, memory_type__exact=kind),
            )
            for kind in overview.counts
        ]
        return self.render(
            request,
            "end_user.html",
            {
                "title": f"End user {user_id}",
                "user_id": user_id,
                "overview": overview,
                "states": STATES,
                "counts": counts,
                "traits": [(row, memory_url(row.trait)) for row in overview.traits],
                "latest": [
                    (memory, memory_state(memory), memory_url(memory)) for memory in overview.latest
                ],
                "cycles": [
                    (cycle, admin_url("admin:reflection_reflectioncycle_change", quote(cycle.pk)))
                    for cycle in overview.cycles
                ],
                "links": self.related_links(user_id),
                "export_url": self.action_url("export", user_id),
                "purge_url": self.action_url("purge", user_id)
                if request.user.has_perm(PURGE_PERMISSION)
                else None,
                "forget_url": self.action_url("forget", user_id)
                if request.user.has_perm(FORGET_PERMISSION)
                else None,
                "topic_form": TopicForm(),
            },
        )

    @staticmethod
    def action_url(action: str, user_id: str) -> str:
        return end_user_url(user_id) + f"{action}/"

    @staticmethod
    def related_links(user_id: str) -> list[tuple[str, str]]:
        """The other admin lists, filtered to this user (those that exist)."""
        links = [
            ("All memories", memories_of_user_url(user_id)),
            ("Forgotten memories", memories_of_user_url(user_id, current="forgotten")),
            (
                "Forget requests",
                admin_url("admin:memories_forgetrequest_changelist", query={"q": user_id}),
            ),
            (
                "Traits",
                admin_url("admin:reflection_trait_changelist", query={"q": f"user_id:{user_id}"}),
            ),
            (
                "Dissolved traits",
                admin_url(
                    "admin:reflection_trait_changelist",
                    query={"q": f"user_id:{user_id}", "trait_stage__exact": "dissolved"},
                ),
            ),
            (
                "Reflection cycles",
                admin_url("admin:reflection_reflectioncycle_changelist", query={"q": user_id}),
            ),
            (
                "Conversation sessions",
                admin_url(
                    "admin:memories_conversationsession_changelist", query={"user_id": user_id}
                ),
            ),
            (
                "SOUL versions (the agent's, shared by every user)",
                admin_url("admin:evolution_soulversion_changelist"),
            ),
        ]
        return [(label, url) for label, url in links if url]

    # --- Export -----------------------------------------------------------------------------

    def export_view(self, request: HttpRequest, quoted_id: str) -> HttpResponse:
        user_id = self.user_id_of(request, quoted_id, VIEW_PERMISSION)
        body = user_export_body(caller=staff_caller(request), user_id=user_id)
        # Who downloaded everything held about whom: on record like any action.
        log_end_user(
            request, user_id, CHANGE, f"Exported everything held about end user {user_id}."
        )
        response = HttpResponse(body, content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="{export_filename(user_id)}"'
        return response

    # --- Forget a topic ---------------------------------------------------------------------

    def forget_view(self, request: HttpRequest, quoted_id: str) -> HttpResponse:
        """GET: a box for the topic. POST: what forgetting it would erase (a dry run, with the
        content) and a button to confirm; POST with `confirm`: the forget, then the request's
        page. A refused topic shows on the form; nothing is written but by the confirmation."""
        user_id = self.user_id_of(request, quoted_id, FORGET_PERMISSION)
        form = TopicForm(request.POST if request.method == "POST" else None)
        context: dict[str, Any] = {
            "title": f"Forget a topic: end user {user_id}",
            "user_id": user_id,
            "user_url": end_user_url(user_id),
            "form": form,
        }
        if form.is_valid():
            topic = form.cleaned_data["topic"]
            try:
                if "confirm" in request.POST:
                    return forget_confirmed(request, user_id=user_id, topic=topic)
                context.update(forget_preview(request, user_id=user_id, topic=topic))
                context["topic"] = topic
            except DomainError as error:
                form.add_error("topic" if error.field == "topic" else None, error.message)
        return self.render(request, "forget.html", context)

    # --- Purge ------------------------------------------------------------------------------

    def purge_view(self, request: HttpRequest, quoted_id: str) -> HttpResponse:
        """GET: what would go, and a box to type the user_id into. POST: the purge when the
        typed id is the user's, else an error and nothing deleted."""
        user_id = self.user_id_of(request, quoted_id, PURGE_PERMISSION)
        context = {
            "title": f"Purge end user {user_id}",
            "user_id": user_id,
            "user_url": end_user_url(user_id),
        }
        if request.method == "POST":
            typed = request.POST.get("confirm_user_id", "")
            if typed != user_id:
                messages.error(request, "The user_id typed is not this user's: nothing was purged.")
                return self.render(
                    request, "purge.html", {**context, "typed": typed, **self.held(user_id)}
                )
            deleted = self.purge(request, user_id)
            messages.success(request, f"Purged everything held about end user {user_id}.")
            return self.render(
                request,
                "purged.html",
                {**context, "title": f"Purged end user {user_id}", "deleted": deleted},
            )
        return self.render(request, "purge.html", {**context, "typed": "", **self.held(user_id)})

    @staticmethod
    def held(user_id: str) -> dict[str, Any]:
        counts = end_user_counts(user_id=user_id)
        return {
            "held": [(kind, sum(counts[kind].values())) for kind in MemoryType.values],
        }

    @staticmethod
    def purge(request: HttpRequest, user_id: str) -> list[tuple[str, int]]:
        """The purge (memories.services.user_purge) and its admin log entry, in one
        transaction: a deletion of the end user, recorded against the Memory model."""
        with transaction.atomic():
            deleted = user_purge(caller=staff_caller(request), user_id=user_id)
            summary = ", ".join(f"{table} {number}" for table, number in deleted.items())
            log_end_user(request, user_id, DELETION, f"Purged end user {user_id}: {summary}")
        return list(deleted.items())


# --- The dashboard ---------------------------------------------------------------------------


def schedule_text(task: PeriodicTask) -> str:
    """When beat runs `task`: "every 5 minutes", "0 3 * * * (m/h/dM/MY/d) UTC", ..."""
    return str(task.interval or task.crontab or task.solar or task.clocked or "")


def dashboard_context(request: HttpRequest) -> dict[str, Any]:
    """The dashboard's sections the staff member may see, each row with its admin list."""
    user = request.user
    context: dict[str, Any] = {"dashboard": True}
    if user.has_perm(VIEW_PERMISSION):
        counts = memory_counts()
        changelist = "admin:memories_memory_changelist"
        context["memory_total"] = counts.total
        context["memory_types"] = [
            (kind, count, admin_url(changelist, query={"memory_type__exact": kind}))
            for kind, count in counts.by_type.items()
        ]
        context["memory_states"] = [
            (state, count, admin_url(changelist, query={"state": state}))
            for state, count in counts.by_state.items()
        ]
        context["embeddings"] = [
            (status, count, admin_url(changelist, query={"embedding_status__exact": status}))
            for status, count in embeddings_waiting().items()
        ]
        context["end_users_url"] = admin_url("admin:backoffice_end_users")
    if user.has_perm("core.view_jobrun") or user.has_perm("django_celery_beat.view_periodictask"):
        context["jobs"] = [
            {
                "name": job.name,
                "schedule": job.schedule,
                "schedule_text": job.schedule and schedule_text(job.schedule),
                "schedule_url": job.schedule
                and admin_url("admin:django_celery_beat_periodictask_change", job.schedule.pk),
                "last_run": job.last_run,
                "last_run_url": job.last_run
                and admin_url("admin:core_jobrun_change", job.last_run.pk),
                "runs_url": admin_url("admin:core_jobrun_changelist", query={"job": job.name}),
                "failures_url": admin_url(
                    "admin:core_jobrun_changelist",
                    query={"job": job.name, "status__exact": "failed"},
                ),
            }
            for job in jobs_last_runs()
        ]
    if user.has_perm(VIEW_PERMISSION):
        context["redactions"] = redactions_by_kind()
    if user.has_perm("memories.view_forgetrequest"):
        recent = forget_requests_recent()
        requests_list = "admin:memories_forgetrequest_changelist"
        context["forget_requests_url"] = admin_url(requests_list)
        context["forget_requests_by_via"] = [
            (via, number, admin_url(requests_list, query={"via__exact": via}))
            for via, number in recent.by_via.items()
        ]
        context["forget_requests_latest"] = [
            (
                forget_request,
                forget_request_url(forget_request.pk),
                end_user_url(forget_request.user_id),
            )
            for forget_request in recent.latest
        ]
    if user.has_perm("reflection.view_reflectioncycle"):
        failures = reflection_failures()
        context["failed_cycles"] = failures.count
        context["failed_cycles_url"] = admin_url(
            "admin:reflection_reflectioncycle_changelist", query={"status__exact": "failed"}
        )
        context["failed_cycles_latest"] = [
            (
                cycle,
                admin_url("admin:reflection_reflectioncycle_change", quote(cycle.pk)),
                end_user_url(cycle.user_id),
            )
            for cycle in failures.latest
        ]
    return context
