"""The memory admins' list filters and search. Every one reads an index: a value typed in
(never a list of a column's distinct values), a range on created_at, a condition an index of
migration 0012 or 0016 holds, the full-text column, exact ids."""

from datetime import date, datetime, time, timedelta

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.postgres.search import SearchQueryField
from django.db.models import BooleanField, F, Func, Q, QuerySet, Value
from django.utils import timezone

from core.admin_base import ConditionFilter, as_uuid, is_set_filter, search_term
from memories.models import Memory, MemoryType, TraitStage
from memories.predicates import STATES, current_q, states_q

USER_ID_SEARCH = "user_id:"


def other_params(changelist, *names: str) -> list[tuple[str, str]]:
    """The list's query parameters but `names` (and the page): hidden inputs for a filter's
    own GET form, so typing a value keeps the other filters and the search."""
    return [
        (key, value)
        for key, values in changelist.filter_params.items()
        if key not in names
        for value in values
    ]


class InputFilter(admin.SimpleListFilter):
    """A value typed into a text box (an exact match on an indexed column), instead of a list
    of the column's distinct values, which would read the whole table."""

    template = "admin/memories/input_filter.html"
    placeholder = ""

    def lookups(self, request, model_admin):
        return [("", "")]  # has_output() wants one; the template shows a text box instead

    def choices(self, changelist):
        yield {
            "parameter_name": self.parameter_name,
            "value": self.value() or "",
            "placeholder": self.placeholder,
            "hidden": other_params(changelist, self.parameter_name),
            "reset_query_string": changelist.get_query_string(remove=[self.parameter_name]),
        }


class UserIdFilter(InputFilter):
    title = "user_id (exact)"
    parameter_name = "user_id"
    placeholder = "user id"

    def queryset(self, request, queryset):
        if self.value() and self.value().strip():
            return queryset.filter(user_id=search_term(self.value()))
        return queryset


class SessionFilter(InputFilter):
    title = "session (id)"
    parameter_name = "session_id"
    placeholder = "session id"

    def queryset(self, request, queryset):
        if not (self.value() and self.value().strip()):
            return queryset
        value = as_uuid(self.value())
        return queryset.filter(session_id=value) if value else queryset.filter(pk__in=[])


def day_start(text: str | None) -> datetime | None:
    """The start of the day `text` (YYYY-MM-DD) names, in the admin's time zone."""
    if not text:
        return None
    try:
        day = date.fromisoformat(text.strip())
    except ValueError as error:
        raise IncorrectLookupParameters(f"Not a date (YYYY-MM-DD): {text!r}") from error
    return timezone.make_aware(datetime.combine(day, time.min))


class CreatedRangeFilter(admin.ListFilter):
    """created_at from one day to another (both included): a range on the created_at index."""

    title = "created (from / to)"
    template = "admin/memories/date_range_filter.html"
    parameters = ("created_from", "created_to")

    def __init__(self, request, params, model, model_admin):
        super().__init__(request, params, model, model_admin)
        for name in self.parameters:
            if name in params:
                self.used_parameters[name] = params.pop(name)[-1]

    def has_output(self) -> bool:
        return True

    def expected_parameters(self) -> list[str]:
        return list(self.parameters)

    def queryset(self, request, queryset):
        start = day_start(self.used_parameters.get("created_from"))
        end = day_start(self.used_parameters.get("created_to"))
        if start is not None:
            queryset = queryset.filter(created_at__gte=start)
        if end is not None and end.date() < date.max:  # to the last day there is: no bound
            queryset = queryset.filter(created_at__lt=end + timedelta(days=1))
        return queryset

    def choices(self, changelist):
        yield {
            "created_from": self.used_parameters.get("created_from", ""),
            "created_to": self.used_parameters.get("created_to", ""),
            "hidden": other_params(changelist, *self.parameters),
            "reset_query_string": changelist.get_query_string(remove=list(self.parameters)),
        }


class CurrentFilter(ConditionFilter):
    title = "current"
    parameter_name = "current"

    def conditions(self) -> dict[str, tuple[str, Q]]:
        # Expired and invalidated are what idx_memories_not_current holds (migration 0012);
        # forgotten is idx_memories_forgotten (0016).
        return {
            "current": ("Current", current_q()),
            "expired": (
                "Expired (superseded or deleted)",
                Q(expired_at__isnull=False, invalid_at__isnull=True),
            ),
            "invalidated": ("Invalidated", Q(invalid_at__isnull=False)),
            "forgotten": ("Forgotten (erased on request)", Q(forgotten_at__isnull=False)),
        }


class StateFilter(ConditionFilter):
    title = "state"
    parameter_name = "state"

    def conditions(self) -> dict[str, tuple[str, Q]]:
        return {state: (state.capitalize(), states_q([state])) for state in STATES}


class ScoreFlagFilter(ConditionFilter):
    """What the activity score job flags for staff (docs/decay.md); it never acts on them."""

    title = "flagged by the score job"
    parameter_name = "flag"

    def conditions(self) -> dict[str, tuple[str, Q]]:
        return {
            "eligible_for_delete": ("Eligible for delete", Q(eligible_for_delete=True)),
            "merge_candidate": ("Merge candidate", Q(merge_candidate_of__isnull=False)),
        }


class TraitStageFilter(ConditionFilter):
    title = "trait stage"
    parameter_name = "trait_stage"

    def conditions(self) -> dict[str, tuple[str, Q]]:
        # The trait partition only (pruned by memory_type); the column, else V1's metadata
        # (memories/predicates.py).
        return {
            stage: (
                label,
                Q(memory_type=MemoryType.TRAIT)
                & (Q(trait_stage=stage) | Q(trait_stage__isnull=True, metadata__trait_stage=stage)),
            )
            for stage, label in TraitStage.choices
        }


EndedFilter = is_set_filter("ended", "ended_at", {"yes": ("Ended", True), "no": ("Open", False)})


class ExtractionStatusFilter(ConditionFilter):
    title = "extraction status"
    parameter_name = "extraction_status"

    def conditions(self) -> dict[str, tuple[str, Q]]:
        # The values memories/ingest.py writes (pending: V1's messages, never extracted).
        return {
            value: (value, Q(extraction_status=value))
            for value in ("done", "skipped", "failed", "pending")
        }


# --- Search ----------------------------------------------------------------------------------


class RecallTextMatch(Func):
    """`search_vector @@ neuromem_search_query(term)`: the text query recall's text side
    builds (migrations 0003, 0008: CJK pairs, english stems, "user" dropped; any of its words),
    matched on the GIN index of the generated column."""

    template = "(%(expressions)s)"
    arg_joiner = " @@ "
    output_field = BooleanField()

    def __init__(self, term: str):
        query = Func(Value(term), function="neuromem_search_query", output_field=SearchQueryField())
        super().__init__(F("search_vector"), query)


def memory_search(queryset: QuerySet, term: str) -> QuerySet:
    """`user_id:<id>`: that user's memories. A UUID: the memory with that id, or the memories
    of the user with that id. One word that is a user's id (an index probe says so): that
    user's memories. Anything else: the memories holding any of its words. All on indexes."""
    term = search_term(term)
    if not term:
        return queryset
    if term.startswith(USER_ID_SEARCH):
        return queryset.filter(user_id=term.removeprefix(USER_ID_SEARCH).strip())
    value = as_uuid(term)
    if value is not None:
        return queryset.filter(Q(pk=value) | Q(user_id=term))
    # A user id searched as words would also find every memory that mentions "alice".
    if not any(char.isspace() for char in term) and Memory.objects.filter(user_id=term).exists():
        return queryset.filter(user_id=term)
    return queryset.filter(RecallTextMatch(term))
