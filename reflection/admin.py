"""Staff views of traits, their evidence, reflection cycles and consistency issues.

Everything here is read-only: traits change only through reflection and the veto service
(`reflection.services.traits.traits_veto`), which staff reach from a trait's page or the
"Veto selected traits" action. Lists run over tables of millions of rows, so they never
count them exactly (neuromem_site/admin_pagination.py) and search with indexes only: exact
ids and the full-text `search_vector`, never ILIKE.
"""

import uuid

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.utils import unquote
from django.contrib.postgres.search import SearchQuery
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Func, Q, QuerySet, TextField, Value
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, path, reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from core.admin_base import ReadOnlyAdmin, search_term, staff_caller
from core.errors import DomainError
from memories.meaning import current_q
from memories.models import Memory, MemoryType, TraitStage
from memories.selectors import memory_history, trait_field
from neuromem_site.backoffice.links import EndUserColumn
from reflection.models import ConsistencyIssue, ReflectionCycle, Trait, TraitEvidence
from reflection.selectors import decayed_confidence, trait_detail
from reflection.services.traits import REASON_MAX_CHARS, traits_veto

# Columns the admin never loads: vectors are big and unreadable, the tsvector is derived.
HEAVY_COLUMNS = ("embedding", "lexical_vector", "search_vector")
# A trait page shows the newest history rows, oldest first.
HISTORY_ROWS = 100
# One bulk veto is one transaction; more than this is a job for a script.
MAX_BULK_VETO = 500
USER_ID_SEARCH = "user_id:"


def memory_admin_url(memory: Memory) -> str | None:
    """The admin page of a memory: a trait's here, any other's once a Memory admin exists."""
    name = (
        "admin:reflection_trait_change"
        if memory.memory_type == MemoryType.TRAIT
        else "admin:memories_memory_change"
    )
    try:
        return reverse(name, args=[memory.pk])
    except NoReverseMatch:
        return None


def as_uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text.strip())
    except ValueError:
        return None


def content_search(term: str) -> SearchQuery:
    """`term` as a tsquery built the way `search_vector` is (migration 0003: CJK bigrams, then
    the english configuration), so "Runs" finds "run" and 咖啡 is found inside 喝咖啡; every
    word must match. Matched with `@@` on the GIN-indexed column."""
    text = Func(Value(term), Value(True), function="neuromem_search_text", output_field=TextField())
    return SearchQuery(text, config="english")


def fmt_confidence(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


class CurrentFilter(admin.SimpleListFilter):
    title = "current"
    parameter_name = "current"

    def lookups(self, request, model_admin):
        return [("yes", "Current"), ("no", "Expired or invalidated")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(current_q())
        if self.value() == "no":
            return queryset.exclude(current_q())
        return queryset


@admin.register(Trait)
class TraitAdmin(EndUserColumn, ReadOnlyAdmin):
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
    readonly_fields = [
        name
        for _, options in fieldsets
        for entry in options["fields"]
        for name in (entry if isinstance(entry, tuple) else (entry,))
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).defer(*HEAVY_COLUMNS)

    @admin.display(description="content")
    def content_short(self, obj: Memory) -> str:
        if obj.forgotten_at is not None:
            return "(forgotten)"
        return Truncator(obj.content).chars(80)

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
        # Django's own check of `reflection.change_trait` (this class answers False for
        # editing in place).
        return admin.ModelAdmin.has_change_permission(self, request, obj)

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [
            path(
                "<path:object_id>/veto/",
                self.admin_site.admin_view(self.veto_view),
                name="{}_{}_veto".format(*info),
            ),
            *super().get_urls(),
        ]

    def veto(self, request: HttpRequest, trait_ids: list[uuid.UUID], reason: str) -> bool:
        """Dissolve the traits through the service, logging each in the admin's history. A
        refusal (no reason, not current, ...) changes nothing and becomes an error message."""
        try:
            with transaction.atomic():
                vetoed = traits_veto(
                    caller=staff_caller(request), trait_ids=trait_ids, reason=reason
                )
                message = f"Vetoed: {reason.strip()}"
                for trait in Trait.objects.filter(pk__in=[t.pk for t in vetoed]).defer(
                    *HEAVY_COLUMNS
                ):
                    self.log_change(request, trait, message)
        except DomainError as error:
            messages.error(request, f"Nothing was vetoed: {error.message}")
            return False
        messages.success(request, f"Vetoed {len(vetoed)} trait(s); they are now dissolved.")
        return True

    def veto_page(self, request: HttpRequest, traits: list[Memory], **context) -> HttpResponse:
        return TemplateResponse(
            request,
            "admin/reflection/trait/veto.html",
            {
                **self.admin_site.each_context(request),
                "title": "Veto traits" if len(traits) > 1 else "Veto trait",
                "opts": self.opts,
                "traits": traits,
                "reason_max": REASON_MAX_CHARS,
                "action_checkbox_name": ACTION_CHECKBOX_NAME,
                **context,
            },
        )

    def veto_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        trait = self.get_object(request, unquote(object_id))
        if trait is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_veto_permission(request, trait):
            raise PermissionDenied
        change_url = reverse("admin:reflection_trait_change", args=[trait.pk])
        reason = ""
        if request.method == "POST":
            reason = request.POST.get("reason", "")
            if self.veto(request, [trait.pk], reason):
                return HttpResponseRedirect(change_url)
        return self.veto_page(
            request, [trait], trait=trait, bulk=False, reason=reason, cancel_url=change_url
        )

    @admin.action(description="Veto selected traits", permissions=["veto"])
    def veto_selected(self, request: HttpRequest, queryset: QuerySet):
        ids = list(queryset.values_list("pk", flat=True)[: MAX_BULK_VETO + 1])
        if len(ids) > MAX_BULK_VETO:
            messages.error(request, f"Veto at most {MAX_BULK_VETO} traits at a time.")
            return None
        if "apply" in request.POST:
            self.veto(request, ids, request.POST.get("reason", ""))
            return None  # back to the list, with the message
        traits = list(Trait.objects.filter(pk__in=ids).defer(*HEAVY_COLUMNS))
        return self.veto_page(
            request,
            traits,
            bulk=True,
            reason="",
            cancel_url=request.get_full_path(),
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
            newest = memory_history(caller=caller, memory=trait).reverse()[:HISTORY_ROWS]
            extra_context.update(
                detail=detail,
                parents=[(p, memory_admin_url(p)) for p in detail.parents],
                children=[(c, memory_admin_url(c)) for c in detail.children],
                evidence=[
                    (item.evidence, item.memory, item.memory and memory_admin_url(item.memory))
                    for item in detail.evidence
                ],
                history=list(reversed(newest)),
                history_rows=HISTORY_ROWS,
            )
            is_current = (
                trait.trait_stage != TraitStage.DISSOLVED
                and trait.expired_at is None
                and trait.invalid_at is None
            )
            if is_current and self.has_veto_permission(request, trait):
                extra_context["veto_url"] = reverse("admin:reflection_trait_veto", args=[trait.pk])
        return super().change_view(request, object_id, form_url, extra_context)


def search_exact(queryset: QuerySet, term: str, *, text: list[str], ids: list[str]) -> QuerySet:
    """Equality on indexed columns: `text` columns against the term, `ids` (UUID columns)
    when the term is a UUID."""
    term = search_term(term)
    condition = Q(pk__in=[])
    for name in text:
        condition |= Q(**{name: term})
    value = as_uuid(term)
    if value is not None:
        for name in ids:
            condition |= Q(**{name: value})
    return queryset.filter(condition)


@admin.register(TraitEvidence)
class TraitEvidenceAdmin(ReadOnlyAdmin):
    list_display = ["trait_link", "memory_id", "evidence_type", "quality", "created_at"]
    ordering = ["-created_at", "-id"]  # idx_evidence_recent
    list_filter = ["evidence_type", "quality"]
    sortable_by = ["created_at"]
    search_fields = ["trait_id"]
    search_help_text = "A trait's or a memory's id."

    @admin.display(description="trait")
    def trait_link(self, obj: TraitEvidence) -> str:
        url = reverse("admin:reflection_trait_change", args=[obj.trait_id])
        return format_html('<a href="{}">{}</a>', url, obj.trait_id)

    def get_search_results(self, request, queryset, search_term):
        if not search_term.strip():
            return queryset, False
        return search_exact(queryset, search_term, text=[], ids=["trait_id", "memory_id"]), False


@admin.register(ReflectionCycle)
class ReflectionCycleAdmin(EndUserColumn, ReadOnlyAdmin):
    list_display = [
        "end_user",
        "trigger_type",
        "status",
        "memories_scanned",
        "traits_created",
        "traits_updated",
        "traits_dissolved",
        "started_at",
        "completed_at",
        "error_short",
    ]
    list_filter = ["status", "trigger_type"]
    sortable_by = ["started_at"]
    search_fields = ["user_id"]
    search_help_text = "An exact user_id (or a cycle's id)."

    @admin.display(description="error")
    def error_short(self, obj: ReflectionCycle) -> str:
        return Truncator(obj.error_message or "").chars(80)

    def get_search_results(self, request, queryset, search_term):
        if not search_term.strip():
            return queryset, False
        return search_exact(queryset, search_term, text=["user_id"], ids=["id"]), False


class ResolvedFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("open", "Open"), ("resolved", "Resolved")]

    def queryset(self, request, queryset):
        if self.value() == "open":
            return queryset.filter(resolved_at__isnull=True)
        if self.value() == "resolved":
            return queryset.filter(resolved_at__isnull=False)
        return queryset


@admin.register(ConsistencyIssue)
class ConsistencyIssueAdmin(EndUserColumn, ReadOnlyAdmin):
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

    def get_search_results(self, request, queryset, search_term):
        if not search_term.strip():
            return queryset, False
        return (
            search_exact(queryset, search_term, text=["row_id", "missing_id", "user_id"], ids=[]),
            False,
        )
