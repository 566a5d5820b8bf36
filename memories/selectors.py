"""Reads of memories: what a client may see, listings, history, versions, exports."""

import uuid
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet
from django.db.models.functions import Coalesce

from memories.models import (
    ConversationMessage,
    ConversationSession,
    Memory,
    MemoryHistory,
    MemorySource,
)
from memories.services import TRAIT_METADATA
from neuromem_site.api.envelope import NotFound
from neuromem_site.api.models import ApiClient
from reflection.models import ReflectionCycle, TraitEvidence

# seed 004: the activity score's states.
STATE_THRESHOLDS = (("active", 70), ("cold", 30), ("deprecated", 0))
STATES = ("active", "cold", "deprecated", "deleted")


def memory_state(memory: Memory) -> str:
    if memory.expired_at is not None:
        return "deleted"
    return next(state for state, floor in STATE_THRESHOLDS if memory.score >= floor)


def trait_field(memory: Memory, key: str) -> Any:
    """A trait field by its metadata key: the dedicated column first, the V1 JSONB metadata
    as the fallback (TC-R01–R03)."""
    column, _ = TRAIT_METADATA[key]
    value = getattr(memory, column)
    return (memory.metadata or {}).get(key) if value is None else value


def state_filter(states: list[str]) -> Q:
    condition = Q(pk__in=[])
    bounds = {"active": (70, None), "cold": (30, 70), "deprecated": (None, 30)}
    for state in states:
        if state == "deleted":
            condition |= Q(expired_at__isnull=False)
            continue
        low, high = bounds[state]
        part = Q(expired_at__isnull=True)
        if low is not None:
            part &= Q(score__gte=low)
        if high is not None:
            part &= Q(score__lt=high)
        condition |= part
    return condition


def memories_visible_to(client: ApiClient) -> QuerySet[Memory]:
    if client.is_staff:
        return Memory.objects.all()
    condition = Q(pk__in=[])
    for prefix in client.user_prefixes:
        condition |= Q(user_id__startswith=prefix)
    return Memory.objects.filter(condition)


def memory_get_for_client(*, client: ApiClient, memory_id: uuid.UUID | str) -> Memory:
    """The memory, or NOT_FOUND — also when it belongs to another client's users."""
    try:
        return memories_visible_to(client).get(pk=memory_id)
    except (Memory.DoesNotExist, ValueError):
        raise NotFound(f"Memory '{memory_id}' not found.") from None


def memories_as_of(queryset: QuerySet[Memory], as_of: datetime) -> QuerySet[Memory]:
    """What was true and known at `as_of` (seed 002 §6.3)."""
    return queryset.filter(
        Q(valid_at__isnull=True) | Q(valid_at__lte=as_of),
        Q(invalid_at__isnull=True) | Q(invalid_at__gt=as_of),
        Q(expired_at__isnull=True) | Q(expired_at__gt=as_of),
        created_at__lte=as_of,
    )


# sort_by → what to order by. Rows from V1 may have no valid_at; a cursor cannot hold a NULL
# position, so they sort by when they were recorded.
MEMORY_SORT_FIELDS = {
    "created_at": "created_at",
    "score": "score",
    "importance": "importance",
    "valid_at": "valid_at_or_created",
}


def memory_list(*, client: ApiClient, filters: dict[str, Any]) -> QuerySet[Memory]:
    queryset = memories_visible_to(client).annotate(
        valid_at_or_created=Coalesce("valid_at", "created_at")
    )
    for name in ("user_id", "memory_type", "key"):
        if filters.get(name):
            queryset = queryset.filter(**{name: filters[name]})
    if filters.get("as_of"):
        queryset = memories_as_of(queryset, filters["as_of"])
    elif not filters.get("include_expired"):
        queryset = queryset.filter(expired_at__isnull=True)
    if filters.get("state"):
        queryset = queryset.filter(state_filter(filters["state"]))
    elif not filters.get("include_all_states"):
        # seed 004: deprecated memories are not shown unless asked for.
        queryset = queryset.exclude(expired_at__isnull=True, score__lt=30)
    if filters.get("score_min") is not None:
        queryset = queryset.filter(score__gte=filters["score_min"])
    if filters.get("score_max") is not None:
        queryset = queryset.filter(score__lte=filters["score_max"])
    return queryset


def memory_history(*, memory: Memory) -> QuerySet[MemoryHistory]:
    return MemoryHistory.objects.filter(memory_id=memory.id).order_by("created_at", "id")


def memory_versions(*, memory: Memory) -> list[Memory]:
    """The supersede chain the memory belongs to, oldest first."""
    chain = [memory]
    while (older := Memory.objects.filter(superseded_by=chain[0].id).first()) is not None:
        chain.insert(0, older)
    while chain[-1].superseded_by and (
        newer := Memory.objects.filter(pk=chain[-1].superseded_by).first()
    ):
        chain.append(newer)
    return chain


def user_export(*, user_id: str) -> dict[str, Any]:
    """Everything held about one end user (the data-access right)."""
    memories = list(Memory.objects.filter(user_id=user_id).order_by("created_at", "id"))
    memory_ids = [memory.id for memory in memories]
    sessions = list(ConversationSession.objects.filter(user_id=user_id).order_by("started_at"))
    session_ids = [session.id for session in sessions]
    return {
        "memories": memories,
        "history": list(
            MemoryHistory.objects.filter(memory_id__in=memory_ids).order_by("created_at", "id")
        ),
        "evidence": list(
            TraitEvidence.objects.filter(
                Q(trait_id__in=memory_ids) | Q(memory_id__in=memory_ids)
            ).order_by("created_at")
        ),
        "sources": list(
            MemorySource.objects.filter(
                Q(memory_id__in=memory_ids) | Q(session_id__in=session_ids)
            ).order_by("created_at")
        ),
        "sessions": sessions,
        "messages": list(
            ConversationMessage.objects.filter(session_id__in=session_ids).order_by("created_at")
        ),
        "cycles": list(ReflectionCycle.objects.filter(user_id=user_id).order_by("started_at")),
    }
