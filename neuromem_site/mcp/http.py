"""MCP over streamable HTTP at `/mcp`, in the WSGI deployment (gunicorn sync workers).

The SDK serves streamable HTTP as an ASGI app. In stateless, JSON-response mode one POST carries
one JSON-RPC message and its answer is one JSON body, so nothing outlives the request: no
session, no server-sent-event stream a sync worker would have to hold open. A DRF view hands
each POST to the SDK (`asgi_exchange`, under `async_to_sync`) and answers what it answered; being
a DRF view, /mcp authenticates, throttles and answers 401 exactly as the REST API does, and the
tools run on the request's thread and database connection (neuromem_site/mcp/server.py).

GET (a server-to-client event stream) and DELETE (ending a session) have no meaning without
sessions: 405, as the MCP specification allows.
"""

import json
import logging
from typing import Any

import anyio
from asgiref.sync import async_to_sync
from django.conf import settings
from django.http import HttpResponse, JsonResponse
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.types import INVALID_REQUEST
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.views import APIView

from neuromem_site.api.permissions import guard_scope
from neuromem_site.mcp.server import mcp_server

# The SDK logs its session manager's start and stop at INFO: here, that is every request.
logging.getLogger("mcp.server.streamable_http_manager").setLevel(logging.WARNING)

# Hop-by-hop or recomputed: not copied from the SDK's answer.
SKIPPED_HEADERS = {"connection", "content-length", "transfer-encoding"}


def asgi_scope(request: Request) -> dict[str, Any]:
    """The ASGI HTTP scope of a Django request (the SDK reads the method, path and headers)."""
    meta = request.META
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": meta.get("SERVER_PROTOCOL", "HTTP/1.1").removeprefix("HTTP/"),
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": meta.get("QUERY_STRING", "").encode("latin-1"),
        # WSGI hands headers over as latin-1 text: back to the bytes they came as. No Accept
        # accepts anything (RFC 9110), as on the REST API; the SDK would answer 406.
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in {"Accept": "*/*", **request.headers}.items()
        ],
        "client": (meta.get("REMOTE_ADDR", ""), int(meta.get("REMOTE_PORT") or 0)),
        "server": (meta.get("SERVER_NAME", ""), int(meta.get("SERVER_PORT") or 0)),
    }


async def asgi_exchange(
    server: Server, scope: dict[str, Any], body: bytes
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """One request through the SDK's streamable HTTP transport (stateless, JSON responses):
    its status, headers and body."""
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)
    answered = anyio.Event()
    delivered = False
    start: dict[str, Any] = {"status": 500, "headers": []}
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client "disconnects" once it has its answer
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            start.update(status=message["status"], headers=message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                answered.set()

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    answered.set()
    return start["status"], start["headers"], b"".join(chunks)


def invalid_request(body: bytes) -> str | None:
    """Why `body`, parsed, is no JSON-RPC 2.0 message, or None. The SDK would drop a request
    whose `id` is null or a float as a notification (202, no answer) and answer other
    malformed envelopes `-32602` with its validator's dump; a body that is no JSON at all is
    left to it (`-32700`)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict):
        return "A JSON-RPC message is one JSON object (batches are not supported)."
    if message.get("jsonrpc") != "2.0":
        return 'A JSON-RPC message has "jsonrpc": "2.0".'
    identifier = message.get("id")
    if "id" in message and (isinstance(identifier, bool) or not isinstance(identifier, str | int)):
        return "A request's id is a string or an integer."
    if not isinstance(message.get("method"), str) and not {"result", "error"} & message.keys():
        return "A request or notification names its method."
    return None


class McpApi(APIView):
    """MCP's streamable HTTP transport: POST one JSON-RPC message, get its answer as JSON."""

    schema = None  # an MCP endpoint, not a REST route: not in the OpenAPI schema
    guard_exempt = True  # the runtime guardrail gates each tool call (tools.tool_call)
    max_body_bytes = settings.API_BODY_MAX_BYTES  # see ApiErrorEnvelopeMiddleware

    def post(self, request: Request) -> HttpResponse:
        # The SDK would answer a plain-text 400; this is the REST API's 415.
        if request.content_type.split(";")[0].strip().lower() != "application/json":
            raise exceptions.UnsupportedMediaType(request.content_type)
        problem = invalid_request(request.body)
        if problem is not None:
            return JsonResponse(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": INVALID_REQUEST, "message": problem},
                },
                status=400,
            )
        caller = request.user.caller
        status, headers, body = async_to_sync(asgi_exchange)(
            mcp_server(lambda: caller, guard_scope(request)), asgi_scope(request), request.body
        )
        response = HttpResponse(body, status=status)
        for name, value in headers:
            if name.lower().decode("latin-1") not in SKIPPED_HEADERS:
                response[name.decode("latin-1")] = value.decode("latin-1")
        return response
