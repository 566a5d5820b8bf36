"""OpenAPI that tells the truth about the envelope and about what each operation answers, so a
client generated from it works (`make fuzz` holds the code to it):

- 2xx bodies inside `{ok, data}`; list pages add `page`; errors are the `ErrorEnvelope`;
- request bodies of StrictInputSerializer reject unknown fields: `additionalProperties: false`;
- every string a request sends has the `pattern` the server holds it to (text_pattern: no NUL,
  not blank once trimmed where blank is refused), a `user_id` in a path too;
- every operation lists the error statuses it can answer (add_error_responses): those its
  shape implies, plus the ones its `@extend_schema` declares (403, 404, 409 ...), each with an
  example whose `code` is the one that status carries;
- operations are grouped by area (TAGS), not all under the path's first segment.
"""

import inspect
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.fields import CharField, ListField
from rest_framework.pagination import BasePagination
from rest_framework.serializers import Serializer

from core.risk import RiskLevel
from evolution.evaluation import GUARD_ERROR_CODES
from evolution.services.guard import SESSION_MAX_CHARS
from neuromem_site.api.envelope import STATUS_CODES
from neuromem_site.api.pagination import EnvelopeCursorPagination
from neuromem_site.api.permissions import AGENT_HEADER, SESSION_HEADER, GuardGate, view_risk
from neuromem_site.api.serializers import (
    USER_ID_LOOKUP_SCHEMA,
    StrictInputSerializer,
    text_pattern,
)

# A 404 (reading) or 403 (writing) for an end user the client's prefixes do not reach.
OUTSIDE_PREFIXES = OpenApiResponse(description="user_id outside this client's prefixes")
# A 403 for a route only staff clients may call.
STAFF_ONLY = OpenApiResponse(description="Not a staff client (FORBIDDEN)")
# A 403 for reading without the optional `user_id` (permissions.user_filter_check).
ALL_USERS_STAFF_ONLY = OpenApiResponse(
    description="No user_id (every end user), and not a staff client (FORBIDDEN)"
)


def answers(
    status: int,
    output: Any,
    description: str | None = None,
    *,
    existing: str | None = None,
    forbidden: OpenApiResponse | str | None = None,
    not_found: OpenApiResponse | str | None = None,
    conflict: OpenApiResponse | str | None = None,
) -> dict[int, Any]:
    """An operation's `responses`: `output` on `status` (with `description`, when given); for
    a create, `existing` describes the 200 with the same output when nothing new was made; then
    the errors its code raises besides those its shape implies (add_error_responses): 403
    `forbidden`, 404 `not_found`, 409 `conflict`, each a response or its description."""
    declared = {status: output if description is None else OpenApiResponse(output, description)}
    if existing is not None:
        declared[200] = OpenApiResponse(output, existing)
    for error_status, error in ((403, forbidden), (404, not_found), (409, conflict)):
        if error is not None:
            declared[error_status] = (
                OpenApiResponse(description=error) if isinstance(error, str) else error
            )
    return declared


def list_schema(parameters: type[Serializer], item_output: type[Serializer]) -> Any:
    """The schema of a GET listing an end user's (or the client's) things: `parameters` in the
    query string, a list of `item_output`; a user_id outside the prefixes is NOT_FOUND, and
    none, where it is optional, FORBIDDEN for all but staff clients."""
    user_id = parameters().fields.get("user_id")
    optional = user_id is not None and not user_id.required
    return extend_schema(
        parameters=[parameters],
        responses=answers(
            200,
            item_output(many=True),
            not_found=OUTSIDE_PREFIXES,
            forbidden=ALL_USERS_STAFF_ONLY if optional else None,
        ),
    )


ERROR_ENVELOPE = {
    "type": "object",
    "required": ["ok", "error"],
    "properties": {
        "ok": {"type": "boolean", "enum": [False]},
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {
                    "type": "string",
                    "enum": [*STATUS_CODES.values(), "INTERNAL", *GUARD_ERROR_CODES],
                },
                "message": {"type": "string"},
                "field": {"type": "string", "description": "The field at fault, when one is."},
                "details": {
                    "description": "VALIDATION_ERROR: every field's errors, as DRF reports them."
                },
                "minAllowed": {"description": "A range error's (or 413's) limits."},
                "maxAllowed": {"description": "A range error's (or 413's) limits."},
                "provided": {"description": "What a range error (or 413) was given."},
                "current_version": {
                    "type": "integer",
                    "nullable": True,
                    "description": "CONFLICT on a memory: its current version.",
                },
                "memory_id": {
                    "type": "string",
                    "format": "uuid",
                    "description": "CONFLICT on content or a key: the current memory holding it.",
                },
                "agent_id": {
                    "type": "integer",
                    "description": "A guardrail's refusal (GUARD_*): the agent whose guard it is.",
                },
                "session": {
                    "type": "string",
                    "description": "A guardrail's refusal: the session whose check failed.",
                },
                "missing_anchors": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "GUARD_ANCHOR_MISSING: the anchors the context lacked.",
                },
                "violated_constraints": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "GUARD_CONSTRAINT_VIOLATED: the constraints it broke.",
                },
            },
            "additionalProperties": True,
        },
    },
}
ERROR_REF = {"$ref": "#/components/schemas/ErrorEnvelope"}
UNKNOWN_AGENT = f"or the agent {AGENT_HEADER} names is not one of this client's"
GUARD_REFUSED = (
    "For an agent whose runtime guardrail is on: refused while its session's latest guard "
    "check failed (GUARD_ANCHOR_MISSING, GUARD_CONSTRAINT_VIOLATED, GUARD_CONTRACT_UNAVAILABLE)"
)
# The agent and session a call is made for (neuromem_site/api/permissions.py).
GUARD_HEADERS = [
    {
        "in": "header",
        "name": AGENT_HEADER,
        "required": False,
        # An agent's id is a bigint: a larger number is refused as malformed, not looked up.
        "schema": {"type": "integer", "format": "int64", "minimum": 1, "maximum": 2**63 - 1},
        "description": "The agent this call is made for (one of this client's, GET /agents/); "
        "default: the client's default agent. Its runtime guardrail gates the call.",
    },
    {
        "in": "header",
        "name": SESSION_HEADER,
        "required": False,
        # HTTP drops the spaces and tabs around a header's value before the server reads it:
        # they count neither as control characters nor in the length.
        "schema": {
            "type": "string",
            "pattern": f"^[\\t ]*[^\\u0000-\\u001f\\u007f]{{0,{SESSION_MAX_CHARS}}}[\\t ]*$",
        },
        "description": "The agent's session (one conversation, one model loop) whose guard "
        'check speaks for this call; default "".',
    },
]
ERROR_DESCRIPTIONS = {
    "400": "Invalid input (VALIDATION_ERROR); `field` names the first field at fault",
    "401": "Missing or invalid token (UNAUTHORIZED)",
    "403": "Writing for a user_id outside this client's prefixes (FORBIDDEN)",
    "404": "Not found, or not visible to this client (NOT_FOUND)",
    "406": "An Accept header that takes no JSON (NOT_ACCEPTABLE)",
    "409": "The resource changed or ended (CONFLICT)",
    "413": "Body larger than this route takes (PAYLOAD_TOO_LARGE): `maxAllowed`, `provided`",
    "414": "Request line (path and query string) over gunicorn's 8,190 bytes",
    "415": "Body that is not JSON (UNSUPPORTED_MEDIA_TYPE)",
    "429": "Too many requests (RATE_LIMITED); see Retry-After",
    "500": "Internal error (INTERNAL); never expected",
    "503": "A service NeuroMem needs is down (UNAVAILABLE)",
}

# One example per error status, so Swagger UI does not show the enum's first value
# (VALIDATION_ERROR) for a 404. Codes as envelope.STATUS_CODES and gunicorn_conf answer them.
ERROR_EXAMPLES: dict[str, dict[str, Any]] = {
    "400": {
        "code": "VALIDATION_ERROR",
        "message": "This field is required.",
        "field": "user_id",
        "details": {"user_id": ["This field is required."]},
    },
    "401": {"code": "UNAUTHORIZED", "message": "Invalid or revoked API token."},
    "403": {
        "code": "FORBIDDEN",
        "message": "This API client may not write data for user_id 'other:alice'.",
    },
    "404": {"code": "NOT_FOUND", "message": "User 'other:alice' not found."},
    "405": {"code": "METHOD_NOT_ALLOWED", "message": 'Method "PUT" not allowed.'},
    "406": {"code": "NOT_ACCEPTABLE", "message": "Could not satisfy the request Accept header."},
    "409": {
        "code": "CONFLICT",
        "message": "The memory changed since you read it; read it again and retry.",
        "field": "version",
        "current_version": 2,
    },
    "413": {
        "code": "PAYLOAD_TOO_LARGE",
        "message": "The request body is 200000 bytes; this route takes at most 93792.",
        "maxAllowed": 93792,  # with the default settings (EMBEDDING_DIM 512)
        "provided": 200000,
    },
    "414": {"code": "VALIDATION_ERROR", "message": "Request-URI Too Long"},
    "415": {
        "code": "UNSUPPORTED_MEDIA_TYPE",
        "message": 'Unsupported media type "text/plain" in request.',
    },
    "429": {
        "code": "RATE_LIMITED",
        "message": "Request was throttled. Expected available in 12 seconds.",
    },
    "500": {"code": "INTERNAL", "message": "Internal server error."},
    "503": {"code": "UNAVAILABLE", "message": "NeuroMem is unhealthy: redis failing."},
}

# Health's 503 carries the checks beside the error, as its 200 does.
UNHEALTHY_DATA = {
    "status": "unhealthy",
    "checks": {
        "database": {"ok": True, "detail": "SELECT 1 answered", "latency_ms": 0.4},
        "redis": {"ok": False, "detail": "ConnectionError: Connection refused", "latency_ms": 0.3},
        "worker": {"ok": False, "detail": "not checked: Redis is unavailable", "latency_ms": 0.0},
        "beat": {"ok": False, "detail": "not checked: Redis is unavailable", "latency_ms": 0.0},
    },
}

# Swagger UI groups operations by tag: one per area of the API, in this order.
TAGS = [
    {"name": "memories", "description": "Write, read, change, supersede and delete memories."},
    {"name": "recall & search", "description": "Hybrid vector + full-text recall."},
    {"name": "conversations", "description": "Sessions and their messages; memories mined."},
    {"name": "users", "description": "An end user's data: export, purge, traits, prompt."},
    {"name": "traits", "description": "One trait: its evidence, parents, children; veto."},
    {"name": "reflection", "description": "Reflection cycles: request one, read them."},
    {
        "name": "soul",
        "description": "Agents and their SOULs: propose, evaluate, apply, veto, roll back; "
        "the runtime guardrail's check and events.",
    },
    {"name": "auth", "description": "The API client a bearer token belongs to."},
    {"name": "health", "description": "Database, Redis, worker and beat checks (no auth)."},
    {
        "name": "key-addressed",
        "description": "For clients written against an older memory API, outside /api/v1/: "
        "memories by `key`, camelCase parameters, that API's shapes; stats and the memory "
        "system's health.",
    },
]
# The first path segment after /api/v1/ → its tag.
TAG_BY_SEGMENT = {
    "memories": "memories",
    "recall": "recall & search",
    "search": "recall & search",
    "sessions": "conversations",
    "users": "users",
    "traits": "traits",
    "reflection": "reflection",
    "soul": "soul",
    "agents": "soul",  # an agent's SOUL: /agents/{id}/soul/…
    "guard": "soul",  # the default agent's guardrail
    "auth": "auth",
    "health": "health",
}

# List views that paginate by hand (an APIView has no pagination_class): their list response
# is the page envelope, and `cursor` / `limit` are their parameters.
PAGINATED_VIEWS = {"memories.api.views.MemoryListCreateApi"}

# Path parameters the URL converters leave plain strings: the rule the views hold them to.
PATH_PARAMETER_SCHEMAS = {"user_id": USER_ID_LOOKUP_SCHEMA}


class EnvelopeAutoSchema(AutoSchema):
    def get_operation(self, path, path_regex, path_prefix, method, registry):
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        gated = self.view.permission_classes and GuardGate in self.view.permission_classes
        if operation is None or not gated or getattr(self.view, "guard_exempt", False):
            return operation
        operation.setdefault("parameters", []).extend(GUARD_HEADERS)
        responses = operation.setdefault("responses", {})
        described_further(responses, "404", f"; {UNKNOWN_AGENT}")
        if view_risk(self.view, method) == RiskLevel.HIGH:
            described_further(responses, "403", f". {GUARD_REFUSED}")
        return operation

    def _get_paginator(self) -> BasePagination | None:
        view = type(self.view)
        if f"{view.__module__}.{view.__qualname__}" in PAGINATED_VIEWS:
            return EnvelopeCursorPagination()
        return super()._get_paginator()

    def _map_basic_serializer(self, serializer, direction) -> dict:
        schema = super()._map_basic_serializer(serializer, direction)
        if direction != "request":
            return schema
        # After drf-spectacular's own pass: it would add a blank alternative to a pattern that
        # takes a blank value itself, and a value both match fails `oneOf`.
        for name, prop in schema["properties"].items():
            field = serializer.fields[name]
            if isinstance(field, ListField):
                field, prop = field.child, prop.get("items", {})
            if isinstance(field, CharField) and prop.get("type") == "string":
                prop.setdefault("pattern", text_pattern(field))
        return schema

    def _resolve_path_parameters(self, variables) -> list[dict]:
        parameters = super()._resolve_path_parameters(variables)
        for parameter in parameters:
            if parameter["name"] in PATH_PARAMETER_SCHEMAS:
                parameter["schema"] = dict(PATH_PARAMETER_SCHEMAS[parameter["name"]])
        return parameters

    def _postprocess_serializer_schema(self, schema, serializer, direction) -> dict:
        schema = super()._postprocess_serializer_schema(schema, serializer, direction)
        if direction == "request" and isinstance(serializer, StrictInputSerializer):
            schema["additionalProperties"] = False  # unknown fields are a VALIDATION_ERROR
        if schema.get("description") == inspect.cleandoc(StrictInputSerializer.__doc__ or ""):
            del schema["description"]  # the base class's docstring, not this body's
        return schema

    def _get_response_for_code(
        self, serializer, status_code, media_types=None, direction="response"
    ):
        response = super()._get_response_for_code(serializer, status_code, media_types, direction)
        if not str(status_code).startswith("2"):
            return response
        for media in response.get("content", {}).values():
            schema = media.get("schema", {})
            # Paginated components already carry the envelope (see EnvelopeCursorPagination).
            if not schema.get("$ref", "").split("/")[-1].startswith("Paginated"):
                media["schema"] = {
                    "type": "object",
                    "required": ["ok", "data"],
                    "properties": {"ok": {"type": "boolean", "enum": [True]}, "data": schema},
                }
        return response


def described_further(responses: dict[str, Any], code: str, more: str) -> None:
    """The operation's response for `code` (or the status's usual one), its description
    followed by `more`."""
    response = responses.get(code, {})
    described = response.get("description") or ERROR_DESCRIPTIONS[code]
    responses[code] = {**response, "description": f"{described}{more}"}


def implied_statuses(operation: dict[str, Any]) -> set[str]:
    """The error statuses an operation's shape implies, whatever its view does."""
    statuses = {"406", "500"}  # every answer is JSON: an Accept that excludes it is refused
    if operation.get("security"):
        statuses |= {"401", "429"}
    parameters = operation.get("parameters", [])
    if parameters or "requestBody" in operation:
        statuses.add("400")
    if any(parameter["in"] == "path" for parameter in parameters):
        statuses.add("404")  # unknown, or visible only to other clients
    if any(parameter["in"] == "query" for parameter in parameters):
        statuses.add("414")  # e.g. a long `q` percent-encoded: up to 12 bytes a character
    if "requestBody" in operation:
        statuses |= {"413", "415"}
    return statuses


def operation_tag(path: str) -> str:
    if not path.startswith("/api/v1/"):
        return "key-addressed"
    segment = path.removeprefix("/api/v1/").split("/", 1)[0]
    return TAG_BY_SEGMENT.get(segment, segment)


def error_example(code: str, response: dict[str, Any]) -> None:
    """An example error envelope with the status's own code, unless the response has one."""
    example = ERROR_EXAMPLES.get(code)
    media = response.get("content", {}).get("application/json")
    if example is None or media is None or "example" in media or "examples" in media:
        return
    media["example"] = {"ok": False, "error": example}
    if "allOf" in media.get("schema", {}) and code == "503":  # health: the checks beside it
        media["example"]["data"] = UNHEALTHY_DATA


def add_error_responses(result, generator, request, public):
    """drf-spectacular postprocessing hook: each operation's error statuses, as ErrorEnvelope,
    with an example whose `code` matches the status; and each operation's tag (its area).

    A view's `@extend_schema` declares the statuses its code raises (e.g. `409:
    OpenApiResponse(description=...)`); a declared error without a body gets the envelope.
    """
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["ErrorEnvelope"] = ERROR_ENVELOPE
    if "MemoryOutput" in schemas:
        schemas["MemoryOutput"]["properties"]["embedding"] = {
            "type": "array",
            "items": {"type": "number"},
            "nullable": True,
            "description": "Only with `include=embedding`.",
        }
    result["tags"] = TAGS
    for path, operations in result.get("paths", {}).items():
        for operation in operations.values():
            operation["tags"] = [operation_tag(path)]
            responses = operation.setdefault("responses", {})
            for code in implied_statuses(operation):
                responses.setdefault(code, {"description": ERROR_DESCRIPTIONS[code]})
            for code, response in responses.items():
                if code >= "400" and "content" not in response:
                    response["content"] = {"application/json": {"schema": ERROR_REF}}
                if code in ERROR_DESCRIPTIONS and not response.get("description"):
                    response["description"] = ERROR_DESCRIPTIONS[code]
                if code >= "400":
                    error_example(code, response)
            operation["responses"] = dict(sorted(responses.items()))
    return result


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "neuromem_site.api.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "create_api_client token"}
