"""The memory admin: the list over a million rows, a memory's page (versions, history,
sources, links, and the sections other apps register), and the staff actions on it."""

from django.contrib import admin, messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils import timezone
from django.utils.html import format_html

from core.admin_base import ObjectPageContext, StaffActionAdmin, refused, staff_caller
from core.errors import DomainError
from memories.admin.actions import MEMORY_ACTIONS, RETIREMENTS, ReasonForm, version_check
from memories.admin.display import (
    HEAVY_COLUMNS,
    MemoryRows,
    RecordFields,
    history_context,
    memory_url,
    session_url,
)
from memories.admin.filters import (
    USER_ID_SEARCH,
    CreatedRangeFilter,
    CurrentFilter,
    ScoreFlagFilter,
    StateFilter,
    TraitStageFilter,
    UserIdFilter,
    memory_search,
)
from memories.admin.sections import memory_page_sections
from memories.links import memory_links
from memories.models import (
    ConversationMessage,
    ForgetRequest,
    Memory,
    MemoryLink,
    MemorySource,
    MemoryType,
)
from memories.selectors import memory_state, memory_versions, trait_field
from memories.services import memory_supersede
from neuromem_site.backoffice.links import (
    EndUserColumn,
    forget_request_url,
    message_url,
    trait_url,
)
from neuromem_site.backoffice.views import FORGET_PERMISSION, forget_confirmed, forget_preview


@admin.register(Memory)
class MemoryAdmin(EndUserColumn, MemoryRows, RecordFields, ObjectPageContext, StaffActionAdmin):
    """Memories, read-only. Supersede, invalidate and soft delete from a memory's page
    (`memories.change_memory`), forget it (`memories.purge_end_user`); a trait's page here
    links to the trait admin, where it is vetoed instead."""

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
    # Only for the search box to show; get_search_results does the searching.
    search_fields = ["user_id"]
    search_help_text = (
        "Words of the content (full text, as recall matches them: any of the words), a "
        f'memory id, or an exact user_id ("{USER_ID_SEARCH}alice" to say so).'
    )
    object_actions = ("supersede", "invalidate", "soft_delete", "forget")

    def get_search_results(self, request, queryset, search_term):
        return memory_search(queryset, search_term), False

    # --- Columns ----------------------------------------------------------------------------

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
        return memory_link(obj.superseded_by)

    @admin.display(description="merge candidate of")
    def merge_candidate_link(self, obj: Memory) -> str:
        return memory_link(obj.merge_candidate_of)

    def page_context(self, request: HttpRequest, memory: Memory) -> dict:
        """What the page shows below the fields: versions, history, sources, links, the
        registered sections (a trait's evidence, ...), and the actions the staff member may
        take."""
        caller = staff_caller(request)
        context = {
            "versions": [
                (version, memory_url(version.pk), version.pk == memory.pk)
                for version in memory_versions(caller=caller, memory=memory)
            ],
            **history_context(caller, memory),
            "sources": memory_sources(memory),
            "links": [(link, memory_url(link.target.pk)) for link in memory_links(memory=memory)],
            "linked_from": linked_from(memory),
            "page_sections": memory_page_sections(request, memory),
        }
        if memory.memory_type == MemoryType.TRAIT:
            context["trait_url"] = trait_url(memory.pk)
        if (
            memory.expired_at is None
            and memory.memory_type != MemoryType.TRAIT
            and self.has_action_permission(request, memory)
        ):
            context["action_urls"] = [
                (self.action_url(name, memory), action.button)
                for name, action in MEMORY_ACTIONS.items()
            ]
        if memory.forgotten_at is None and request.user.has_perm(FORGET_PERMISSION):
            context["forget_url"] = self.action_url("forget", memory)
        return context

    # --- Actions ----------------------------------------------------------------------------

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

        return self.memory_action_view(request, object_id, "supersede", supersede)

    def invalidate_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return self.retire_view(request, object_id, "invalidate")

    def soft_delete_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return self.retire_view(request, object_id, "soft_delete")

    def retire_view(self, request: HttpRequest, object_id: str, name: str) -> HttpResponse:
        """Invalidate or soft delete: the service, the check that the page's version is the
        one it changed, the LogEntry with the reason."""
        retirement = RETIREMENTS[name]

        def run(memory: Memory, data: dict) -> tuple[Memory, str]:
            retired = retirement.service(memory=memory, caller=staff_caller(request))
            version_check(retired, data["version"])
            self.log_change(request, retired, f"{retirement.logged}: {data['reason']}")
            return retired, retirement.done

        return self.memory_action_view(request, object_id, name, run)

    def memory_action_view(self, request: HttpRequest, object_id: str, name: str, run):
        """The confirmation page of an action and, on a valid POST, `run(memory, data)` (the
        service call and its LogEntry, answering the memory to show and a message) in one
        transaction: a refusal writes nothing and shows on the form."""
        memory = self.action_object(request, object_id)
        if isinstance(memory, HttpResponse):
            return memory
        change_url = memory_url(memory.pk)
        if memory.forgotten_at is not None:
            return refused(request, "This memory was forgotten: nothing to change.", change_url)
        if memory.memory_type == MemoryType.TRAIT:
            # A trait is reflection's: it leaves belief through its veto, which records why
            # and keeps its evidence (the trait page's).
            return refused(
                request,
                "A trait is not changed here: veto it on its trait page.",
                trait_url(memory.pk),
            )
        if memory.expired_at is not None and request.method != "POST":
            return refused(
                request, "This memory is no longer current: nothing to change.", change_url
            )
        action = MEMORY_ACTIONS[name]
        form: ReasonForm = action.form(
            request.POST if request.method == "POST" else None, memory=memory
        )
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
        return self.confirmation_page(
            request,
            title=action.title,
            button=action.button,
            explanation=format_html(
                "{} You act as <code>{}</code>, the actor the memory's audit log records.",
                action.explanation,
                staff_caller(request).name,
            ),
            form=form,
            cancel_url=change_url,
            original=memory,
            summary_rows=[
                ("user_id", memory.user_id),
                ("type", memory.memory_type),
                ("version", f"v{memory.version}"),
                ("content", memory.content),
            ],
        )

    def forget_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """GET: what forgetting this memory would erase (a dry run: it, its older versions,
        what quoted it), with a button to confirm. POST: the forget, then the request's page."""
        memory = self.action_object(request, object_id, permission=FORGET_PERMISSION)
        if isinstance(memory, HttpResponse):
            return memory
        change_url = memory_url(memory.pk)
        if memory.forgotten_at is not None:
            return refused(
                request, "This memory is forgotten already: nothing more to forget.", change_url
            )
        try:
            if request.method == "POST":
                return forget_confirmed(request, user_id=memory.user_id, memory_ids=[memory.pk])
            preview = forget_preview(request, user_id=memory.user_id, memory_ids=[memory.pk])
        except DomainError as error:
            return refused(request, f"Nothing was forgotten: {error.message}", change_url)
        return self.confirmation_page(
            request,
            template="admin/memories/memory/forget.html",
            title="Forget memory",
            button="Forget",
            cancel_url=change_url,
            original=memory,
            form_id="forget-confirm",
            button_hidden=preview["nothing_to_forget"],
            **preview,
        )


def memory_link(memory_id) -> str:
    """A link to the memory's page, or "–" without one."""
    if memory_id is None:
        return "–"
    return format_html('<a href="{}">{}</a>', memory_url(memory_id), memory_id)


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
