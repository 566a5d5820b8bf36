"""Staff views of memories and conversations.

Nothing here is edited in place. Staff change a memory only through the services the API
uses (supersede with new content, invalidate, soft delete), each from the memory's page on a
confirmation page that asks for a reason. They act as `staff:<username>`, the actor the audit
trigger records; each action also writes an admin LogEntry (where the reason is kept) and
needs `memories.change_memory`. Forgetting a memory (erasing it on request, as an end user may
ask) is the purge's permission, `memories.purge_end_user`: a dry run first, then the forget
(neuromem_site.backoffice.views). A forgotten memory shows when and on whose request, never
what it said; its forget request has a read-only page here.

The lists run over a million rows: no exact count of a big list (EstimatedCountPaginator), no
facet counts, sorting by indexed columns only, the user filter is an exact match typed in
(never a list of distinct users), and search uses the full-text column or exact ids, never
ILIKE. Migration 0012 holds the indexes the lists and filters read.
"""

import json
import uuid
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from typing import ClassVar

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import unquote
from django.contrib.postgres.search import SearchQueryField
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import BooleanField, F, Func, Q, QuerySet, Value
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.safestring import mark_safe
from django.utils.text import Truncator

from core.admin_base import ReadOnlyAdmin, search_term, staff_caller
from core.errors import Conflict, DomainError
from memories.forgetting.plan import REASONS
from memories.links import memory_links
from memories.meaning import STATES, current_q, states_q
from memories.models import (
    ConversationMessage,
    ConversationSession,
    ForgetRequest,
    Memory,
    MemoryLink,
    MemorySource,
    MemoryType,
    TraitStage,
)
from memories.selectors import memory_history, memory_state, memory_versions, trait_field
from memories.services import memory_delete, memory_invalidate, memory_supersede
from neuromem_site.backoffice.links import EndUserColumn, forget_request_url
from neuromem_site.backoffice.views import FORGET_PERMISSION, forget_confirmed, forget_preview
from reflection.models import TraitEvidence
from reflection.selectors import trait_detail

# Columns the admin never loads: vectors are big and unreadable, the tsvector is derived.
HEAVY_COLUMNS = ("embedding", "lexical_vector", "search_vector")
# A memory page shows the newest history rows (oldest first); a session page its first
# messages; the rest is a click away.
HISTORY_ROWS = 100
MESSAGE_ROWS = 200
REASON_MAX_CHARS = 1000
USER_ID_SEARCH = "user_id:"


def as_uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text.strip())
    except ValueError:
        return None


def memory_url(memory_id) -> str:
    return reverse("admin:memories_memory_change", args=[memory_id])


def session_url(session_id) -> str:
    return reverse("admin:memories_conversationsession_change", args=[session_id])


def message_url(message_id) -> str:
    return reverse("admin:memories_conversationmessage_change", args=[message_id])


def pretty_json(value) -> str:
    return format_html(
        '<pre class="memory-json">{}</pre>',
        json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str),
    )


def text_block(text: str) -> str:
    return format_html('<div class="memory-text">{}</div>', text)


def redactions_text(redactions: dict[str, int] | None) -> str:
    """What a write redacted, "password 1, api_key 2", or "–"."""
    if not redactions:
        return "–"
    return ", ".join(f"{kind} {number}" for kind, number in sorted(redactions.items()))


def id_links(ids: list, url_of: Callable[[uuid.UUID], str]) -> str:
    """Ids, one a line, each linking to its page."""
    if not ids:
        return "–"
    return format_html_join(
        mark_safe("<br>"), '<a href="{}">{}</a>', ((url_of(value), value) for value in ids)
    )


# --- Filters ---------------------------------------------------------------------------------


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


class CurrentFilter(admin.SimpleListFilter):
    title = "current"
    parameter_name = "current"

    def lookups(self, request, model_admin):
        return [
            ("current", "Current"),
            ("expired", "Expired (superseded or deleted)"),
            ("invalidated", "Invalidated"),
            ("forgotten", "Forgotten (erased on request)"),
        ]

    def queryset(self, request, queryset):
        # Expired and invalidated are what idx_memories_not_current holds (migration 0012);
        # forgotten is idx_memories_forgotten (0016).
        if self.value() == "current":
            return queryset.filter(current_q())
        if self.value() == "expired":
            return queryset.filter(expired_at__isnull=False, invalid_at__isnull=True)
        if self.value() == "invalidated":
            return queryset.filter(invalid_at__isnull=False)
        if self.value() == "forgotten":
            return queryset.filter(forgotten_at__isnull=False)
        return queryset


class StateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [(state, state.capitalize()) for state in STATES]

    def queryset(self, request, queryset):
        if self.value() in STATES:
            return queryset.filter(states_q([self.value()]))
        return queryset


class ScoreFlagFilter(admin.SimpleListFilter):
    """What the activity score job flags for staff (docs/decay.md); it never acts on them."""

    title = "flagged by the score job"
    parameter_name = "flag"
    FLAGS: ClassVar[dict[str, Q]] = {
        "eligible_for_delete": Q(eligible_for_delete=True),
        "merge_candidate": Q(merge_candidate_of__isnull=False),
    }

    def lookups(self, request, model_admin):
        return [
            ("eligible_for_delete", "Eligible for delete"),
            ("merge_candidate", "Merge candidate"),
        ]

    def queryset(self, request, queryset):
        if self.value() in self.FLAGS:
            return queryset.filter(self.FLAGS[self.value()])
        return queryset


class TraitStageFilter(admin.SimpleListFilter):
    title = "trait stage"
    parameter_name = "trait_stage"

    def lookups(self, request, model_admin):
        return TraitStage.choices

    def queryset(self, request, queryset):
        if self.value() not in TraitStage.values:
            return queryset
        # The trait partition only (pruned by memory_type); the column, else V1's metadata
        # (memories/meaning.py).
        stage = Q(trait_stage=self.value()) | Q(
            trait_stage__isnull=True, metadata__trait_stage=self.value()
        )
        return queryset.filter(Q(memory_type=MemoryType.TRAIT) & stage)


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


# --- Memories --------------------------------------------------------------------------------


class ReasonForm(forms.Form):
    reason = forms.CharField(
        max_length=REASON_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        help_text="Why: kept in the admin's history of this memory, with your name.",
    )
    # The version the page showed: a change made since then refuses the action.
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)


class SupersedeForm(ReasonForm):
    content = forms.CharField(
        max_length=settings.MEMORY_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 6, "cols": 80}),
        help_text="The new version's content; this one is kept as the older version.",
    )
    field_order = ["content", "reason", "version"]

    def __init__(self, *args, memory: Memory, **kwargs):
        super().__init__(*args, **kwargs)
        self.memory = memory

    def clean_content(self) -> str:
        content = self.cleaned_data["content"]
        if content == self.memory.content:
            raise forms.ValidationError("The same content as now: nothing to supersede.")
        return content


def version_check(memory: Memory, expected: int) -> None:
    """After invalidate or delete (which bump the version by one and take no expected
    version): anything else means the row changed since the page showed `expected`, or the
    service found nothing current to change. Raising rolls the action back."""
    if memory.version != expected + 1:
        raise Conflict(
            "This memory changed since the page was shown (or is no longer current); "
            "nothing was changed. Reload it and try again.",
            field="version",
            current_version=memory.version,
        )


# name → (title, button, what it does, form)
MEMORY_ACTIONS = {
    "supersede": (
        "Supersede memory",
        "Supersede",
        "A new version with the content below becomes the current one; this one is kept, "
        "expired and pointing at it. Links follow the new version.",
        SupersedeForm,
    ),
    "invalidate": (
        "Invalidate memory",
        "Invalidate",
        "The fact stopped being true now: it leaves current reads and recall, and as of any "
        "later instant it is no longer seen. The row and its history stay.",
        ReasonForm,
    ),
    "soft_delete": (
        "Delete memory (soft)",
        "Delete",
        "A soft delete: recall and listings no longer see it; the row and its history stay "
        "(a hard delete is the end user's purge).",
        ReasonForm,
    ),
}


@admin.register(Memory)
class MemoryAdmin(EndUserColumn, ReadOnlyAdmin):
    """Memories, read-only. Supersede, invalidate and soft delete from a memory's page
    (`memories.change_memory`); a trait's page here links to the trait admin, where it is
    vetoed instead."""

    list_display = [
        "content_short",
        "end_user",
        "memory_type",
        "state",
        "score_short",
        "trait_stage_short",
        "embedding_status",
        "created_at",
    ]
    list_display_links = ["content_short"]
    list_filter = [
        UserIdFilter,
        "memory_type",
        CurrentFilter,
        StateFilter,
        ScoreFlagFilter,
        TraitStageFilter,
        "embedding_status",
        CreatedRangeFilter,
    ]
    # idx_memories_created's order; sorting a million rows by another column would be a
    # sort per page, and facet counts a count per choice.
    ordering = ["-created_at", "-id"]
    sortable_by = ["created_at"]
    show_facets = admin.ShowFacets.NEVER
    # Only for the search box to show; get_search_results does the searching.
    search_fields = ["user_id"]
    search_help_text = (
        "Words of the content (full text, as recall matches them: any of the words), a "
        f'memory id, or an exact user_id ("{USER_ID_SEARCH}alice" to say so).'
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).defer(*HEAVY_COLUMNS)

    def get_search_results(self, request, queryset, search_term):
        return memory_search(queryset, search_term), False

    # --- Columns ----------------------------------------------------------------------------

    @admin.display(description="content")
    def content_short(self, obj: Memory) -> str:
        if obj.forgotten_at is not None:
            return "(forgotten)"
        return Truncator(obj.content).chars(80)

    @admin.display(description="state")
    def state(self, obj: Memory) -> str:
        return memory_state(obj)

    @admin.display(description="score")
    def score_short(self, obj: Memory) -> str:
        return f"{obj.score:.1f}"

    @admin.display(description="trait stage")
    def trait_stage_short(self, obj: Memory) -> str:
        if obj.memory_type != MemoryType.TRAIT:
            return "–"
        return trait_field(obj, "trait_stage") or "–"

    # --- The memory's page ------------------------------------------------------------------

    readonly_fields = [
        "id",
        "end_user",
        "memory_type",
        "key",
        "content_text",
        "metadata_json",
        "forgotten",
        "redacted",
        "state",
        "score",
        "importance",
        "embedding_status",
        "version",
        "newer_version",
        "created_at",
        "updated_at",
        "expired_at",
        "valid_at",
        "invalid_at",
        "access_count",
        "last_accessed_at",
        "traverse_count",
        "last_linked_at",
        "eligible_for_delete",
        "merge_candidate_link",
        "source_episode_ids",
        "reflected_at",
        "trait_subtype",
        "trait_stage",
        "trait_context",
        "trait_confidence",
        "trait_reinforcement_count",
        "trait_contradiction_count",
        "trait_first_observed",
        "trait_last_reinforced",
        "trait_window_start",
        "trait_window_end",
        "trait_derived_from",
    ]

    def get_fieldsets(self, request, obj=None):
        if obj is not None and obj.forgotten_at is not None:
            # What it said is gone: the record of its forgetting instead.
            about = [(None, {"fields": ["id", "end_user", ("memory_type", "key"), "forgotten"]})]
        else:
            about = [
                (None, {"fields": ["id", "end_user", ("memory_type", "key"), "content_text"]}),
                ("Metadata", {"fields": ["metadata_json", "redacted"]}),
            ]
        fieldsets = [
            *about,
            (
                "State",
                {
                    "fields": [
                        ("state", "score", "importance"),
                        ("embedding_status", "version", "newer_version"),
                        ("created_at", "updated_at", "expired_at"),
                        ("valid_at", "invalid_at"),
                        ("access_count", "last_accessed_at"),
                        ("traverse_count", "last_linked_at"),
                        ("eligible_for_delete", "merge_candidate_link"),
                        ("source_episode_ids", "reflected_at"),
                    ]
                },
            ),
        ]
        if obj is not None and obj.memory_type == MemoryType.TRAIT:
            fieldsets.append(
                (
                    "Trait",
                    {
                        "fields": [
                            ("trait_subtype", "trait_stage", "trait_context"),
                            ("trait_confidence", "trait_derived_from"),
                            ("trait_reinforcement_count", "trait_contradiction_count"),
                            ("trait_first_observed", "trait_last_reinforced"),
                            ("trait_window_start", "trait_window_end"),
                        ]
                    },
                )
            )
        return fieldsets

    @admin.display(description="content")
    def content_text(self, obj: Memory) -> str:
        return text_block(obj.content)

    @admin.display(description="metadata")
    def metadata_json(self, obj: Memory) -> str:
        return pretty_json(obj.metadata)

    @admin.display(description="redacted")
    def redacted(self, obj: Memory) -> str:
        return redactions_text(obj.redactions)

    @admin.display(description="forgotten")
    def forgotten(self, obj: Memory) -> str:
        if obj.forgotten_at is None:
            return "–"
        when = timezone.localtime(obj.forgotten_at).strftime("%Y-%m-%d %H:%M:%S %Z")
        forget_request = ForgetRequest.objects.filter(pk=obj.forget_request_id).first()
        if forget_request is None:  # the request's row is gone: its id is all there is
            return f"Forgotten on {when} (forget request {obj.forget_request_id})."
        return format_html(
            'Forgotten on {} at the request of <code>{}</code> via {}: <a href="{}">forget '
            "request {}</a>. What it said is erased, here and in its history.",
            when,
            forget_request.requested_by,
            forget_request.via,
            forget_request_url(forget_request.pk),
            forget_request.pk,
        )

    @admin.display(description="superseded by")
    def newer_version(self, obj: Memory) -> str:
        if obj.superseded_by is None:
            return "–"
        return format_html('<a href="{}">{}</a>', memory_url(obj.superseded_by), obj.superseded_by)

    @admin.display(description="merge candidate of")
    def merge_candidate_link(self, obj: Memory) -> str:
        if obj.merge_candidate_of is None:
            return "–"
        target = obj.merge_candidate_of
        return format_html('<a href="{}">{}</a>', memory_url(target), target)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        memory = self.get_object(request, unquote(object_id))
        if memory is not None and self.has_view_permission(request, memory):
            extra_context.update(self.page_context(request, memory))
        return super().change_view(request, object_id, form_url, extra_context)

    def page_context(self, request: HttpRequest, memory: Memory) -> dict:
        """What the page shows below the fields: versions, history, sources, links, evidence,
        and the actions the staff member may take."""
        caller = staff_caller(request)
        newest = memory_history(caller=caller, memory=memory).reverse()[:HISTORY_ROWS]
        context = {
            "versions": [
                (version, memory_url(version.pk), version.pk == memory.pk)
                for version in memory_versions(caller=caller, memory=memory)
            ],
            "history": list(reversed(newest)),
            "history_rows": HISTORY_ROWS,
            "sources": memory_sources(memory),
            "links": [(link, memory_url(link.target.pk)) for link in memory_links(memory=memory)],
            "linked_from": linked_from(memory),
            "cited_by": cited_by(memory),
        }
        if memory.memory_type == MemoryType.TRAIT:
            context["trait_url"] = reverse("admin:reflection_trait_change", args=[memory.pk])
            context["evidence"] = [
                (item.evidence, item.memory, item.memory and memory_url(item.memory.pk))
                for item in trait_detail(caller=caller, trait_id=memory.pk).evidence
            ]
        if (
            memory.expired_at is None
            and memory.memory_type != MemoryType.TRAIT
            and self.has_memory_action_permission(request, memory)
        ):
            context["action_urls"] = [
                (reverse(f"admin:memories_memory_{name}", args=[memory.pk]), button)
                for name, (_, button, _, _) in MEMORY_ACTIONS.items()
            ]
        if memory.forgotten_at is None and request.user.has_perm(FORGET_PERMISSION):
            context["forget_url"] = reverse("admin:memories_memory_forget", args=[memory.pk])
        return context

    # --- Actions ----------------------------------------------------------------------------

    def has_memory_action_permission(self, request: HttpRequest, obj=None) -> bool:
        # Django's own check of `memories.change_memory` (this class answers False for
        # editing in place).
        return admin.ModelAdmin.has_change_permission(self, request, obj)

    def get_urls(self):
        views = {
            "supersede": self.supersede_view,
            "invalidate": self.invalidate_view,
            "soft_delete": self.soft_delete_view,
            "forget": self.forget_view,
        }
        return [
            *(
                path(
                    f"<path:object_id>/{name.replace('_', '-')}/",
                    self.admin_site.admin_view(view),
                    name=f"memories_memory_{name}",
                )
                for name, view in views.items()
            ),
            *super().get_urls(),
        ]

    def supersede_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        def supersede(memory: Memory, data: dict) -> tuple[Memory, str]:
            successor = memory_supersede(
                memory=memory,
                content=data["content"],
                caller=staff_caller(request),
                expected_version=data["version"],
            )
            reason = data["reason"]
            self.log_change(
                request, memory, f"Superseded by v{successor.version} ({successor.pk}): {reason}"
            )
            self.log_addition(request, successor, f"New version of {memory.pk}: {reason}")
            return successor, f"Superseded: v{successor.version} is the current one."

        return self.action_view(request, object_id, "supersede", supersede)

    def invalidate_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        def invalidate(memory: Memory, data: dict) -> tuple[Memory, str]:
            done = memory_invalidate(memory=memory, caller=staff_caller(request))
            version_check(done, data["version"])
            self.log_change(request, done, f"Invalidated: {data['reason']}")
            return done, "Invalidated: it is no longer current."

        return self.action_view(request, object_id, "invalidate", invalidate)

    def soft_delete_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        def soft_delete(memory: Memory, data: dict) -> tuple[Memory, str]:
            done = memory_delete(memory=memory, caller=staff_caller(request))
            version_check(done, data["version"])
            self.log_change(request, done, f"Deleted (soft): {data['reason']}")
            return done, "Deleted (soft): recall no longer sees it."

        return self.action_view(request, object_id, "soft_delete", soft_delete)

    def forget_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """GET: what forgetting this memory would erase (a dry run: it, its older versions,
        what quoted it), with a button to confirm. POST: the forget, then the request's page."""
        memory = self.get_object(request, unquote(object_id))
        if memory is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not request.user.has_perm(FORGET_PERMISSION):
            raise PermissionDenied
        change_url = memory_url(memory.pk)
        if memory.forgotten_at is not None:
            messages.error(request, "This memory is forgotten already: nothing more to forget.")
            return HttpResponseRedirect(change_url)
        try:
            if request.method == "POST":
                return forget_confirmed(request, user_id=memory.user_id, memory_ids=[memory.pk])
            preview = forget_preview(request, user_id=memory.user_id, memory_ids=[memory.pk])
        except DomainError as error:
            messages.error(request, f"Nothing was forgotten: {error.message}")
            return HttpResponseRedirect(change_url)
        return TemplateResponse(
            request,
            "admin/memories/memory/forget.html",
            {
                **self.admin_site.each_context(request),
                **preview,
                "title": "Forget memory",
                "opts": self.opts,
                "original": memory,
                "cancel_url": change_url,
            },
        )

    def action_view(self, request: HttpRequest, object_id: str, name: str, run) -> HttpResponse:
        """The confirmation page of an action and, on a valid POST, `run(memory, data)` (the
        service call and its LogEntry, answering the memory to show and a message) in one
        transaction: a refusal writes nothing and shows on the form."""
        memory = self.get_object(request, unquote(object_id))
        if memory is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_memory_action_permission(request, memory):
            raise PermissionDenied
        change_url = memory_url(memory.pk)
        if memory.forgotten_at is not None:
            messages.error(request, "This memory was forgotten: nothing to change.")
            return HttpResponseRedirect(change_url)
        if memory.memory_type == MemoryType.TRAIT:
            # memory_supersede rebuilds trait columns from metadata alone (the stage and
            # confidence would be lost), and a trait leaves belief through its veto, which
            # records why: the trait page's.
            messages.error(request, "A trait is not changed here: veto it on its trait page.")
            return HttpResponseRedirect(reverse("admin:reflection_trait_change", args=[memory.pk]))
        if memory.expired_at is not None and request.method != "POST":
            messages.error(request, "This memory is no longer current: nothing to change.")
            return HttpResponseRedirect(change_url)
        title, button, explanation, form_class = MEMORY_ACTIONS[name]
        extra = {"memory": memory} if form_class is SupersedeForm else {}
        if request.method == "POST":
            form = form_class(request.POST, **extra)
            if form.is_valid():
                try:
                    with transaction.atomic():
                        target, done = run(memory, form.cleaned_data)
                except DomainError as error:
                    # A stale version belongs to no visible field: shown above the form.
                    shown = error.field in form.fields and error.field != "version"
                    form.add_error(error.field if shown else None, error.message)
                else:
                    messages.success(request, done)
                    return HttpResponseRedirect(memory_url(target.pk))
        else:
            initial = {"version": memory.version}
            if form_class is SupersedeForm:
                initial["content"] = memory.content
            form = form_class(initial=initial, **extra)
        return TemplateResponse(
            request,
            "admin/memories/memory/action.html",
            {
                **self.admin_site.each_context(request),
                "title": title,
                "opts": self.opts,
                "original": memory,
                "form": form,
                "button": button,
                "explanation": explanation,
                "cancel_url": change_url,
            },
        )


def memory_sources(memory: Memory) -> list[tuple]:
    """The sessions and messages the memory came from: (source, session url, message or
    None, message url or None)."""
    sources = list(MemorySource.objects.filter(memory_id=memory.id).order_by("created_at"))
    found = ConversationMessage.objects.in_bulk(
        [source.conversation_id for source in sources if source.conversation_id]
    )
    rows = []
    for source in sources:
        message = found.get(source.conversation_id)
        rows.append(
            (source, session_url(source.session_id), message, message and message_url(message.pk))
        )
    return rows


def linked_from(memory: Memory) -> list[tuple]:
    """The memories linking to this one: (link, source memory or None, its url)."""
    links = list(MemoryLink.objects.filter(target_id=memory.id).order_by("-weight", "id"))
    found = (
        Memory.objects.defer(*HEAVY_COLUMNS)
        .filter(user_id=memory.user_id)
        .in_bulk([link.source_id for link in links])
    )
    return [(link, found.get(link.source_id), memory_url(link.source_id)) for link in links]


def cited_by(memory: Memory) -> list[tuple]:
    """The traits citing this memory as evidence: (evidence, trait or None, trait page url)."""
    evidence = list(TraitEvidence.objects.filter(memory_id=memory.id).order_by("created_at"))
    traits = (
        Memory.objects.defer(*HEAVY_COLUMNS)
        .filter(memory_type=MemoryType.TRAIT, user_id=memory.user_id)
        .in_bulk([item.trait_id for item in evidence])
    )
    return [
        (
            item,
            traits.get(item.trait_id),
            reverse("admin:reflection_trait_change", args=[item.trait_id]),
        )
        for item in evidence
    ]


# --- Conversations ---------------------------------------------------------------------------


def message_memories(messages: list[ConversationMessage]) -> dict[uuid.UUID, list[tuple]]:
    """message id → the memories written from it: (memory, url). Read by session
    (idx_sources_session); memory_sources has no index on the message."""
    sessions = {message.session_id for message in messages}
    wanted = {message.pk for message in messages}
    sources = [
        source
        for source in MemorySource.objects.filter(session_id__in=sessions).order_by("created_at")
        if source.conversation_id in wanted
    ]
    memories = Memory.objects.defer(*HEAVY_COLUMNS).in_bulk(
        [source.memory_id for source in sources]
    )
    written: dict[uuid.UUID, list[tuple]] = {}
    for source in sources:
        memory = memories.get(source.memory_id)
        if memory is not None:
            written.setdefault(source.conversation_id, []).append((memory, memory_url(memory.pk)))
    return written


class EndedFilter(admin.SimpleListFilter):
    title = "ended"
    parameter_name = "ended"

    def lookups(self, request, model_admin):
        return [("yes", "Ended"), ("no", "Open")]

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return queryset.filter(ended_at__isnull=self.value() == "no")
        return queryset


def exact_search(queryset: QuerySet, term: str, *, ids: list[str]) -> QuerySet:
    """An exact user_id, or (a UUID) an exact id in one of the `ids` columns: indexes only."""
    term = search_term(term)
    if not term:
        return queryset
    condition = Q(user_id=term)
    value = as_uuid(term)
    if value is not None:
        for name in ids:
            condition |= Q(**{name: value})
    return queryset.filter(condition)


@admin.register(ConversationSession)
class ConversationSessionAdmin(EndUserColumn, ReadOnlyAdmin):
    """Sessions, read-only, newest first; a session's page lists its messages."""

    list_display = ["session_id", "end_user", "started_at", "ended_at", "last_reflected_at"]
    list_display_links = ["session_id"]
    list_filter = [UserIdFilter, EndedFilter]
    ordering = ["-started_at", "-id"]  # idx_sessions_started (migration 0012)
    sortable_by = ["started_at"]
    show_facets = admin.ShowFacets.NEVER
    search_fields = ["user_id"]
    search_help_text = "An exact user_id, or a session's id."
    fields = ["id", "end_user", "started_at", "ended_at", "last_reflected_at", "metadata_json"]
    readonly_fields = fields

    @admin.display(description="session")
    def session_id(self, obj: ConversationSession) -> str:
        return str(obj.pk)

    @admin.display(description="metadata")
    def metadata_json(self, obj: ConversationSession) -> str:
        return pretty_json(obj.metadata)

    def get_search_results(self, request, queryset, search_term):
        return exact_search(queryset, search_term, ids=["id"]), False

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        session = self.get_object(request, unquote(object_id))
        if session is not None and self.has_view_permission(request, session):
            first = list(session.messages.order_by("created_at", "id")[: MESSAGE_ROWS + 1])
            written = message_memories(first[:MESSAGE_ROWS])
            extra_context.update(
                session_messages=[
                    (message, message_url(message.pk), written.get(message.pk, []))
                    for message in first[:MESSAGE_ROWS]
                ],
                more_messages=len(first) > MESSAGE_ROWS,
                message_rows=MESSAGE_ROWS,
                all_messages_url=reverse("admin:memories_conversationmessage_changelist")
                + "?"
                + urlencode({"session_id": session.pk}),
            )
        return super().change_view(request, object_id, form_url, extra_context)


class ExtractionStatusFilter(admin.SimpleListFilter):
    title = "extraction status"
    parameter_name = "extraction_status"

    def lookups(self, request, model_admin):
        # The values memories/ingest.py writes (pending: V1's messages, never extracted).
        return [(value, value) for value in ("done", "skipped", "failed", "pending")]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(extraction_status=self.value())
        return queryset


@admin.register(ConversationMessage)
class ConversationMessageAdmin(EndUserColumn, ReadOnlyAdmin):
    """Messages, read-only, newest first, with the memories written from each. No content
    search: the table has no full-text index, and ILIKE would read all of it."""

    list_display = [
        "content_short",
        "role",
        "end_user",
        "session_link",
        "extraction_status",
        "redacted",
        "created_at",
    ]
    list_display_links = ["content_short"]
    list_filter = [UserIdFilter, SessionFilter, ExtractionStatusFilter]
    ordering = ["-created_at", "-id"]  # idx_conversations_created (migration 0012)
    sortable_by = ["created_at"]
    show_facets = admin.ShowFacets.NEVER
    search_fields = ["user_id"]
    search_help_text = "An exact user_id, or a message's or session's id."
    fields = [
        "id",
        "session_link",
        "end_user",
        "role",
        "created_at",
        "extraction_status",
        "redacted",
        "content_text",
    ]
    readonly_fields = fields

    @admin.display(description="content")
    def content_short(self, obj: ConversationMessage) -> str:
        return Truncator(obj.content).chars(80)

    @admin.display(description="content")
    def content_text(self, obj: ConversationMessage) -> str:
        return text_block(obj.content)

    @admin.display(description="redacted")
    def redacted(self, obj: ConversationMessage) -> str:
        return redactions_text(obj.redactions)

    @admin.display(description="session")
    def session_link(self, obj: ConversationMessage) -> str:
        return format_html('<a href="{}">{}</a>', session_url(obj.session_id), obj.session_id)

    def get_search_results(self, request, queryset, search_term):
        return exact_search(queryset, search_term, ids=["id", "session_id"]), False

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        message = self.get_object(request, unquote(object_id))
        if message is not None and self.has_view_permission(request, message):
            extra_context["written"] = message_memories([message]).get(message.pk, [])
        return super().change_view(request, object_id, form_url, extra_context)


# --- Forget requests -------------------------------------------------------------------------


def trait_url(trait_id) -> str:
    return reverse("admin:reflection_trait_change", args=[trait_id])


@admin.register(ForgetRequest)
class ForgetRequestAdmin(EndUserColumn, ReadOnlyAdmin):
    """Forget requests, read-only, newest first: who asked, when, by which path, and what was
    erased, by id. Never what was asked: the topic is not stored (it may be the secret)."""

    list_display = [
        "created_at",
        "end_user",
        "requested_by",
        "via",
        "forgotten_count",
        "erased_count",
        "messages_count",
        "reason_code",
    ]
    list_display_links = ["created_at"]
    list_filter = ["via"]  # the choices of the field: no query for them
    ordering = ["-created_at", "-id"]  # idx_forget_requests_recent
    sortable_by = ["created_at"]
    search_fields = ["user_id"]
    search_help_text = "An exact user_id, or a forget request's id."
    fields = [
        "id",
        "end_user",
        "created_at",
        "requested_by",
        "via",
        "asked_in",
        "reason_text",
        "forgotten_links",
        "erased_links",
        "message_links",
        "traits_reweighed_links",
        "traits_dissolved_links",
    ]
    readonly_fields = fields

    @admin.display(description="forgotten")
    def forgotten_count(self, obj: ForgetRequest) -> int:
        return len(obj.memory_ids)

    @admin.display(description="erased in part")
    def erased_count(self, obj: ForgetRequest) -> int:
        return len(obj.erased_memory_ids)

    @admin.display(description="messages")
    def messages_count(self, obj: ForgetRequest) -> int:
        return len(obj.message_ids)

    @admin.display(description="reason")
    def reason_code(self, obj: ForgetRequest) -> str:
        return obj.reason or "–"

    @admin.display(description="why nothing was forgotten")
    def reason_text(self, obj: ForgetRequest) -> str:
        if not obj.reason:
            return "–"
        return format_html("<code>{}</code>: {}", obj.reason, REASONS.get(obj.reason, ""))

    @admin.display(description="asked in message")
    def asked_in(self, obj: ForgetRequest) -> str:
        return id_links([obj.message_id] if obj.message_id else [], message_url)

    @admin.display(description="memories forgotten whole")
    def forgotten_links(self, obj: ForgetRequest) -> str:
        return id_links(obj.memory_ids, memory_url)

    @admin.display(description="memories erased in part")
    def erased_links(self, obj: ForgetRequest) -> str:
        return id_links(obj.erased_memory_ids, memory_url)

    @admin.display(description="messages erased")
    def message_links(self, obj: ForgetRequest) -> str:
        return id_links(obj.message_ids, message_url)

    @admin.display(description="traits re-weighed")
    def traits_reweighed_links(self, obj: ForgetRequest) -> str:
        return id_links(obj.traits_reweighed, trait_url)

    @admin.display(description="traits dissolved")
    def traits_dissolved_links(self, obj: ForgetRequest) -> str:
        return id_links(obj.traits_dissolved, trait_url)

    def get_search_results(self, request, queryset, search_term):
        return exact_search(queryset, search_term, ids=["id"]), False
