"""MCP clients for the tests: the SDK's own client, over stdio to a real `manage.py mcp_server`
subprocess on the test database, or over streamable HTTP to the WSGI application served on a
real socket. Both are driven from synchronous test code through an anyio blocking portal, so a
test can interleave MCP calls with HTTP requests and database reads."""

import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from django.db import connection, connections
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CallToolResult, Tool
from rest_framework.test import APIClient

from neuromem_site.api.services import api_client_create
from tests.memories.scratch import BASE_DIR, server_url

TIMEOUT = 120  # seconds for one MCP request (the first search loads the embedding model)


@dataclass
class Agent:
    """An API client: its token, and a REST client that authenticates with it."""

    token: str
    http: APIClient


@pytest.fixture
def make_agent():
    """make_agent("a", ["a:"]) / make_agent("ops", staff=True): a new API client."""

    def make(name: str, prefixes: list[str] | None = None, *, staff: bool = False) -> Agent:
        _, token = api_client_create(
            name=name,
            user_prefixes=prefixes if prefixes is not None else ([] if staff else [f"{name}:"]),
            is_staff=staff,
        )
        http = APIClient(raise_request_exception=False)
        http.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        return Agent(token=token, http=http)

    return make


@dataclass
class SyncMcp:
    """An MCP client session, called synchronously."""

    portal: BlockingPortal
    client: Client

    def tools(self) -> list[Tool]:
        return self.portal.call(self.client.list_tools).tools

    def result(self, name: str, **arguments: Any) -> CallToolResult:
        return self.portal.call(self.client.call_tool, name, arguments)

    def call(self, name: str, **arguments: Any) -> tuple[bool, Any]:
        """(ok, the JSON answered): `data` when ok, else the error object."""
        result = self.result(name, **arguments)
        [content] = result.content
        return not result.is_error, json.loads(content.text)

    def data(self, name: str, **arguments: Any) -> Any:
        ok, answer = self.call(name, **arguments)
        assert ok, answer
        return answer

    def error(self, name: str, **arguments: Any) -> dict[str, Any]:
        ok, answer = self.call(name, **arguments)
        assert not ok, answer
        return answer


def stdio_environment(token: str | None) -> dict[str, str]:
    """This process's environment, on the test database, with `token` (or none)."""
    environment = {**os.environ, "DATABASE_URL": server_url(connection.settings_dict["NAME"])}
    environment.pop("NEUROMEM_API_TOKEN", None)
    if token is not None:
        environment["NEUROMEM_API_TOKEN"] = token
    return environment


def stdio_command() -> list[str]:
    return [sys.executable, "manage.py", "mcp_server"]


def innermost(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


@contextmanager
def mcp_session(server: Any, **options: Any) -> Iterator[SyncMcp]:
    with start_blocking_portal() as portal:
        session = portal.wrap_async_context_manager(
            Client(server, read_timeout_seconds=TIMEOUT, **options)
        )
        try:
            client = session.__enter__()
        except BaseExceptionGroup as group:  # the SDK's task groups wrap what failed
            raise innermost(group) from group
        try:
            yield SyncMcp(portal, client)
        finally:
            # A failed assertion is the test's, not the session's: close it as if all went well
            # (handing it the exception would re-raise it wrapped in exception groups).
            session.__exit__(None, None, None)


@contextmanager
def mcp_stdio(token: str) -> Iterator[SyncMcp]:
    """`manage.py mcp_server` as a subprocess with NEUROMEM_API_TOKEN=token, and a session."""
    command, *args = stdio_command()
    params = StdioServerParameters(
        command=command, args=args, env=stdio_environment(token), cwd=str(BASE_DIR)
    )
    with mcp_session(params) as session:
        yield session


@asynccontextmanager
async def http_transport(url: str, token: str):
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


@contextmanager
def mcp_http(url: str, token: str, **options: Any) -> Iterator[SyncMcp]:
    """A session over streamable HTTP to `url`, with `Authorization: Bearer <token>`."""
    with mcp_session(http_transport(url, token), **options) as session:
        yield session


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def web() -> Iterator[str]:
    """neuromem_site.wsgi.application on a real socket (wsgiref, one thread): its base URL."""
    from neuromem_site.wsgi import application  # builds the middleware chain: not at import

    def app(environ, start_response):
        response = application(environ, start_response)
        try:
            body = b"".join(response)
        finally:
            response.close()
            connections.close_all()  # this thread's connection, or the test database stays in use
        return [body]

    server = make_server("127.0.0.1", 0, app, server_class=WSGIServer, handler_class=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()
