"""The memory operations the HTTP API and the MCP server share (neuromem_site/mcp/): each one
calls the selectors and services and answers the route's `data` (or, for a write, a result
that says what happened: the REST view chooses its status from it). One path, so both give the
same answers, defaults and errors. Nothing here knows of HTTP.

Most take the `Caller` and the raw parameters (a query string, a JSON body, MCP arguments) and
validate them with the route's serializer. The operations on an end user the request's URL may
also name (add, search, recall) take `data`, already validated by the route's serializer
(`validated_input`): the REST view checks that user against its URL
(neuromem_site/api/permissions.py) between the two. The operations on the memory a route's path
names take that memory (the view finds it by the path's id, MCP by `memory_id` or `user_id` and
`key`) and the rest of the parameters; those on a session take its id. Errors are raised: DRF's
validation errors and the domain's (core/errors.py), which the API's envelope and the MCP server
map alike.
"""

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rest_framework import serializers

from core.access import Caller, every_user_check
from core.errors import NotFound
from memories.access_counts import accesses_record
from memories.api.serializers.graph import (
    EdgeRecordOutput,
    EntityDetailOutput,
    EntityLookupInput,
    EntityOutput,
    UserEntitiesInput,
)
from memories.api.serializers.memories import (
    BulkReadInput,
    HistoryOutput,
    LinkInput,
    LinkOutput,
    LinkRemoveInput,
    MemoryGetInput,
    MemoryInvalidateInput,
    MemoryLookupInput,
    MemoryOutput,
    MemorySupersedeInput,
    MemoryUpdateInput,
)
from memories.api.serializers.recall import CompactRecallOutput, RecallOutput, SearchHitOutput
from memories.api.serializers.users import (
    ForgetRequestOutput,
    ForgottenRecordOutput,
    MessageInput,
    MessageOutput,
    SessionOutput,
    UserForgetInput,
)
from memories.api.stats import MemoryStatsInput, MemoryStatsOutput, stats_computed, stats_data
from memories.forgetting.plan import REASONS
from memories.graph.selectors import entities_list, entity_edges, entity_get
from memories.hooks import trait_belief
from memories.ingest import session_end, session_get, session_message_add, session_open
from memories.links import BulkLimits, BulkRead, link_view, memory_bulk_read, memory_links
from memories.models import ForgetVia, Memory, MemoryType
from memories.recall import RecallHit, RecallQuery, memories_recall
from memories.selectors import (
    activity_filter,
    memory_get,
    memory_get_by_key,
    memory_history,
    memory_versions,
    user_export,
)
from memories.services import (
    MemoryInput,
    Operation,
    WriteResult,
    memory_add,
    memory_delete,
    memory_invalidate,
    memory_link_remove,
    memory_link_set,
    memory_supersede,
    memory_update,
)
from memories.services.forgetting import ForgetOutcome, user_forget
from neuromem_site.api.serializers import validated_input


def memory_lookup(*, caller: Caller, data: Mapping[str, Any]) -> Memory:
    """The memory validated lookup parameters name: by id (one of `user_id`'s, when that is
    given too), or by user and key."""
    if data.get("memory_id") is None:
        return memory_get_by_key(caller=caller, user_id=data["user_id"], key=data["key"])
    memory = memory_get(caller=caller, memory_id=data["memory_id"])
    if data.get("user_id") not in (None, memory.user_id):
        raise NotFound(f"Memory '{memory.id}' not found for user '{data['user_id']}'.")
    return memory


def links_data(memory: Memory, *, sort_links: bool) -> list[dict]:
    """The memory's links as GET /memories/{id}/ answers them (its `links`)."""
    return LinkOutput(memory_links(memory=memory, sort_links=sort_links), many=True).data


def memory_with_links(memory: Memory, *, sort_links: bool, include_embedding: bool = False) -> dict:
    data = MemoryOutput(memory, context={"include_embedding": include_embedding}).data
    data["links"] = links_data(memory, sort_links=sort_links)
    return data


def memory_get_result(*, caller: Caller, params: Mapping[str, Any]) -> dict:
    """GET /memories/{id}/: the memory with its links (in order unless `sort_links` is false)."""
    data = validated_input(MemoryGetInput, params)
    memory = memory_lookup(caller=caller, data=data)
    return memory_with_links(
        memory, sort_links=data["sort_links"], include_embedding=data.get("include") == "embedding"
    )


def memory_links_result(*, caller: Caller, params: Mapping[str, Any]) -> list[dict]:
    """MCP's memory_links: the `links` of GET /memories/{id}/, alone (`sort_links` alike)."""
    data = validated_input(MemoryGetInput, params)
    return links_data(memory_lookup(caller=caller, data=data), sort_links=data["sort_links"])


def bulk_read(*, caller: Caller, params: Mapping[str, Any]) -> BulkRead:
    """The depth-first read from the memory `params` name; the start counts as an access,
    every memory reached as a traversal (inputs of the activity score)."""
    data = validated_input(BulkReadInput, params)
    memory = memory_lookup(caller=caller, data=data)
    read = memory_bulk_read(
        memory=memory,
        limits=BulkLimits(depth=data["depth"], breadth=data["breadth"], total=data["total"]),
    )
    accesses_record(
        memory_ids=[memory.id], traversed_ids=[reached.memory.id for reached in read.reached]
    )
    return read


def memory_bulk_result(*, caller: Caller, params: Mapping[str, Any]) -> dict:
    """GET /memories/{id}/bulk/, in the key-addressed bulk read's camelCase shape."""
    return bulk_shaped(
        bulk_read(caller=caller, params=params),
        target=lambda memory: memory_with_links(memory, sort_links=True),
        reached=lambda memory: MemoryOutput(memory).data,
    )


def bulk_shaped(
    read: BulkRead, *, target: Callable[[Memory], dict], reached: Callable[[Memory], dict]
) -> dict:
    """A bulk read in the camelCase shape both bulk routes answer (`targetMemory`,
    `associatedMemories`, `metadata`), each memory written by `target` or `reached`."""
    return {
        "targetMemory": target(read.target),
        "associatedMemories": [
            {
                **reached(step.memory),
                "retrievalInfo": {
                    "depth": step.depth,
                    "weight": step.weight,
                    "path": step.path,
                },
            }
            for step in read.reached
        ],
        "metadata": {
            "depthReached": read.depth_reached,
            "totalRetrieved": len(read.reached),
            "duplicatesSkipped": read.duplicates_skipped,
            "executionTimeMs": read.execution_ms,
        },
    }


def write_result(result: WriteResult) -> dict[str, Any]:
    memory = MemoryOutput(result.memory).data
    data = {"operation": result.operation, "memory": memory, "redactions": memory["redactions"]}
    if result.superseded is not None:
        data["superseded"] = str(result.superseded.id)
    return data


@dataclass(frozen=True)
class Created:
    """What a write that may find its result held already answers: its `data`, and whether it
    made something (the REST route answers 201, else 200)."""

    data: dict[str, Any]
    created: bool


def memory_add_result(*, caller: Caller, data: Mapping[str, Any]) -> Created:
    """POST /memories/, `data` validated by MemoryCreateInput (a NOOP made nothing: `data`
    answers the memory held)."""
    result = memory_add(item=MemoryInput(**data), caller=caller)
    return Created(data=write_result(result), created=result.operation != Operation.NOOP)


def memory_delete_result(*, caller: Caller, params: Mapping[str, Any]) -> dict:
    """DELETE /memories/{id}/: soft delete; the memory, now expired."""
    data = validated_input(MemoryLookupInput, params)
    memory = memory_lookup(caller=caller, data=data)
    return MemoryOutput(memory_delete(memory=memory, caller=caller)).data


def memory_update_result(*, caller: Caller, memory: Memory, params: Mapping[str, Any]) -> dict:
    """PATCH /memories/{id}/: at `version`, new content makes a new version and the other
    fields change in place; the memory as it is now."""
    data = validated_input(MemoryUpdateInput, params)
    version = data.pop("version")
    return MemoryOutput(
        memory_update(memory=memory, version=version, changes=data, caller=caller)
    ).data


def memory_supersede_result(*, caller: Caller, memory: Memory, params: Mapping[str, Any]) -> dict:
    """POST /memories/{id}/supersede/: the new version."""
    data = validated_input(MemorySupersedeInput, params)
    successor = memory_supersede(
        memory=memory,
        content=data["content"],
        metadata=data.get("metadata"),
        expected_version=data.get("version"),
        caller=caller,
    )
    return MemoryOutput(successor).data


def memory_invalidate_result(*, caller: Caller, memory: Memory, params: Mapping[str, Any]) -> dict:
    """POST /memories/{id}/invalidate/: the memory, true until `invalid_at` (default now)."""
    data = validated_input(MemoryInvalidateInput, params)
    invalidated = memory_invalidate(memory=memory, invalid_at=data.get("invalid_at"), caller=caller)
    return MemoryOutput(invalidated).data


def memory_history_result(*, caller: Caller, memory: Memory) -> list[dict]:
    """GET /memories/{id}/history/: the memory's audit events, oldest first."""
    return HistoryOutput(memory_history(caller=caller, memory=memory), many=True).data


def memory_versions_result(*, caller: Caller, memory: Memory) -> list[dict]:
    """GET /memories/{id}/versions/: the supersede chain the memory belongs to, oldest first."""
    return MemoryOutput(memory_versions(caller=caller, memory=memory), many=True).data


def memory_link_set_result(*, caller: Caller, memory: Memory, params: Mapping[str, Any]) -> Created:
    """POST /memories/{id}/links/: the link from the memory to `target_id`, new or with its new
    weight."""
    data = validated_input(LinkInput, params)
    link, created = memory_link_set(
        source=memory, target_id=data["target_id"], weight=data["weight"], caller=caller
    )
    return Created(data=LinkOutput(link_view(link)).data, created=created)


def memory_link_remove_result(*, caller: Caller, memory: Memory, params: Mapping[str, Any]) -> dict:
    """DELETE /memories/{id}/links/?target_id=: the link removed, as its two ends."""
    data = validated_input(LinkRemoveInput, params)
    memory_link_remove(source=memory, target_id=data["target_id"], caller=caller)
    return {"source_id": str(memory.id), "target_id": str(data["target_id"])}


def recalled(*, caller: Caller, query: RecallQuery) -> list[RecallHit]:
    """Recall for `caller` (its own users only); every hit counts as an access."""
    hits = memories_recall(caller=caller, request=query)
    accesses_record(memory_ids=[hit.memory.id for hit in hits])
    return hits


def search_hits(
    *, caller: Caller, data: Mapping[str, Any], answering: bool = False
) -> list[RecallHit]:
    """/search/'s hits (`data` validated by SearchInput): hybrid recall among the memories the
    activity filters let through, by relevance, or (`sort_by=score`) by activity score.
    `answering`: under the question rules, as recall (the key-addressed /search, which its
    clients recall by)."""
    memory_type = data.get("memory_type")
    query = RecallQuery(
        user_id=data["user_id"],
        query=data["q"],
        limit=data["limit"],
        memory_types=(memory_type,) if memory_type else tuple(MemoryType.values),
        activity=activity_filter(data),
        answer_rules=answering,
    )
    hits = recalled(caller=caller, query=query)
    descending = data["sort_order"] == "desc"
    if data["sort_by"] == "score":
        return sorted(hits, key=lambda hit: hit.memory.score, reverse=descending)
    return hits if descending else hits[::-1]


def memory_search_result(*, caller: Caller, data: Mapping[str, Any]) -> list[dict]:
    """GET /search/, `data` validated by SearchInput."""
    return SearchHitOutput(search_hits(caller=caller, data=data), many=True).data


def memory_recall_result(*, caller: Caller, data: Mapping[str, Any]) -> dict:
    """POST /recall/, `data` validated by RecallInput: ranked memories, and the user's
    believed traits for a prompt."""
    query = RecallQuery(
        user_id=data["user_id"],
        query=data["query"],
        limit=data["limit"],
        memory_types=tuple(data.get("memory_types") or MemoryType.values),
        as_of=data.get("as_of"),
    )
    hits = recalled(caller=caller, query=query)
    traits = (
        trait_belief().believed(caller=caller, user_id=query.user_id)
        if data["include_traits"]
        else []
    )
    output = CompactRecallOutput if data["fields"] == "compact" else RecallOutput
    return output({"fields": data["fields"], "merged": hits, "traits": traits}).data


def memory_stats_result(*, caller: Caller, params: Mapping[str, Any]) -> dict:
    """MCP's memory_stats: what GET /memories/stats/ answers in JSON (`both` adds the CSV text;
    `csv` alone is no JSON). Without `user_id`, every end user: staff clients only, as on the
    route."""
    data = validated_input(MemoryStatsInput, params)
    if data["export_format"] == "csv":
        raise serializers.ValidationError(
            {"export_format": ['"json" or "both": a tool answers JSON.']}
        )
    if data.get("user_id") is None:
        every_user_check(caller=caller)
    return MemoryStatsOutput(stats_data(stats_computed(caller=caller, params=data), data)).data


def session_open_result(*, caller: Caller, data: Mapping[str, Any]) -> dict:
    """POST /sessions/, `data` validated by SessionCreateInput: the new session."""
    session = session_open(caller=caller, user_id=data["user_id"], metadata=data["metadata"])
    return SessionOutput(session).data


def session_message_result(
    *, caller: Caller, session_id: uuid.UUID, params: Mapping[str, Any]
) -> dict:
    """POST /sessions/{id}/messages/: the message stored, the memories it wrote, the outcome of
    each request to forget in it, and what was redacted from it."""
    session = session_get(caller=caller, session_id=session_id)
    data = validated_input(MessageInput, params)
    added = session_message_add(
        session=session,
        role=data["role"],
        content=data["content"],
        caller=caller,
        sent_at=data.get("sent_at"),
    )
    return {
        "message": MessageOutput(added.message).data,
        "memories": [write_result(result) for result in added.memories],
        "forget": [forget_outcome_data(outcome) for outcome in added.forgets],
        "redactions": dict(added.redactions),
    }


def session_end_result(*, caller: Caller, session_id: uuid.UUID) -> dict:
    """POST /sessions/{id}/end/: the session, ended (ending it again changes nothing)."""
    session = session_get(caller=caller, session_id=session_id)
    return SessionOutput(session_end(session=session, caller=caller)).data


def user_forget_result(
    *, caller: Caller, params: Mapping[str, Any], via: str = ForgetVia.MCP
) -> dict:
    """POST /users/{user_id}/forget/ (and MCP's memory_forget): forget a topic or memories by
    id, or (`dry_run`) say what that would forget."""
    # The body's fields are user_forget's arguments; one left out takes the service's default.
    data = validated_input(UserForgetInput, params)
    return forget_outcome_data(user_forget(caller=caller, via=via, **data))


def forget_outcome_data(outcome: ForgetOutcome) -> dict[str, Any]:
    """The outcome as the API, MCP and ingest answer it (ForgetOutput): what was (or, in a dry
    run, would be) forgotten, by id; a dry run shows the content too, the real run never."""
    memories = []
    for erasure in outcome.plan.memories.values():
        item: dict[str, Any] = {
            "id": str(erasure.memory.id),
            "memory_type": erasure.memory.memory_type,
            "erased": "whole" if erasure.whole else "part",
        }
        if outcome.dry_run:
            item["content"] = erasure.memory.content
            if not erasure.whole:
                item["content_after"] = erasure.content_after
        memories.append(item)
    messages = []
    for erasure in outcome.plan.messages.values():
        message = {"id": str(erasure.message.id), "session_id": str(erasure.message.session_id)}
        if outcome.dry_run:
            message["content_after"] = erasure.content_after
        messages.append(message)
    reason = outcome.plan.reason
    return {
        "id": None if outcome.request is None else str(outcome.request.id),
        "user_id": outcome.plan.user_id,
        "dry_run": outcome.dry_run,
        "memories": memories,
        "messages": messages,
        "traits_reweighed": [str(trait) for trait in outcome.traits_reweighed],
        "traits_dissolved": [str(trait) for trait in outcome.traits_dissolved],
        "reason": None if reason is None else {"code": reason, "message": REASONS[reason]},
    }


def attributes(objects: Iterable[Any], *names: str) -> list[dict[str, Any]]:
    """Each object as a dict of the attributes `names`."""
    return [{name: getattr(obj, name) for name in names} for obj in objects]


def user_export_result(*, caller: Caller, user_id: str) -> dict:
    """GET /users/{user_id}/export/ (and the admin's download): everything held about the
    user."""
    export = user_export(caller=caller, user_id=user_id)
    return {
        "user_id": user_id,
        "memories": MemoryOutput(export["memories"], many=True).data,
        "history": HistoryOutput(export["history"], many=True).data,
        "evidence": attributes(
            export["evidence"],
            "id",
            "trait_id",
            "memory_id",
            "evidence_type",
            "quality",
            "created_at",
        ),
        "sources": attributes(
            export["sources"], "memory_id", "session_id", "conversation_id", "created_at"
        ),
        "links": attributes(export["links"], "source_id", "target_id", "weight", "created_at"),
        "sessions": SessionOutput(export["sessions"], many=True).data,
        "messages": MessageOutput(export["messages"], many=True).data,
        "cycles": attributes(
            export["cycles"], "id", "trigger_type", "status", "started_at", "completed_at"
        ),
        "consistency_issues": attributes(
            export["consistency_issues"],
            "id",
            "check_name",
            "table_name",
            "row_id",
            "missing_id",
            "first_seen_at",
            "last_seen_at",
            "resolved_at",
        ),
        "forgotten": ForgottenRecordOutput(export["forgotten"], many=True).data,
        "forget_requests": ForgetRequestOutput(export["forget_requests"], many=True).data,
        "entities": EntityOutput(export["entities"], many=True).data,
        "edges": EdgeRecordOutput(export["edges"], many=True).data,
    }


def entity_detail_data(*, caller: Caller, data: Mapping[str, Any]) -> dict:
    """The entity `data` names (user_id, entity_id; validated), with its edges as known at
    `as_of`."""
    as_of = data.get("as_of")
    node = entity_get(
        caller=caller, user_id=data["user_id"], entity_id=data["entity_id"], as_of=as_of
    )
    edges = entity_edges(node=node, as_of=as_of)
    return EntityDetailOutput(node, context={"edges": edges}).data


def entity_get_result(*, caller: Caller, params: Mapping[str, Any]) -> dict:
    """GET /users/{user_id}/entities/{entity_id}/: the entity with its edges, current and
    past."""
    return entity_detail_data(caller=caller, data=validated_input(EntityLookupInput, params))


def user_entities_result(*, caller: Caller, params: Mapping[str, Any]) -> Any:
    """MCP's memory_entities: with `entity_id`, the entity as its REST route answers it; else
    the user's first `limit` entities, as the REST list's first page of that size."""
    data = validated_input(UserEntitiesInput, params)
    if data.get("entity_id") is not None:
        return entity_detail_data(caller=caller, data=data)
    nodes = entities_list(caller=caller, user_id=data["user_id"], as_of=data.get("as_of"))
    return EntityOutput(nodes[: data["limit"]], many=True).data
