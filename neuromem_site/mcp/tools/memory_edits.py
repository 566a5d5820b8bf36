"""The tools on one memory, named by `memory_id` or by `user_id` and `key`: change it, replace
or end it, read its history and versions, set and remove its links. Each runs the operation its
REST route (`/memories/{id}/…`) runs, on the memory the route's path would name."""

from collections.abc import Callable, Mapping
from typing import Any

from rest_framework import serializers

from core.access import Caller
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
from neuromem_site.mcp.schema import object_schema, serializer_schema
from neuromem_site.mcp.tools.base import (
    McpTool,
    created_data,
    reading_tool,
    split,
    with_properties,
    writing_tool,
)
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
    """The memory LOOKUP's arguments name (found as memory_get finds it), and the others
    (memory_update's new key is `new_key`)."""
    lookup, rest = split(params, LOOKUP)
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


def memory_reading_tool(
    *, name: str, title: str, description: str, operation: Callable[..., Any]
) -> McpTool:
    """A tool that reads one memory: LOOKUP's arguments alone, `operation(caller=, memory=)`
    run on the memory they name. `description` is followed by how to name it (ADDRESSING)."""
    return reading_tool(
        name=name,
        title=title,
        description=f"{description} {ADDRESSING}",
        operation=on_memory(operation),
        input_schema=LOOKUP_SCHEMA,
    )


def memory_writing_tool(
    *,
    name: str,
    title: str,
    description: str,
    operation: Callable[..., Any],
    input_class: type[serializers.Serializer],
    arguments: Mapping[str, str | dict[str, Any]],
    renamed: Mapping[str, str] | None = None,
    aliases: Mapping[str, str] | None = None,
    destructive: bool = False,
    idempotent: bool = False,
) -> McpTool:
    """A tool that changes one memory as its route does: `operation(caller=, memory=, params=)`
    run on the memory LOOKUP's arguments name, the others being the route's `input_class`
    (`arguments` describes them, as serializer_schema's overrides; `renamed`: the tool's name
    → the route's; `aliases`: seed 004's names, listed in the schema too). `description` is
    followed by how to name the memory (ADDRESSING)."""
    return writing_tool(
        name=name,
        title=title,
        description=f"{description} {ADDRESSING}",
        operation=on_memory_with_params(operation, renamed),
        input_schema=addressed_schema(input_class, arguments, renamed),
        aliases=aliases,
        destructive=destructive,
        idempotent=idempotent,
    )


MEMORY_EDIT_TOOLS = [
    memory_writing_tool(
        name="memory_update",
        title="Change a memory",
        description=(
            "Change a current memory at the `version` you read: new `content` makes a new "
            "version (as memory_supersede; the answer is the new memory, with the key and "
            "links), the other fields change in place and bump `version`. A stale `version` "
            "is a CONFLICT (`field` version, `current_version`), and so is a memory no longer "
            "current (superseded or deleted); a `new_key` another current memory holds is a "
            "CONFLICT on `new_key`. Nothing is written when it fails. Answers the memory as it "
            "is now."
        ),
        operation=memory_ops.memory_update_result,
        input_class=MemoryUpdateInput,
        arguments={
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
        renamed=UPDATE_NAMES,
        aliases=UPDATE_ALIASES,
        # In-place changes overwrite; a repeat with the same `version` is stale: no effect.
        destructive=True,
        idempotent=True,
    ),
    memory_writing_tool(
        name="memory_supersede",
        title="Replace a memory with a new version",
        description=(
            "A new version of a current memory, with new `content` (and `metadata`, default "
            "the old): it takes the key and the links, and `version` + 1; the old one stays as "
            "an earlier version (`superseded_by`, memory_versions; `as_of` before now still "
            "finds it). With `version`, a stale one is a CONFLICT; a memory no longer current "
            "is a CONFLICT. Answers the new version."
        ),
        operation=memory_ops.memory_supersede_result,
        input_class=MemorySupersedeInput,
        arguments={
            "content": "The new version's content.",
            "version": "Optional: " + VERSION,
            "metadata": "The new version's metadata (default: the old one's).",
        },
    ),
    memory_writing_tool(
        name="memory_invalidate",
        title="Say a memory stopped being true",
        description=(
            "The fact stopped being true at `invalid_at` (default now): the memory leaves "
            "current reads and recall, and a read `as_of` an earlier instant still finds it. A "
            "memory no longer current is a CONFLICT. Answers the memory."
        ),
        operation=memory_ops.memory_invalidate_result,
        input_class=MemoryInvalidateInput,
        arguments={"invalid_at": "When it stopped being true (default: now)."},
        # It ends the memory as memory_delete does; a repeat is a CONFLICT: no effect.
        destructive=True,
        idempotent=True,
    ),
    memory_reading_tool(
        name="memory_history",
        title="A memory's history",
        description=(
            "The memory's audit events, oldest first, each as id, memory_id, memory_type, "
            "event (ADD, UPDATE, SUPERSEDE, DELETE, STAGE_CHANGE), old_content, new_content, "
            "old_metadata, new_metadata, actor (the API client, or system, reflection, user) "
            "and created_at."
        ),
        operation=memory_ops.memory_history_result,
    ),
    memory_reading_tool(
        name="memory_versions",
        title="A memory's versions",
        description=(
            "The whole supersede chain the memory belongs to, oldest first: each version as "
            "memory_get answers a memory (without links); the current one has no "
            "`expired_at`."
        ),
        operation=memory_ops.memory_versions_result,
    ),
    memory_writing_tool(
        name="memory_link_set",
        title="Link a memory to another",
        description=(
            "A directed link from the memory to another current memory of the same end user "
            "(`target_id`), weighted 0–1; one link per pair, so setting it again changes its "
            "weight. A link to itself, to another user's memory or to one that is gone is a "
            "VALIDATION_ERROR on `target_id`; a memory no longer current is a CONFLICT. "
            "Answers the link as memory_links lists it."
        ),
        operation=created_data(memory_ops.memory_link_set_result),
        input_class=LinkInput,
        arguments={
            "target_id": "The memory to link to (a current memory of the same user).",
            "weight": "0–1: how strongly the two are related.",
        },
        # A new weight replaces the old; the same call again changes nothing.
        destructive=True,
        idempotent=True,
    ),
    memory_writing_tool(
        name="memory_link_remove",
        title="Remove a memory's link",
        description=(
            "Remove the link from the memory to `target_id`; NOT_FOUND when there is none. "
            "Answers `source_id` and `target_id`."
        ),
        operation=memory_ops.memory_link_remove_result,
        input_class=LinkRemoveInput,
        arguments={"target_id": "The memory linked to."},
        destructive=True,
        idempotent=True,
    ),
]
