"""The MCP server for one caller, and its stdio transport.

The SDK's low-level `Server`, not `MCPServer`: MCPServer validates arguments with pydantic models
built from Python signatures before a tool runs, which would answer its own errors; here the
DRF serializers of the HTTP API validate, so both answer the same error objects.

Database access: the SDK is async, Django's ORM is not. A tool runs through `sync_to_async`
(thread-sensitive) inside `async_to_sync`, so it runs on the thread that entered async_to_sync:
the request's thread under gunicorn (with the request's connection, closed by Django as after any
request), the command's main thread for stdio. The event loop's thread never touches the ORM
(Django would refuse: SynchronousOnlyOperation).
"""

from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)
from rest_framework import exceptions

from core.access import Caller
from evolution.services import GuardScope
from neuromem_site.api.selectors import api_client_by_token
from neuromem_site.api.services import api_client_touch
from neuromem_site.mcp.tools import DEFAULT_SCOPE, TOOLS, tool_call

INSTRUCTIONS = (
    "NeuroMem is a long-term memory for AI agents. Every memory belongs to an end user "
    "(`user_id`); this API client reaches only the end users whose ids start with one of its "
    "prefixes. Recall (memory_recall) before answering, remember (memory_add) what is worth "
    "keeping. Tool results are JSON; a failed call answers an error object "
    '{"code", "message", "field"?, ...} with isError set.'
)

try:
    NEUROMEM_VERSION = version("neuromem")
except PackageNotFoundError:  # a checkout that was never installed
    NEUROMEM_VERSION = ""


def token_caller(token: str) -> Caller:
    """The caller an API token stands for, as the REST API's bearer authentication finds it
    (an unknown or revoked token is UNAUTHORIZED)."""
    client = api_client_by_token(token=token)
    if client is None:
        raise exceptions.AuthenticationFailed("Invalid or revoked API token.")
    api_client_touch(client=client)
    return client.caller


def stdio_caller(token: str) -> Callable[[], Caller]:
    """For stdio: the token looked up again before each tool call (revoking it takes effect at
    once), after dropping a connection that broke or outlived DATABASE_CONN_MAX_AGE, as Django
    does before each request. (Not for HTTP: Django already does it there, and inside a
    transaction it would close the connection under the request.)"""

    def caller() -> Caller:
        close_old_connections()
        return token_caller(token)

    return caller


def mcp_server(caller: Callable[[], Caller], scope: GuardScope = DEFAULT_SCOPE) -> Server:
    """NeuroMem's tools, acting for `caller()`: a synchronous function, called on the database
    thread before each tool runs (stdio looks the token up again, so a revoked token stops
    working at once; HTTP answers the client the request authenticated); each call made for
    `scope`'s agent and session (the runtime guardrail's)."""

    async def list_tools(
        ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=[tool.definition() for tool in TOOLS.values()])

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        tool = TOOLS.get(params.name)
        if tool is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        answer = await sync_to_async(tool_call, thread_sensitive=True)(
            tool=tool, caller=caller, arguments=params.arguments or {}, scope=scope
        )
        return CallToolResult(content=[TextContent(text=answer.text)], is_error=not answer.ok)

    def input_schema(name: str) -> dict[str, Any] | None:
        tool = TOOLS.get(name)
        return None if tool is None else tool.input_schema

    return Server(
        "neuromem",
        version=NEUROMEM_VERSION,
        title="NeuroMem",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def stdio_serve(caller: Callable[[], Caller], scope: GuardScope = DEFAULT_SCOPE) -> None:
    """Serve the tools over this process's stdin and stdout until stdin closes."""
    server = mcp_server(caller, scope)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
