"""What every tool module builds on: the tool's definition, and the adapters that run a route's
operation on a tool's arguments."""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from mcp_types import Tool, ToolAnnotations
from rest_framework import serializers

from core.access import Caller
from core.risk import RiskLevel
from memories.api.operations import Created
from neuromem_site.api.serializers import validated_input
from neuromem_site.mcp.schema import object_schema, with_seed_names

USER_ID = "The end user's id; it must start with one of this client's prefixes."


@dataclass(frozen=True)
class McpTool:
    name: str
    title: str
    description: str
    # The route's operation: fn(*, caller, params) -> data.
    operation: Callable[..., Any]
    input_schema: dict[str, Any]
    read_only: bool
    # What the runtime guardrail lets through while the agent's check failed (core/risk.py).
    risk: RiskLevel
    destructive: bool = False
    idempotent: bool = False
    # The guard's own tool: always callable, or a failed check could not be redone.
    guard_exempt: bool = False
    # Other names the tool takes for its arguments (alias → ours), seed 004's.
    aliases: Mapping[str, str] = field(default_factory=dict)

    def definition(self) -> Tool:
        return Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            annotations=ToolAnnotations(
                title=self.title,
                read_only_hint=self.read_only,
                destructive_hint=None if self.read_only else self.destructive,
                idempotent_hint=None if self.read_only else self.idempotent,
                open_world_hint=False,
            ),
        )


def mcp_tool(
    *, input_schema: dict[str, Any], aliases: Mapping[str, str] | None = None, **fields: Any
) -> McpTool:
    """A McpTool whose seed 004 `aliases` (alias → ours), if any, its schema lists too
    (with_seed_names): a client that checks its arguments against the schema can send them."""
    if aliases:
        input_schema = with_seed_names(input_schema, aliases)
    return McpTool(input_schema=input_schema, aliases=aliases or {}, **fields)


# A tool that only reads is low-risk: the guardrail lets it through while the agent's check failed.
reading_tool = partial(mcp_tool, read_only=True, risk=RiskLevel.LOW)
# A tool that writes is high-risk unless it says otherwise: refused while the check failed. Its
# declaration says whether it is destructive and idempotent (the annotations' hints).
writing_tool = partial(mcp_tool, read_only=False, risk=RiskLevel.HIGH)


def validating(
    input_class: type[serializers.Serializer], operation: Callable[..., Any]
) -> Callable[..., Any]:
    """`operation`, which takes `data` validated by the route's `input_class`, run on a tool's
    arguments (the REST view validates them alike, then checks the user against its URL)."""

    def run(*, caller: Caller, params: Mapping[str, Any]) -> Any:
        return operation(caller=caller, data=validated_input(input_class, params))

    return run


def created_data(operation: Callable[..., Created]) -> Callable[..., Any]:
    """`operation`'s `data` alone: a tool does not carry the route's 201 or 200 (what the
    answer holds says the same, e.g. memory_add's `operation`)."""

    def run(**arguments: Any) -> Any:
        return operation(**arguments).data

    return run


def split(params: Mapping[str, Any], names: Iterable[str]) -> tuple[dict, dict]:
    """`params` as (those named `names`, the others): what a route's path names, and its
    body or query string."""
    named = set(names)
    return (
        {name: value for name, value in params.items() if name in named},
        {name: value for name, value in params.items() if name not in named},
    )


def with_properties(
    schema: dict[str, Any],
    properties: dict[str, dict[str, Any]],
    *,
    required: Sequence[str] = (),
) -> dict[str, Any]:
    """`schema` with `properties` first (the route's path parameters, which its body's
    serializer does not know), `required` among them."""
    return object_schema(
        {**properties, **schema["properties"]},
        required=[*required, *schema.get("required", [])],
    )
