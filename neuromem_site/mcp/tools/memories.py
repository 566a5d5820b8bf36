"""The tools that read, find, write and forget an end user's memories, and their statistics."""

from typing import Any

from django.conf import settings

from memories.api import operations as memory_ops
from memories.api.serializers.graph import UserEntitiesInput
from memories.api.serializers.memories import (
    BulkReadInput,
    MemoryCreateInput,
    MemoryGetInput,
    MemoryLookupInput,
)
from memories.api.serializers.recall import RecallInput, SearchInput
from memories.api.serializers.users import UserForgetInput
from memories.api.stats import CAMEL_CASE, MemoryStatsInput
from neuromem_site.mcp.schema import serializer_schema
from neuromem_site.mcp.tools.base import (
    USER_ID,
    created_data,
    reading_tool,
    validating,
    writing_tool,
)

LIMIT = {
    "minimum": 1,
    "maximum": settings.RECALL_LIMIT_MAX,
    "description": f"How many results at most (1–{settings.RECALL_LIMIT_MAX}).",
}
# Which memory (MemoryLookupInput): by id, or by user and key.
LOOKUP = {
    "memory_id": "The memory's id.",
    "user_id": "With `key`, instead of `memory_id`: the memory's end user.",
    "key": "With `user_id`: the memory's key (unique among current memories).",
}
ADDRESSING = (
    "Name the memory by `memory_id`, or by `user_id` and `key` (`memory_id` with `key` is "
    "refused; with `user_id`, the memory must be that user's). Another client's memory, or one "
    "that does not exist, is NOT_FOUND."
)
MEMORY_GET_SCHEMA = serializer_schema(
    MemoryGetInput,
    {
        **LOOKUP,
        "sort_links": {
            "type": ["boolean", "string"],
            "enum": [True, False, "true", "false"],
            "default": True,
            "description": "Sort `links` by weight × target score (default), or keep insertion "
            "order (false). Any other value is a VALIDATION_ERROR.",
        },
        "include": "`embedding` to also answer the memory's vector.",
    },
)
# memory_links: memory_get's arguments but `include` (its answer is the links alone).
MEMORY_LINKS_SCHEMA = {
    **MEMORY_GET_SCHEMA,
    "properties": {
        name: value for name, value in MEMORY_GET_SCHEMA["properties"].items() if name != "include"
    },
}
# Seed 004's names for memory_get's arguments, as its MCP example calls it (seed name → ours).
MEMORY_GET_ALIASES = {"sortLinks": "sort_links"}
# Seed 004's names for the statistics' parameters, as GET /api/memories/stats spells them.
STATS_ALIASES = {seed: ours for ours, seed in CAMEL_CASE.items() if seed != ours}


def bulk_limit(name: str, what: str) -> dict[str, Any]:
    default, most = settings.BULK_READ_LIMITS[name]
    return {"minimum": 1, "maximum": most, "description": f"{what} (1–{most}, default {default})."}


MEMORY_TOOLS = [
    reading_tool(
        name="memory_get",
        title="Read a memory",
        description=(
            "One memory (content, type, importance, activity score 0–100 and state, "
            "metadata, validity and version fields) with its `links`: by default sorted by "
            "link weight × target score (a target without a score counts 50), ties by weight, "
            "then key/id; `sort_links: false` keeps the order the links were made in. " + ADDRESSING
        ),
        operation=memory_ops.memory_get_result,
        input_schema=MEMORY_GET_SCHEMA,
        aliases=MEMORY_GET_ALIASES,
    ),
    reading_tool(
        name="memory_search",
        title="Search memories",
        description=(
            "Hybrid (vector + full-text) search over one end user's current memories, best "
            "first: each hit as id, content, memory_type, metadata and score. For building "
            "a prompt prefer memory_recall, which also answers the user's traits."
        ),
        operation=validating(SearchInput, memory_ops.memory_search_result),
        input_schema=serializer_schema(
            SearchInput,
            {
                "user_id": USER_ID,
                "q": "What to search for, in natural language or keywords.",
                "limit": LIMIT,
                "memory_type": "Only memories of this type.",
                "state": {
                    "description": "Only memories in these states: a comma list of active, "
                    "cold, deprecated (search reads current memories)."
                },
                "score_min": "Lowest activity score (0–100).",
                "score_max": "Highest activity score (0–100).",
                "sort_order": "desc: best first (default); asc: reversed.",
            },
        ),
    ),
    writing_tool(
        name="memory_add",
        title="Remember something",
        description=(
            "Write one memory for an end user. `operation` in the answer says what happened: "
            "ADD (a new memory), NOOP (already held: the existing memory is answered) or "
            "UPDATE (a near-duplicate current memory was superseded; `superseded` is its id). "
            "Writing for a user_id outside this client's prefixes is FORBIDDEN."
        ),
        operation=validating(MemoryCreateInput, created_data(memory_ops.memory_add_result)),
        input_schema=serializer_schema(
            MemoryCreateInput,
            {
                "user_id": "The end user the memory is about.",
                "content": "The memory itself, in plain language.",
                "memory_type": {
                    "description": "fact, episodic, trait or document (legacy: general → fact, "
                    "insight → trait at stage trend)."
                },
                "metadata": "Free JSON object kept with the memory.",
                "importance": "0–1: how much the memory matters.",
                "valid_at": "Since when it is true (default: now).",
                "key": "A name to address the memory by (unique per user).",
                "embedding": "Your own vector; normally omitted (NeuroMem embeds).",
                "session_id": "The conversation session it came from.",
                "source_episode_ids": "Episodic memories it was derived from.",
            },
        ),
        idempotent=True,
    ),
    reading_tool(
        name="bulk_read_memory",
        title="Read a memory and what it links to",
        description=(
            "Depth-first read from one memory through its links: at most `breadth` links per "
            "level in link order (weight × target score), down to `depth`, at most `total` "
            "memories. Answers `targetMemory`, `associatedMemories` (each with "
            "`retrievalInfo` {depth, weight, path}) and `metadata` {depthReached, "
            "totalRetrieved, duplicatesSkipped, executionTimeMs}. A value out of range is a "
            "VALIDATION_ERROR naming `field`, `minAllowed`/`maxAllowed` and `provided`. "
            + ADDRESSING
        ),
        operation=memory_ops.memory_bulk_result,
        input_schema=serializer_schema(
            BulkReadInput,
            {
                **LOOKUP,
                "depth": bulk_limit("depth", "How many links deep to follow"),
                "breadth": bulk_limit("breadth", "How many links to follow from each memory"),
                "total": bulk_limit("total", "How many associated memories at most"),
            },
        ),
    ),
    reading_tool(
        name="memory_recall",
        title="Recall for a prompt",
        description=(
            "What to put in an agent's context about an end user: `merged`, the memories "
            "that match `query` ranked by relevance (reciprocal rank fusion of vector and "
            "full-text ranks) boosted by recency, importance and trait stage, best first; "
            "and `traits`, the user's active traits. `fields: compact` answers each hit as "
            "id, content, memory_type, valid_at and score only."
        ),
        operation=validating(RecallInput, memory_ops.memory_recall_result),
        input_schema=serializer_schema(
            RecallInput,
            {
                "user_id": USER_ID,
                "query": "What the agent is about to talk about.",
                "limit": LIMIT,
                "memory_types": "Only these types (default: all).",
                "as_of": "Recall as the memories stood at this time.",
                "include_traits": "Also answer the user's active traits.",
            },
        ),
    ),
    writing_tool(
        name="memory_forget",
        title="Forget, for good",
        description=(
            'Erase what an end user asked to be forgotten: a `topic` in words ("my home '
            'address", "everything about Alex", "我的病史") or `memory_ids`. Every memory, '
            "older version, history entry and conversation message holding it loses that "
            "content; traits built on it are re-weighed or dissolved; a record of the request "
            "stays (ids and times, never the content). Answers what was forgotten (`memories`,"
            " `messages`), or, when nothing was, `reason`. `dry_run: true` answers what would "
            "be forgotten, with its content, and changes nothing. Forgetting again what is "
            "forgotten forgets nothing more."
        ),
        operation=memory_ops.user_forget_result,
        input_schema=serializer_schema(
            UserForgetInput, {"user_id": "The end user who asked to forget."}
        ),
        destructive=True,
        idempotent=True,
    ),
    writing_tool(
        name="memory_delete",
        title="Retire a memory",
        description=(
            "Soft-delete one memory: it stops being current (`expired_at` is set) and is no "
            "longer recalled; its row and history stay, and a read as of an earlier time "
            "still finds it. To erase content an end user asked to be forgotten, use "
            "memory_forget. Answers the memory as it is now. " + ADDRESSING
        ),
        operation=memory_ops.memory_delete_result,
        input_schema=serializer_schema(MemoryLookupInput, LOOKUP),
        destructive=True,
    ),
    reading_tool(
        name="memory_entities",
        title="An end user's entities",
        description=(
            "The end user's memory graph. Without `entity_id`: their entities (the user, "
            "people, pets, places, organisations, things), each as id, kind, name, role, "
            "aliases and created_at, in the order they became known, at most `limit` (the "
            "first page of GET /users/{user_id}/entities/). With `entity_id`: that entity "
            "with its edges, current and past, oldest first: `outgoing` (its attributes and "
            "relations) and `incoming` (the entities relating to it), each as id, subject, "
            "relation, object (the value, or the other entity {id, kind, name, role}), "
            "valid_at, invalid_at (when it stopped holding), expired_at and memory_ids (the "
            "memories stating it). `as_of` reads the graph as NeuroMem knew it then. Another "
            "client's user, or an entity that is not the user's, is NOT_FOUND."
        ),
        operation=memory_ops.user_entities_result,
        input_schema=serializer_schema(
            UserEntitiesInput,
            {
                "user_id": USER_ID,
                "limit": {
                    "minimum": 1,
                    "maximum": settings.API_MAX_PAGE_SIZE,
                    "description": "How many entities at most "
                    f"(1–{settings.API_MAX_PAGE_SIZE}); ignored with `entity_id`.",
                },
            },
        ),
    ),
    reading_tool(
        name="memory_links",
        title="A memory's links",
        description=(
            "The memory's links to current memories, as memory_get answers them in `links`: "
            "each as target_id, key, weight (0–1), target_score, combined_score (weight × "
            "target score) and created_at; by default sorted by combined score (a target "
            "without a score counts 50), ties by weight, then key/id; `sort_links: false` "
            "keeps the order the links were made in. Set one with memory_link_set, remove one "
            "with memory_link_remove. " + ADDRESSING
        ),
        operation=memory_ops.memory_links_result,
        input_schema=MEMORY_LINKS_SCHEMA,
        aliases=MEMORY_GET_ALIASES,
    ),
    reading_tool(
        name="memory_stats",
        title="Memory statistics",
        description=(
            "How the memories created in a window stand: `counts` per state (total = active "
            f"+ cold + deprecated; active: score ≥ {settings.SCORE_ACTIVE_FROM:g}, cold: from "
            f"{settings.SCORE_COLD_FROM:g}, deprecated: below that; deleted: expired "
            "versions), a score `histogram` of `bin_size`-wide bins, and the "
            "secrets redacted (`redactions`). The window is `from_timestamp`–`to_timestamp` "
            "(epoch milliseconds, both included). For one end user (`user_id`); without it "
            "every end user, which only a staff client may read (others: FORBIDDEN). Answers "
            "from a cache up to `cache_ttl_ms` old (`cached` says so; 0 computes afresh). "
            "`export_format: both` adds the same as CSV text in `csv`. Seed 004's camelCase "
            "names (`fromTimestamp`, `histogramBinSize`, …) are taken too."
        ),
        operation=memory_ops.memory_stats_result,
        input_schema=serializer_schema(
            MemoryStatsInput,
            {
                "export_format": {
                    "enum": ["json", "both"],
                    "description": "`json` (default), or `both`: the JSON with the CSV "
                    "text in `csv` (a tool answers JSON: no `csv` alone).",
                }
            },
        ),
        aliases=STATS_ALIASES,
    ),
]
