"""Reads of memories: what a client may see, listings, history, versions, exports."""

import uuid
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.functions import Coalesce

from core.access import Caller, user_access_check
from core.db.replicas import lagging_read
from core.errors import NotFound
from memories.graph.models import GraphEdge, GraphNode
from memories.models import (
    ConversationMessage,
    ConversationSession,
    ForgetRequest,
    Memory,
    MemoryHistory,
    MemoryLink,
    MemorySource,
)
from memories.predicates import (
    STATE_THRESHOLDS,
    ActivityFilter,
    current_q,
    current_sql,
)
from memories.signals import user_data_exported
from memories.traits import TRAIT_METADATA


def memory_state(memory: Memory) -> str:
    if memory.expired_at is not None:
        return "deleted"
    return next(state for state, floor in STATE_THRESHOLDS if memory.score >= floor)


def trait_field(memory: Memory, key: str) -> Any:
    """A trait field by its metadata key: the dedicated column first, the V1 JSONB metadata
    as the fallback."""
    column, _ = TRAIT_METADATA[key]
    value = getattr(memory, column)
    return (memory.metadata or {}).get(key) if value is None else value


def memories_visible_to(caller: Caller) -> QuerySet[Memory]:
    """The memories of the end users `caller` may read (the SQL twin of may_access_user); no
    client reads a forgotten one (docs/privacy.md)."""
    return Memory.objects.filter(caller.users_q(), forgotten_at__isnull=True)


def memory_get(*, caller: Caller, memory_id: uuid.UUID | str) -> Memory:
    """The memory, or NotFound — also when it belongs to an end user `caller` may not read."""
    try:
        return memories_visible_to(caller).get(pk=memory_id)
    except (Memory.DoesNotExist, ValueError, ValidationError):
        raise NotFound(f"Memory '{memory_id}' not found.") from None


def memory_get_by_key(*, caller: Caller, user_id: str, key: str) -> Memory:
    """The user's current memory holding `key` (keys are unique among a user's current
    memories), or NotFound — also for a user `caller` may not read."""
    user_access_check(caller=caller, user_id=user_id, write=False)
    memory = Memory.objects.current().filter(user_id=user_id, key=key).first()
    if memory is None:
        raise NotFound(f"Memory with key '{key}' not found.")
    return memory


# sort_by → what to order by. Rows from V1 may have no valid_at; a cursor cannot hold a NULL
# position, so they sort by when they were recorded.
MEMORY_SORT_FIELDS = {
    "created_at": "created_at",
    "score": "score",
    "importance": "importance",
    "valid_at": "valid_at_or_created",
}


def memory_list(*, caller: Caller, filters: dict[str, Any]) -> QuerySet[Memory]:
    if filters.get("user_id") is not None:
        user_access_check(caller=caller, user_id=filters["user_id"], write=False)
    queryset = memories_visible_to(caller).annotate(
        valid_at_or_created=Coalesce("valid_at", "created_at")
    )
    for name in ("user_id", "memory_type", "key"):
        if filters.get(name):
            queryset = queryset.filter(**{name: filters[name]})
    if filters.get("as_of"):
        queryset = queryset.as_of(filters["as_of"])
    elif not filters.get("include_expired") and "deleted" not in (filters.get("state") or ()):
        # Current only: an ended value (a past one imported, one a later statement ended) is
        # as much history as a superseded one.
        queryset = queryset.filter(current_q())
    return queryset.filter(activity_filter(filters).q())


def activity_filter(filters: dict[str, Any]) -> ActivityFilter:
    """The activity-score part of validated list or search filters."""
    return ActivityFilter(
        score_min=filters.get("score_min"),
        score_max=filters.get("score_max"),
        states=tuple(filters.get("state") or ()),
        include_all_states=filters.get("include_all_states", False),
    )


def memories_fulltext(
    *,
    caller: Caller,
    user_id: str,
    keywords: list[str],
    match_all: bool,
    limit: int,
    activity: ActivityFilter,
) -> list[tuple[Memory, list[str]]]:
    """The user's current memories holding any (or all) of `keywords`, by full-text match
    (the CJK-aware search document recall's text side uses), best ranked first; each with the
    keywords it holds."""
    user_access_check(caller=caller, user_id=user_id, write=False)
    queries = ", ".join(["neuromem_search_query(%s)"] * len(keywords))
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH k AS (SELECT * FROM unnest(ARRAY[{queries}], %s::text[]) AS k(query, keyword))
            SELECT m.id, array_agg(k.keyword ORDER BY k.keyword) AS matched,
                   sum(ts_rank(m.search_vector, k.query)) AS rank
            FROM memories m JOIN k ON m.search_vector @@ k.query
            WHERE m.user_id = %s AND {current_sql("m")} AND {activity.sql("m")}
            GROUP BY m.id, m.created_at
            HAVING NOT %s OR count(*) = %s
            ORDER BY rank DESC, m.created_at DESC, m.id
            LIMIT %s
            """,
            [*keywords, keywords, user_id, match_all, len(keywords), limit],
        )
        rows = cursor.fetchall()
    memories = Memory.objects.in_bulk([memory_id for memory_id, _, _ in rows])
    return [(memories[memory_id], matched) for memory_id, matched, _ in rows]


def memory_history(*, caller: Caller, memory: Memory) -> QuerySet[MemoryHistory]:
    user_access_check(caller=caller, user_id=memory.user_id, write=False)
    return MemoryHistory.objects.filter(memory_id=memory.id).order_by("created_at", "id")


def memory_versions(*, caller: Caller, memory: Memory) -> list[Memory]:
    """The supersede chain the memory belongs to, oldest first."""
    user_access_check(caller=caller, user_id=memory.user_id, write=False)
    chain = [memory]
    while (older := Memory.objects.filter(superseded_by=chain[0].id).first()) is not None:
        chain.insert(0, older)
    while chain[-1].superseded_by and (
        newer := Memory.objects.filter(pk=chain[-1].superseded_by).first()
    ):
        chain.append(newer)
    return [version for version in chain if version.forgotten_at is None]


@dataclass(frozen=True)
class UserHeld:
    memory_ids: list[uuid.UUID]  # all of the user's, forgotten ones too
    # By table, in the order the purge deletes them (what refers to a memory or a session
    # before it; the graph's edges before its entities).
    tables: dict[str, QuerySet]


def user_held(*, user_id: str) -> UserHeld:
    """Every row held about one end user: the export reads them, the purge deletes them. Rows
    of other tables are matched through the user's memory and session ids, so another user's
    rows are never reached even where contents look alike."""
    memory_ids = list(Memory.objects.filter(user_id=user_id).values_list("id", flat=True))
    session_ids = list(
        ConversationSession.objects.filter(user_id=user_id).values_list("id", flat=True)
    )
    return UserHeld(
        memory_ids,
        {
            "graph_edges": GraphEdge.objects.filter(user_id=user_id),
            "graph_nodes": GraphNode.objects.filter(user_id=user_id),
            "memory_sources": MemorySource.objects.filter(
                Q(memory_id__in=memory_ids) | Q(session_id__in=session_ids)
            ),
            "memory_links": MemoryLink.objects.filter(user_id=user_id),
            "memory_history": MemoryHistory.objects.filter(memory_id__in=memory_ids),
            "memories": Memory.objects.filter(user_id=user_id),
            "conversations": ConversationMessage.objects.filter(session_id__in=session_ids),
            "conversation_sessions": ConversationSession.objects.filter(id__in=session_ids),
            "forget_requests": ForgetRequest.objects.filter(user_id=user_id),
        },
    )


def user_export(*, caller: Caller, user_id: str) -> dict[str, Any]:
    """Everything held about one end user (the data-access right). Of a forgotten memory only
    the record is held: its id, type, times and the request that forgot it. From a read
    replica where one may answer (core/db/replicas.py)."""
    user_access_check(caller=caller, user_id=user_id, write=False)
    return lagging_read(caller_name=caller.name, read=lambda: _exported(user_id))


def _exported(user_id: str) -> dict[str, Any]:
    held = user_held(user_id=user_id)
    tables = held.tables
    memories = list(tables["memories"].order_by("created_at", "id"))
    export = {
        "memories": [memory for memory in memories if memory.forgotten_at is None],
        "history": list(tables["memory_history"].order_by("created_at", "id")),
        "sources": list(tables["memory_sources"].order_by("created_at")),
        "links": list(tables["memory_links"].order_by("created_at", "id")),
        "sessions": list(tables["conversation_sessions"].order_by("started_at")),
        "messages": list(tables["conversations"].defer("search_vector").order_by("created_at")),
        "forgotten": [memory for memory in memories if memory.forgotten_at is not None],
        "forget_requests": list(tables["forget_requests"].order_by("created_at", "id")),
        "entities": list(tables["graph_nodes"].order_by("created_at", "id")),
        "edges": list(tables["graph_edges"].order_by("valid_at", "created_at", "id")),
    }
    for _, rows in user_data_exported.send(
        sender=Memory, user_id=user_id, memory_ids=held.memory_ids
    ):
        export |= rows
    return export
