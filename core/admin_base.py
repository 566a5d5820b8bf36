"""What the admin's pages share: lists over big tables without a COUNT(*) per page, read-only
pages whose history shows the object's own audit trail, searches by exact ids, and the staff
actions on an object's page.

Django's paginator counts the whole (filtered) queryset on every list page; on a table of a
million rows that is a scan per click. `EstimatedCountPaginator` counts a searched or filtered
list exactly up to 10,000 rows and says "more than 10,000" past that; the whole list, when the
planner expects 10,000 rows or more, shows the planner's estimate, said to be one (and so does
a filter that would read a big `memories` table whole to count a few rows). Use it
through `ReadOnlyAdmin` (its `get_paginator` hands the paginator the whole list to compare with),
with `show_full_result_count = False`, which spares the second, unfiltered count.

`ReadOnlyAdmin` is for tables staff read but never edit by hand; its `audit_trail` puts what
NeuroMem records of an object's changes (a memory's history, a SOUL version's events) on the
object's history page, above the admin's own log. `StaffActionAdmin` adds the actions staff take
on an object's page (supersede a memory, veto a trait, apply a SOUL version ...): routed, behind
the model's change permission, each calling a service as `staff_caller` in one transaction, with
one confirmation page (templates/admin/action_confirmation.html) that asks for the reason.
"""

import json
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.models import LogEntry
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import quote, unquote
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db import DatabaseError, DataError, ProgrammingError, connections, router, transaction
from django.db.models import Model, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.functional import cached_property

from core.access import Caller
from core.errors import DomainError
from core.validation import text_problem

log = logging.getLogger("neuromem.admin")


def staff_caller(request: HttpRequest) -> Caller:
    """The Caller a staff member acts as in the admin: `staff:<username>`, the actor the audit
    log and the event logs record."""
    return Caller(name=f"staff:{request.user.get_username()}", is_staff=True)


def search_term(term: str) -> str:
    """A search box's or filter's text, stripped; one PostgreSQL cannot hold (NUL, a lone
    surrogate) makes the list say its parameters are wrong, rather than fail."""
    if text_problem(term) is not None:
        raise IncorrectLookupParameters(text_problem(term))
    return term.strip()


def as_uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text.strip())
    except ValueError:
        return None


def exact_search(
    queryset: QuerySet, term: str, *, text: Sequence[str] = (), ids: Sequence[str] = ()
) -> QuerySet:
    """Equality on indexed columns only: the `text` columns against the term, the `ids` (UUID
    columns) when the term is a UUID. A blank term finds everything."""
    term = search_term(term)
    if not term:
        return queryset
    condition = Q(pk__in=[])
    for name in text:
        condition |= Q(**{name: term})
    value = as_uuid(term)
    if value is not None:
        for name in ids:
            condition |= Q(**{name: value})
    return queryset.filter(condition)


class ConditionFilter(admin.SimpleListFilter):
    """A list filter whose every choice is one condition: `conditions()` answers value →
    (label, Q), read per request (a condition may follow the settings)."""

    def conditions(self) -> dict[str, tuple[str, Q]]:
        raise NotImplementedError

    def lookups(self, request, model_admin):
        return [(value, label) for value, (label, _) in self.conditions().items()]

    def queryset(self, request, queryset):
        chosen = self.conditions().get(self.value())
        return queryset if chosen is None else queryset.filter(chosen[1])


def is_set_filter(name: str, field: str, choices: dict[str, tuple[str, bool]]) -> type:
    """A list filter on whether `field` is set: `choices` maps each value to its label and
    whether it means set."""
    conditions = {
        value: (label, Q(**{f"{field}__isnull": not is_set}))
        for value, (label, is_set) in choices.items()
    }
    return type(
        f"{field.title().replace('_', '')}Filter",
        (ConditionFilter,),
        {"title": name, "parameter_name": name, "conditions": lambda self: conditions},
    )


def planner_plan(queryset: QuerySet) -> dict | None:
    """The plan PostgreSQL would run `queryset` with (EXPLAIN, nothing run), or None off
    PostgreSQL or when EXPLAIN fails. Ordering is dropped: it does not change the row count
    and sorting would cost the plan."""
    if connections[queryset.db].vendor != "postgresql":
        return None
    try:
        # A savepoint, so a failed EXPLAIN cannot break the request's transaction.
        with transaction.atomic(using=queryset.db):
            return json.loads(queryset.order_by().explain(format="json"))[0]["Plan"]
    except (DatabaseError, ValueError, KeyError, IndexError, TypeError):
        return None


def planner_estimate(queryset: QuerySet) -> int | None:
    """The planner's row estimate for `queryset` (None off PostgreSQL or when EXPLAIN fails)."""
    plan = planner_plan(queryset)
    return None if plan is None else int(plan["Plan Rows"])


def scans_memories(plan: dict) -> bool:
    """Whether the plan reads a `memories` partition whole (a filter no index serves)."""
    if plan.get("Node Type") == "Seq Scan" and plan.get("Relation Name", "").startswith("memories"):
        return True
    return any(scans_memories(child) for child in plan.get("Plans", ()))


class ListSize(NamedTuple):
    """A list's size: `count` pages it; `label` says it when it is not exact ("" when it is)."""

    count: int
    label: str = ""


class EstimatedCountPaginator(Paginator):
    """A paginator that never counts a big table whole, and says so when its count is not exact.

    The whole list (`whole` None, or the same rows): counted exactly under `exact_below` rows;
    from there the planner's estimate, labelled "an estimated N". A searched or filtered list
    (its rows narrower than `whole`'s): counted exactly up to `exact_below` rows, by a COUNT that
    stops there; past it "more than 10,000", paged as far as the planner expects. One exception:
    where the planner expects few matches (under `exact_below`) found by scanning a `memories`
    partition whole (a filter no index serves: a rare state, say, as the score has no index),
    in a list of `scan_below` rows or more, counting would read all of them: the estimate
    again, labelled."""

    exact_below = 10_000
    # A list this much smaller is read whole in milliseconds: counted even when that takes a scan.
    scan_below = 100_000

    def __init__(
        self,
        object_list,
        per_page,
        orphans: int = 0,
        allow_empty_first_page: bool = True,
        *,
        whole: QuerySet | None = None,
    ):
        super().__init__(object_list, per_page, orphans, allow_empty_first_page)
        self.whole = whole

    @cached_property
    def size(self) -> ListSize:
        if not isinstance(self.object_list, QuerySet):
            return ListSize(len(self.object_list))
        plan = planner_plan(self.object_list)
        if plan is None:
            return ListSize(self.object_list.count())
        expected = int(plan["Plan Rows"])
        if not self.narrowed:
            if expected < self.exact_below:
                return ListSize(self.object_list.count())
            return self.estimated(expected)
        if scans_memories(plan) and expected < self.exact_below and self.whole_is_big():
            return self.estimated(expected)
        counted = self.object_list.order_by()[: self.exact_below + 1].count()
        if counted <= self.exact_below:
            return ListSize(counted)
        return ListSize(max(expected, counted), f"more than {self.exact_below:,}")

    @property
    def count(self) -> int:
        return self.size.count

    @property
    def count_label(self) -> str:
        """The list's size as its page says it when it is not exact, "" when it is."""
        return self.size.label

    @property
    def narrowed(self) -> bool:
        """Whether a search or a filter left fewer rows than the whole list (a condition more)."""
        return self.whole is not None and self.object_list.query.where != self.whole.query.where

    def whole_is_big(self) -> bool:
        return (planner_estimate(self.whole) or 0) >= self.scan_below

    @staticmethod
    def estimated(expected: int) -> ListSize:
        return ListSize(expected, f"an estimated {expected:,}")


class AuditTrail(NamedTuple):
    """What NeuroMem records of an object's changes, shown on its history page above the admin's
    log: `template` (an include) rendered with `context`."""

    template: str
    context: dict[str, Any]


class CheckedParameters:
    """A model admin mixin: a list's lookup, or an action's selection, that PostgreSQL or the
    primary key cannot take is a wrong parameter (Django's own "?e=1" page, an error message),
    not a 500. Django lets a list filter by any lookup on the model's own fields (a NUL, an
    invalid `__regex`, a number past a column's range) and posts any ids to an action."""

    def get_changelist_instance(self, request: HttpRequest):
        try:
            # A savepoint: a failed statement leaves the request's transaction usable. The
            # page's rows are read here too, where a count the planner's estimate replaced
            # would not have met the error first.
            with transaction.atomic(using=router.db_for_read(self.model)):
                changelist = super().get_changelist_instance(request)
                changelist.result_list = list(changelist.result_list)
                return changelist
        except (DataError, ProgrammingError, OverflowError, ValueError) as error:
            # ValueError: a date lookup Python's dates cannot hold (`created_at__year=10000`).
            # Logged: a fault of the admin's own SQL would otherwise pass for the visitor's.
            log.warning("admin list %s refused its parameters: %s", request.path, error)
            raise IncorrectLookupParameters(error) from error

    def response_action(self, request: HttpRequest, queryset: QuerySet):
        try:
            for value in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME):
                self.model._meta.pk.to_python(value)
        except ValidationError:
            self.message_user(request, "The selection names no such objects.", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())
        return super().response_action(request, queryset)


class ReadOnlyAdmin(CheckedParameters, admin.ModelAdmin):
    """A list and view pages, nothing editable; no exact counts of big lists (nor the filter
    facets' counts, one per choice). The history page shows the object's audit trail, if it has
    one, and the admin's log of what staff did to it, and says so when there is none. With no
    change permission, Django shows the `fields` or `fieldsets` read-only: `readonly_fields`
    need not repeat them (it names the page's fields only where neither is declared)."""

    paginator = EstimatedCountPaginator
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    list_per_page = 50
    object_history_template = "admin/audit_history.html"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def get_paginator(
        self, request, queryset, per_page, orphans=0, allow_empty_first_page=True
    ) -> EstimatedCountPaginator:
        # The whole list, for the paginator to tell a searched or filtered one; the history
        # page pages log entries, not this admin's rows.
        whole = self.get_queryset(request) if queryset.model is self.model else None
        return self.paginator(queryset, per_page, orphans, allow_empty_first_page, whole=whole)

    def url_id(self, obj: Model) -> str:
        """How the admin's URLs name `obj`: its primary key."""
        return quote(str(obj.pk))

    def audit_trail(self, request: HttpRequest, obj: Model) -> AuditTrail | None:
        """What NeuroMem records of the object's changes besides the admin's log, or None."""
        return None

    def history_view(self, request, object_id, extra_context=None):
        context = dict(extra_context or {})
        obj = self.get_object(request, unquote(object_id))
        if obj is None or not self.has_view_permission(request, obj):
            return super().history_view(request, object_id, context)  # its 404 or 403
        trail = self.audit_trail(request, obj)
        if trail is not None:
            context.update(trail.context, audit_trail_template=trail.template)
        info = self.opts.app_label, self.opts.model_name
        context["object_url"] = reverse("admin:{}_{}_change".format(*info), args=[self.url_id(obj)])
        # The admin's log names objects by primary key, whatever their URLs say.
        return super().history_view(request, quote(str(obj.pk)), context)


def log_entry(
    request: HttpRequest,
    *,
    model: type[Model],
    object_id: str,
    object_repr: str,
    action_flag: int,
    message: str,
) -> LogEntry:
    """An admin history entry for what a staff member did to something that is not one model
    object (an end user, a forget): ModelAdmin.log_change's row, written by hand."""
    return LogEntry.objects.create(
        user_id=request.user.pk,
        content_type=ContentType.objects.get_for_model(model),
        object_id=object_id,
        object_repr=object_repr[:200],
        action_flag=action_flag,
        change_message=message,
    )


def refused(request: HttpRequest, message: str, url: str) -> HttpResponse:
    """Back to `url`, saying as an error why the action cannot be taken."""
    messages.error(request, message)
    return HttpResponseRedirect(url)


class ServiceReasonForm(forms.Form):
    """The reason box of an action whose service judges the reason (a veto: its refusal says
    why): shown with what was typed, never validated here."""

    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 4, "cols": 80}))

    def __init__(self, reason: str, *, max_chars: int):
        super().__init__(initial={"reason": reason})
        self.fields["reason"].widget.attrs["maxlength"] = str(max_chars)


class ExactSearch:
    """A model admin mixin: the search box finds by equality on indexed columns only
    (exact_search): `exact_text` columns against the term, `exact_ids` when it is a UUID."""

    exact_text: ClassVar[tuple[str, ...]] = ()
    exact_ids: ClassVar[tuple[str, ...]] = ()

    def get_search_results(self, request, queryset, search_term):
        return exact_search(queryset, search_term, text=self.exact_text, ids=self.exact_ids), False


class ObjectPageContext:
    """A model admin mixin: `page_context(request, obj)` is what the object's page shows
    besides its fields (added to the change view's context, for staff who may view it)."""

    def page_context(self, request: HttpRequest, obj: Model) -> dict[str, Any]:
        raise NotImplementedError

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        obj = self.get_object(request, unquote(object_id))
        if obj is not None and self.has_view_permission(request, obj):
            extra_context.update(self.page_context(request, obj))
        return super().change_view(request, object_id, form_url, extra_context)


class StaffActionAdmin(ReadOnlyAdmin):
    """A read-only admin whose objects staff change only through actions on their pages: each
    of `object_actions` is `<object_id>/<name>/` (underscores as dashes), the URL name
    `admin:<app>_<model>_<name>`, served by the method `<name>_view`. An action needs the
    model's change permission (ReadOnlyAdmin answers False for editing in place), for GET and
    POST alike, calls its service as `staff_caller` and writes the admin's LogEntry."""

    object_actions: ClassVar[tuple[str, ...]] = ()

    def has_action_permission(self, request: HttpRequest, obj=None) -> bool:
        # Django's own check of `<app>.change_<model>`.
        return admin.ModelAdmin.has_change_permission(self, request, obj)

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [
            *(
                path(
                    f"<path:object_id>/{name.replace('_', '-')}/",
                    self.admin_site.admin_view(getattr(self, f"{name}_view")),
                    name="{}_{}_{}".format(*info, name),
                )
                for name in self.object_actions
            ),
            *super().get_urls(),
        ]

    def action_url(self, name: str, obj: Model) -> str:
        return reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_{name}", args=[self.url_id(obj)]
        )

    def change_url(self, obj: Model) -> str:
        return self.action_url("change", obj)

    def action_object(
        self, request: HttpRequest, object_id: str, *, permission: str | None = None
    ) -> Model | HttpResponse:
        """The object an action is for, or the admin's redirect when there is none. 403
        without `permission` (by default the action permission)."""
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if permission is not None:
            permitted = request.user.has_perm(permission)
        else:
            permitted = self.has_action_permission(request, obj)
        if not permitted:
            raise PermissionDenied
        return obj

    def run_action(self, request: HttpRequest, action: Callable[[], str], *, failure: str) -> bool:
        """`action()` (the service call and its LogEntry, answering what was done) in one
        transaction, said as a success message. A refusal (a DomainError) writes nothing and
        becomes the error message "`failure`: why"."""
        try:
            with transaction.atomic():
                done = action()
        except DomainError as error:
            messages.error(request, f"{failure}: {error.message}")
            return False
        messages.success(request, done)
        return True

    def reason_view(
        self,
        request: HttpRequest,
        object_id: str,
        *,
        run: Callable[[Model, str], str],
        failure: str,
        page: Callable[[Model, str], HttpResponse],
    ) -> HttpResponse:
        """An action that asks why, on the object's page. GET: `page(obj, reason)`, the
        confirmation. POST: `run(obj, reason)` (the service, which judges the reason, and the
        LogEntry, answering what was done) by run_action, then back to the object's page; a
        refusal shows the confirmation again, with the reason typed."""
        obj = self.action_object(request, object_id)
        if isinstance(obj, HttpResponse):
            return obj
        reason = request.POST.get("reason", "") if request.method == "POST" else ""
        if request.method == "POST" and self.run_action(
            request, lambda: run(obj, reason), failure=failure
        ):
            return HttpResponseRedirect(self.change_url(obj))
        return page(obj, reason)

    def confirmation_page(
        self,
        request: HttpRequest,
        *,
        title: str,
        button: str,
        cancel_url: str,
        explanation: str = "",
        form: forms.Form | None = None,
        original: Model | None = None,
        template: str = "admin/action_confirmation.html",
        **context: Any,
    ) -> TemplateResponse:
        """The page that asks to confirm an action (and why): `explanation` above what it acts
        on (`original`, or `summary_items` for several), `form`, `button` and Cancel."""
        return TemplateResponse(
            request,
            template,
            {
                **self.admin_site.each_context(request),
                "title": title,
                "opts": self.opts,
                "original": original,
                "form": form,
                "button": button,
                "explanation": explanation,
                "cancel_url": cancel_url,
                **context,
            },
        )
