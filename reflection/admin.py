"""Staff views of traits, their evidence, reflection cycles and consistency issues.

Everything here is read-only: traits change only through reflection and the veto service
(`reflection.services.traits.traits_veto`), which staff reach from a trait's page or the
"Veto selected traits" action. Lists run over tables of millions of rows, so they never
count them exactly (core/admin_base.py) and search with indexes only: exact
ids and the full-text `search_vector`, never ILIKE.
"""

import uuid

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.utils import unquote
from django.contrib.postgres.search import SearchQuery
from django.core.exceptions import ValidationError
from django.db.models import Func, Q, QuerySet, TextField, Value
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html
from django.utils.text import Truncator

from core.admin_base import (
    ConditionFilter,
    ExactSearch,
    ReadOnlyAdmin,
    ServiceReasonForm,
    StaffActionAdmin,
    is_set_filter,
    staff_caller,
)
from core.errors import DomainError
from memories.admin.display import HEAVY_COLUMNS, MemoryRows, history_context
from memories.admin.filters import USER_ID_SEARCH
from memories.admin.sections import memory_page_section
from memories.models import Memory, MemoryType, TraitStage
from memories.predicates import current_q
from memories.selectors import trait_field
from neuromem_site.backoffice.links import EndUserColumn, memory_url, trait_url
from reflection.models import (
    CYCLE_COUNTS,
    ConsistencyIssue,
    ReflectionCycle,
    Trait,
    TraitEvidence,
)
from reflection.selectors import TraitDetail, decayed_confidence, trait_detail
from reflection.services.traits import REASON_MAX_CHARS, traits_veto

# One bulk veto is one transaction; more than this is a job for a script.
MAX_BULK_VETO = 500
VETO_FAILURE = "Nothing was vetoed"


def content_search(term: str) -> SearchQuery:
    """`term` as a tsquery built the way `search_vector` is (migration 0003: CJK bigrams, then
    the english configuration), so "Runs" finds "run" and 咖啡 is found inside 喝咖啡; every
    word must match. Matched with `@@` on the GIN-indexed column."""
    text = Func(Value(term), Value(True), function="neuromem_search_text", output_field=TextField())
    return SearchQuery(text, config="english")


def fmt_confidence(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


class CurrentFilter(ConditionFilter):
    title = "current"
    parameter_name = "current"

    def conditions(self) -> dict[str, tuple[str, Q]]:
        return {"yes": ("Current", current_q()), "no": ("Expired or invalidated", ~current_q())}


@admin.register(Trait)
class TraitAdmin(EndUserColumn, MemoryRows, StaffActionAdmin):
    """Traits, read-only. Veto (dissolve) one from its page, or several with the action; both
    need the `reflection.change_trait` permission."""

    list_display = [
        "content_short",
        "end_user",
        "trait_subtype",
        "trait_stage",
        "trait_context",
        "confidence",
        "decayed",
        "trait_reinforcement_count",
        "trait_contradiction_count",
        "trait_last_reinforced",
    ]
    list_display_links = ["content_short"]
    list_filter = [
        "trait_subtype",
        "trait_stage",
        "trait_context",
        "trait_derived_from",
        CurrentFilter,
    ]
    # Sorting a million rows by an unindexed column would be a sort per page.
    sortable_by = ["end_user"]
    # Only for the search box to show; get_search_results does the searching.
    search_fields = ["user_id"]
    search_help_text = (
        "Words of the content (full text, every word must match) or an exact user_id; "
        f'"{USER_ID_SEARCH}alice" for that user only, "{USER_ID_SEARCH}agent1:*" for a prefix.'
    )
    actions = ["veto_selected"]
    object_actions = ("veto",)
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "id",
                    "end_user",
                    "content",
                    ("trait_subtype", "trait_stage", "trait_context", "trait_derived_from"),
                    ("trait_confidence", "decayed"),
                    ("trait_reinforcement_count", "trait_contradiction_count"),
                    ("trait_first_observed", "trait_last_reinforced"),
                    ("trait_window_start", "trait_window_end"),
                    "trait_parent_id",
                ]
            },
        ),
        (
            "Record",
            {
                "fields": [
                    ("valid_at", "invalid_at"),
                    ("created_at", "updated_at", "expired_at"),
                    ("version", "importance", "score"),
                    "metadata",
                ]
            },
        ),
    ]

    @admin.display(description="confidence")
    def confidence(self, obj: Memory) -> str:
        return fmt_confidence(trait_field(obj, "confidence"))

    @admin.display(description="decayed confidence")
    def decayed(self, obj: Memory) -> str:
        return fmt_confidence(decayed_confidence(obj))

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        if term.startswith(USER_ID_SEARCH):
            user_id = term.removeprefix(USER_ID_SEARCH).strip()
            if user_id.endswith("*"):
                return queryset.filter(user_id__startswith=user_id[:-1]), False
            return queryset.filter(user_id=user_id), False
        return queryset.filter(Q(user_id=term) | Q(search_vector=content_search(term))), False

    # --- Veto -------------------------------------------------------------------------------

    def has_veto_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_action_permission(request, obj)

    def veto(self, request: HttpRequest, trait_ids: list[uuid.UUID], reason: str) -> str:
        """Dissolve the traits through the service (which refuses a blank reason, a trait not
        current, ...), logging each in the admin's history; run by run_action."""
        vetoed = traits_veto(caller=staff_caller(request), trait_ids=trait_ids, reason=reason)
        message = f"Vetoed: {reason.strip()}"
        for trait in Trait.objects.filter(pk__in=[t.pk for t in vetoed]).defer(*HEAVY_COLUMNS):
            self.log_change(request, trait, message)
        return f"Vetoed {len(vetoed)} trait(s); they are now dissolved."

    def veto_page(
        self, request: HttpRequest, traits: list[Memory], *, reason: str, **context
    ) -> HttpResponse:
        several = len(traits) > 1
        return self.confirmation_page(
            request,
            title="Veto traits" if several else "Veto trait",
            button="Veto",
            explanation=format_html(
                "Vetoing dissolves {}: its stage becomes <em>dissolved</em> and it stops being "
                "believed now. Rows, evidence and history are kept, and the reason is recorded "
                "with your name.",
                f"these {len(traits)} traits" if several else "this trait",
            ),
            form=ServiceReasonForm(reason, max_chars=REASON_MAX_CHARS),
            summary_items=[
                f"{item.user_id} — {item.trait_subtype or 'trait'} ({item.trait_stage or '–'}): "
                f"{Truncator(item.content).chars(160)}"
                for item in traits
            ],
            **context,
        )

    def veto_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return self.reason_view(
            request,
            object_id,
            run=lambda trait, reason: self.veto(request, [trait.pk], reason),
            failure=VETO_FAILURE,
            page=lambda trait, reason: self.veto_page(
                request, [trait], reason=reason, original=trait, cancel_url=self.change_url(trait)
            ),
        )

    @admin.action(description="Veto selected traits", permissions=["veto"])
    def veto_selected(self, request: HttpRequest, queryset: QuerySet):
        ids = list(queryset.values_list("pk", flat=True)[: MAX_BULK_VETO + 1])
        if len(ids) > MAX_BULK_VETO:
            messages.error(request, f"Veto at most {MAX_BULK_VETO} traits at a time.")
            return None
        if "apply" in request.POST:
            reason = request.POST.get("reason", "")
            self.run_action(request, lambda: self.veto(request, ids, reason), failure=VETO_FAILURE)
            return None  # back to the list, with the message
        traits = list(Trait.objects.filter(pk__in=ids).defer(*HEAVY_COLUMNS))
        return self.veto_page(
            request,
            traits,
            reason="",
            cancel_url=request.get_full_path(),
            hidden=[
                *((ACTION_CHECKBOX_NAME, trait.pk) for trait in traits),
                ("action", "veto_selected"),
                ("apply", "yes"),
            ],
        )

    # --- The trait's page -------------------------------------------------------------------

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        caller = staff_caller(request)
        try:
            detail = trait_detail(caller=caller, trait_id=unquote(object_id))
        except (DomainError, ValidationError, ValueError):
            detail = None  # the admin answers for a missing object itself
        if detail is not None:
            trait = detail.trait
            extra_context.update(
                detail=detail,
                parents=[(p, memory_url(p)) for p in detail.parents],
                children=[(c, memory_url(c)) for c in detail.children],
                evidence=evidence_rows(detail),
                **history_context(caller, trait),
            )
            is_current = (
                trait.trait_stage != TraitStage.DISSOLVED
                and trait.expired_at is None
                and trait.invalid_at is None
            )
            if is_current and self.has_veto_permission(request, trait):
                extra_context["veto_url"] = self.action_url("veto", trait)
        return super().change_view(request, object_id, form_url, extra_context)


def evidence_rows(detail: TraitDetail) -> list[tuple]:
    """A trait's evidence as its pages show it: (evidence, cited memory or None, its url)."""
    return [
        (item.evidence, item.memory, item.memory and memory_url(item.memory))
        for item in detail.evidence
    ]


# --- On a memory's page (memories.admin.sections) --------------------------------------------


@memory_page_section("admin/reflection/trait/memory_evidence.html")
def trait_evidence_section(request: HttpRequest, memory: Memory) -> dict | None:
    """A trait's evidence, on its memory page: (evidence, cited memory or None, its url)."""
    if memory.memory_type != MemoryType.TRAIT or memory.forgotten_at is not None:
        return None  # a forgotten trait's evidence went with it
    detail = trait_detail(caller=staff_caller(request), trait_id=memory.pk)
    return {"trait_url": trait_url(memory.pk), "evidence": evidence_rows(detail)}


@memory_page_section("admin/reflection/trait/memory_cited_by.html")
def cited_by_section(request: HttpRequest, memory: Memory) -> list[tuple] | None:
    """The traits citing this memory as evidence: (evidence, trait or None, trait page url);
    no section when none does."""
    evidence = list(TraitEvidence.objects.filter(memory_id=memory.id).order_by("created_at"))
    if not evidence:
        return None
    traits = (
        Memory.objects.defer(*HEAVY_COLUMNS)
        .filter(memory_type=MemoryType.TRAIT, user_id=memory.user_id)
        .in_bulk([item.trait_id for item in evidence])
    )
    return [(item, traits.get(item.trait_id), trait_url(item.trait_id)) for item in evidence]


# --- Evidence, cycles, consistency issues ----------------------------------------------------


@admin.register(TraitEvidence)
class TraitEvidenceAdmin(ExactSearch, ReadOnlyAdmin):
    list_display = ["trait_link", "memory_id", "evidence_type", "quality", "created_at"]
    ordering = ["-created_at", "-id"]  # idx_evidence_recent
    list_filter = ["evidence_type", "quality"]
    sortable_by = ["created_at"]
    search_fields = ["trait_id"]
    search_help_text = "A trait's or a memory's id."
    exact_ids = ("trait_id", "memory_id")

    @admin.display(description="trait")
    def trait_link(self, obj: TraitEvidence) -> str:
        return format_html('<a href="{}">{}</a>', trait_url(obj.trait_id), obj.trait_id)


@admin.register(ReflectionCycle)
class ReflectionCycleAdmin(EndUserColumn, ExactSearch, ReadOnlyAdmin):
    list_display = [
        "end_user",
        "trigger_type",
        "status",
        *CYCLE_COUNTS,
        "started_at",
        "completed_at",
        "error_short",
    ]
    list_filter = ["status", "trigger_type"]
    sortable_by = ["started_at"]
    search_fields = ["user_id"]
    search_help_text = "An exact user_id (or a cycle's id)."
    exact_text = ("user_id",)
    exact_ids = ("id",)

    @admin.display(description="error")
    def error_short(self, obj: ReflectionCycle) -> str:
        return Truncator(obj.error_message or "").chars(80)


ResolvedFilter = is_set_filter(
    "state", "resolved_at", {"open": ("Open", False), "resolved": ("Resolved", True)}
)


@admin.register(ConsistencyIssue)
class ConsistencyIssueAdmin(EndUserColumn, ExactSearch, ReadOnlyAdmin):
    list_display = [
        "check_name",
        "table_name",
        "row_id",
        "missing_id",
        "end_user",
        "first_seen_at",
        "last_seen_at",
        "resolved_at",
    ]
    list_filter = ["check_name", ResolvedFilter]
    sortable_by = ["last_seen_at"]
    search_fields = ["row_id"]
    search_help_text = "An exact row id, missing id or user_id."
    exact_text = ("row_id", "missing_id", "user_id")
