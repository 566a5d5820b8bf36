"""Calling a tool: the guardrail's gate, the arguments checked against its schema and renamed
from seed 004's names, the route's operation run, and its answer (or error object) as JSON text.

A tool answers the JSON text of what the HTTP route puts in the envelope's `data`; on failure it
answers an MCP tool error (`isError: true`) whose text is the JSON of the envelope's `error`
object, the same object the HTTP route answers (docs/mcp.md).
"""

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from rest_framework import serializers
from rest_framework.renderers import JSONRenderer

from core.access import Caller
from evolution.services import GuardScope, guard_gate
from neuromem_site.api.envelope import error_fields_renamed, exception_handler
from neuromem_site.api.serializers import JSON_VALUE_TYPES, not_json_refused
from neuromem_site.mcp.schema import OUTPUT_FORMAT
from neuromem_site.mcp.tools.base import McpTool

# A call with no X-NeuroMem-Agent or -Session: the client's default agent, session "".
DEFAULT_SCOPE = GuardScope()


@dataclass(frozen=True)
class ToolAnswer:
    """A tool's answer: the JSON text of `data`, or of the error object when not `ok`."""

    ok: bool
    text: str


def render(value: Any) -> str:
    """JSON exactly as the HTTP API renders it (DRF's encoder and settings)."""
    return JSONRenderer().render(value).decode()


def error_object(exc: Exception) -> dict[str, Any]:
    """The envelope's `error` for `exc`, as the HTTP API answers it: the API's own exception
    handler (an unexpected exception is logged and answered INTERNAL)."""
    return exception_handler(exc, {}).data["error"]


def tool_call(
    *,
    tool: McpTool,
    caller: Callable[[], Caller],
    arguments: Mapping[str, Any],
    scope: GuardScope = DEFAULT_SCOPE,
) -> ToolAnswer:
    """Run `tool` for whoever `caller()` names, made for `scope`'s agent and session (the
    runtime guardrail's gate first, as for a REST route). Synchronous, on the thread whose
    database connection it uses (a request's, or the stdio server's)."""
    try:
        who = caller()  # first, as HTTP authenticates before it validates
        if not tool.guard_exempt:
            acting_on = agent_acted_on(arguments, tool, scope)
            guard_gate(
                caller=who, scope=scope, action=tool.name, risk=tool.risk, acting_on=acting_on
            )
        # NaN and Infinity, which the MCP SDK's reader takes, refused as the REST parser does.
        not_json_refused(arguments, floats=True)
        arguments = scope_defaults(arguments, tool, scope)
        # A tool's arguments are a JSON object, like a request body: an unknown name is
        # refused as the API refuses an unknown body field (a misspelt `limit` is not ignored).
        unknown = [name for name in arguments if name not in tool.input_schema["properties"]]
        if unknown:
            raise serializers.ValidationError({unknown[0]: ["Unknown field."]})
        arguments_typed_check(arguments, tool.input_schema["properties"])
        with errors_name_the_aliases_given(arguments, tool.aliases):
            data = tool.operation(caller=who, params=our_names(arguments, tool.aliases))
        return ToolAnswer(ok=True, text=render(data))
    except Exception as exc:
        return ToolAnswer(ok=False, text=render(error_object(exc)))


def agent_acted_on(
    arguments: Mapping[str, Any], tool: McpTool, scope: GuardScope
) -> GuardScope | None:
    """The agent a SOUL tool acts on (its `agent_id`, else the one the call is made for), which
    the guardrail gates too: naming another agent in the scope does not get past its guard.
    An `agent_id` that is no valid id is left to the tool's validation, which refuses it."""
    if "agent_id" not in tool.input_schema["properties"]:
        return None
    agent_id = arguments.get("agent_id", scope.agent_id)
    if agent_id is not None and not (
        isinstance(agent_id, int) and not isinstance(agent_id, bool) and 1 <= agent_id < 2**63
    ):
        return None
    return GuardScope(agent_id=agent_id, session=scope.session)


def arguments_typed_check(arguments: Mapping[str, Any], properties: Mapping[str, Any]) -> None:
    """Each argument of the JSON type its schema declares, as a request body's field must be
    (JSON_TYPES): the tools that share a route's query-string serializer would otherwise read
    the number 123 as the text "123", where the route only ever receives text."""
    for name, value in arguments.items():
        declared = properties[name].get("type")
        if declared is None:
            continue
        types = [declared] if isinstance(declared, str) else declared
        if not any(JSON_VALUE_TYPES[kind][0](value) for kind in types):
            raise serializers.ValidationError({name: [JSON_VALUE_TYPES[types[0]][1]]})


def scope_defaults(arguments: Mapping[str, Any], tool: McpTool, scope: GuardScope) -> dict:
    """`arguments`, with the agent and session the call is made for where the tool takes them
    and they are not given: a SOUL or guard tool acts on the X-NeuroMem-Agent agent."""
    defaults = {"agent_id": scope.agent_id, "session": scope.session or None}
    taken = tool.input_schema["properties"]
    return {
        **{name: value for name, value in defaults.items() if name in taken and value is not None},
        **arguments,
    }


def our_names(arguments: Mapping[str, Any], aliases: Mapping[str, str]) -> dict[str, Any]:
    """`arguments` under the names the route's serializer knows: each alias renamed, and
    `output_format` (json, the only format) checked and dropped."""
    both = [alias for alias, name in aliases.items() if alias in arguments and name in arguments]
    if both:
        alias = both[0]
        raise serializers.ValidationError(
            {alias: [f"Give `{aliases[alias]}` or `{alias}`, not both."]}
        )
    if arguments.get(OUTPUT_FORMAT, "json") != "json":
        raise serializers.ValidationError({OUTPUT_FORMAT: ['Only "json": tools answer JSON.']})
    return {
        aliases.get(name, name): value for name, value in arguments.items() if name != OUTPUT_FORMAT
    }


def errors_name_the_aliases_given(
    arguments: Mapping[str, Any], aliases: Mapping[str, str]
) -> AbstractContextManager[None]:
    """An error names an argument as the caller spelt it (`sortLinks`, not `sort_links`), as
    seed 004's HTTP routes do."""
    return error_fields_renamed(
        {name: alias for alias, name in aliases.items() if alias in arguments}
    )
