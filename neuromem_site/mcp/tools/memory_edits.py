"""The tools on one memory, named by `memory_id` or by `user_id` and `key`: change it, replace
or end it, read its history and versions, set and remove its links. Each runs the operation its
REST route (`/memories/{id}/…`) runs, on the memory the route's path would name."""

from collections.abc import Callable, Mapping
from typing import Any

from rest_framework import serializers

from core.access import Caller
from core.risk import RiskLevel
from memories.api import operations as memory_ops
from memories.api.operations import memory_lookup
from memories.api.serializers.memories import (
    LinkInput,
    LinkRemoveInput,
    MemoryInvalidateInput,
    MemoryLookupInput,
    MemorySupersedeInput,
    MemoryUpdateInput,
)
from memories.models import Memory
from neuromem_site.api.serializers import validated_input
from neuromem_site.mcp.schema import object_schema, serializer_schema, with_seed_names
from neuromem_site.mcp.tools.base import McpTool, created_data, split, with_properties
from neuromem_site.mcp.tools.calls import errors_name_the_aliases_given
from neuromem_site.mcp.tools.memories import ADDRESSING, LOOKUP

LOOKUP_SCHEMA = serializer_schema(MemoryLookupInput, LOOKUP)
# memory_update's name for the PATCH body's `key`: `key` names the memory, as on every tool.
UPDATE_NAMES = {"new_key": "key"}
# Seed 004's name for a new key (POST /update_memory_key), seed name → ours.
UPDATE_ALIASES = {"newKey": "new_key"}
VERSION = (
    "The memory's `version` as you read it: a stale one is a CONFLICT naming "
    "`current_version`, and nothing changes."
)


def addressed(*, caller: Caller, params: Mapping[str, Any]) -> tuple[Memory, dict[str, Any]]:
    """The memory LOOKUP's arguments name (found as memory_get finds it), and the others.
    `memory_id` with `key` is refused: the two could name two memories (and memory_update's
    new key is `new_key`)."""
    lookup, rest = split(params, LOOKUP)
    if "memory_id" in lookup and "key" in lookup:
        raise serializers.ValidationError(
            {"key": ["Give `memory_id`, or `user_id` and `key`, not both."]}
        )
    return memory_lookup(caller=caller, data=validated_input(MemoryLookupInput, lookup)), rest


def on_memory(operation: Callable[..., Any]) -> Callable[..., Any]:
    """`operation(caller=, memory=)` run on a tool's arguments."""

    def run(*, caller: Caller, params: Mapping[str, Any]) -> Any:
        memory, _ = addressed(caller=caller, params=params)
        return operation(caller=caller, memory=memory)

    return run


def on_memory_with_params(
    operation: Callable[..., Any], renamed: Mapping[str, str] | None = None
) -> Callable[..., Any]:
    """`operation(caller=, memory=, params=)` run on a tool's arguments: the memory they name,
    and the others as the route's body or query string (`renamed`: the tool's name → the
    route's; an error names the tool's)."""
    renamed = renamed or {}

    def run(*, caller: Caller, params: Mapping[str, Any]) -> Any:
        memory, rest = addressed(caller=caller, params=params)
        with errors_name_the_aliases_given(rest, renamed):
            route_params = {renamed.get(name, name): value for name, value in rest.items()}
            return operation(caller=caller, memory=memory, params=route_params)

    return run


def addressed_schema(
    input_class: type[serializers.Serializer],
    overrides: Mapping[str, str | dict[str, Any]],
    renamed: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The arguments of a tool on one memory: LOOKUP's, then those of the route's
    `input_class` (`renamed`: the tool's name → the route's)."""
    schema = serializer_schema(input_class, overrides)
    tool_names = {route: tool for tool, route in (renamed or {}).items()}
    return with_properties(
        object_schema(
            {tool_names.get(name, name): value for name, value in schema["properties"].items()},
            required=[tool_names.get(name, name) for name in schema.get("required", [])],
        ),
        LOOKUP_SCHEMA["properties"],
    )


MEMORY_EDIT_TOOLS = [
    McpTool(
        name="memory_update",
        title="Change a memory",
        description=(
            "Change a current memory at the `version` you read: new `content` makes a new "
            "version (as memory_supersede; the answer is the new memory, with the key and "
            "links), the other fields change in place and bump `version`. A stale `version` "
            "is a CONFLICT (`field` version, `current_version`), and so is a memory no longer "
            "current (superseded or deleted); a `new_key` another current memory holds is a "
            "CONFLICT on `new_key`. Nothing is written when it fails. Answers the memory as it "
            "is now. " + ADDRESSING
        ),
        operation=on_memory_with_params(memory_ops.memory_update_result, UPDATE_NAMES),
        input_schema=with_seed_names(
            addressed_schema(
                MemoryUpdateInput,
                {
                    "version": VERSION,
                    "content": "New content: a new version replaces the memory.",
                    "memory_type": "fact, episodic, trait or document (legacy: general → fact, "
                    "insight → trait at stage trend).",
                    "metadata": "A JSON object replacing the memory's metadata.",
                    "importance": "0–1: how much the memory matters.",
                    "valid_at": "Since when it is true.",
                    "key": "A new key for the memory (unique among the user's current "
                    "memories); null removes its key. (`key` names the memory to change.)",
                },
                UPDATE_NAMES,
            ),
            UPDATE_ALIASES,
        ),
        read_only=False,
        risk=RiskLevel.HIGH,
        # In-place changes overwrite; a repeat with the same `version` is stale: no effect.
        destructive=True,
        idempotent=True,
        aliases=UPDATE_ALIASES,
    ),
    McpTool(
        name="memory_supersede",
        title="Replace a memory with a new version",
        description=(
            "A new version of a current memory, with new `content` (and `metadata`, default "
            "the old): it takes the key and the links, and `version` + 1; the old one stays as "
            "an earlier version (`superseded_by`, memory_versions; `as_of` before now still "
            "finds it). With `version`, a stale one is a CONFLICT; a memory no longer current "
            "is a CONFLICT. Answers the new version. " + ADDRESSING
        ),
        operation=on_memory_with_params(memory_ops.memory_supersede_result),
        input_schema=addressed_schema(
            MemorySupersedeInput,
            {
                "content": "The new version's content.",
                "version": "Optional: " + VERSION,
                "metadata": "The new version's metadata (default: the old one's).",
            },
        ),
        read_only=False,
        risk=RiskLevel.HIGH,
    ),
    McpTool(
        name="memory_invalidate",
        title="Say a memory stopped being true",
        description=(
            "The fact stopped being true at `invalid_at` (default now): the memory leaves "
            "current reads and recall, and a read `as_of` an earlier instant still finds it. A "
            "memory no longer current is a CONFLICT. Answers the memory. " + ADDRESSING
        ),
        operation=on_memory_with_params(memory_ops.memory_invalidate_result),
        input_schema=addressed_schema(
            MemoryInvalidateInput, {"invalid_at": "When it stopped being true (default: now)."}
        ),
        read_only=False,
        risk=RiskLevel.HIGH,
        # It ends the memory as memory_delete does; a repeat is a CONFLICT: no effect.
        destructive=True,
        idempotent=True,
    ),
    McpTool(
        name="memory_history",
        title="A memory's history",
        description=(
            "The memory's audit events, oldest first, each as id, memory_id, memory_type, "
            "event (ADD, UPDATE, SUPERSEDE, DELETE, STAGE_CHANGE), old_content, new_content, "
            "old_metadata, new_metadata, actor (the API client, or system, reflection, user) "
            "and created_at. " + ADDRESSING
        ),
        operation=on_memory(memory_ops.memory_history_result),
        input_schema=LOOKUP_SCHEMA,
        read_only=True,
        risk=RiskLevel.LOW,
    ),
    McpTool(
        name="memory_versions",
        title="A memory's versions",
        description=(
            "The whole supersede chain the memory belongs to, oldest first: each version as "
            "memory_get answers a memory (without links); the current one has no "
            "`expired_at`. " + ADDRESSING
        ),
        operation=on_memory(memory_ops.memory_versions_result),
        input_schema=LOOKUP_SCHEMA,
        read_only=True,
        risk=RiskLevel.LOW,
    ),
    McpTool(
        name="memory_link_set",
        title="Link a memory to another",
        description=(
            "A directed link from the memory to another current memory of the same end user "
            "(`target_id`), weighted 0–1; one link per pair, so setting it again changes its "
            "weight. A link to itself, to another user's memory or to one that is gone is a "
            "VALIDATION_ERROR on `target_id`; a memory no longer current is a CONFLICT. "
            "Answers the link as memory_links lists it. " + ADDRESSING
        ),
        operation=on_memory_with_params(created_data(memory_ops.memory_link_set_result)),
        input_schema=addressed_schema(
            LinkInput,
            {
                "target_id": "The memory to link to (a current memory of the same user).",
                "weight": "0–1: how strongly the two are related.",
            },
        ),
        read_only=False,
        risk=RiskLevel.HIGH,
        # A new weight replaces the old; the same call again changes nothing.
        destructive=True,
        idempotent=True,
    ),
    McpTool(
        name="memory_link_remove",
        title="Remove a memory's link",
        description=(
            "Remove the link from the memory to `target_id`; NOT_FOUND when there is none. "
            "Answers `source_id` and `target_id`. " + ADDRESSING
        ),
        operation=on_memory_with_params(memory_ops.memory_link_remove_result),
        input_schema=addressed_schema(LinkRemoveInput, {"target_id": "The memory linked to."}),
        read_only=False,
        risk=RiskLevel.HIGH,
        destructive=True,
        idempotent=True,
    ),
]
