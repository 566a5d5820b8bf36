"""What the admin's pages share: lists over big tables without a COUNT(*) per page, and
read-only pages.

Django's paginator counts the whole (filtered) queryset on every list page; on a table of a
million rows that is a scan per click. `EstimatedCountPaginator` asks the planner first
(`EXPLAIN (FORMAT JSON)` → the top node's "Plan Rows"): a big estimate is shown as it is
(approximate), a small one is counted exactly, which is then cheap. Use it with
`show_full_result_count = False`, which spares the second, unfiltered count:

    class MyAdmin(admin.ModelAdmin):
        paginator = EstimatedCountPaginator
        show_full_result_count = False

`ReadOnlyAdmin` does both, for tables staff read but never edit by hand. `staff_caller` is who
a staff member acts as when an admin action calls a service.
"""

import json

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.paginator import Paginator
from django.db import DatabaseError, connections, transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.functional import cached_property

from core.access import Caller
from core.validation import text_problem


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


class EstimatedCountPaginator(Paginator):
    """A paginator whose `count` is the planner's estimate when that is at least
    `exact_below` rows, or when counting would read a `memories` partition whole (a rare
    state, say: the score has no index); an exact COUNT otherwise."""

    exact_below = 10_000

    @cached_property
    def count(self) -> int:
        if isinstance(self.object_list, QuerySet):
            plan = planner_plan(self.object_list)
            if plan is not None and (plan["Plan Rows"] >= self.exact_below or scans_memories(plan)):
                return int(plan["Plan Rows"])
        return super().count


class ReadOnlyAdmin(admin.ModelAdmin):
    """A list and view pages, nothing editable; no exact counts of big lists (nor the filter
    facets' counts, one per choice)."""

    paginator = EstimatedCountPaginator
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    list_per_page = 50

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
