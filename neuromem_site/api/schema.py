"""OpenAPI that tells the truth about the envelope: 2xx bodies inside `{ok, data}`, errors as
the `ErrorEnvelope` component."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema

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
                    "enum": [
                        "VALIDATION_ERROR",
                        "UNAUTHORIZED",
                        "FORBIDDEN",
                        "NOT_FOUND",
                        "METHOD_NOT_ALLOWED",
                        "NOT_ACCEPTABLE",
                        "CONFLICT",
                        "UNSUPPORTED_MEDIA_TYPE",
                        "RATE_LIMITED",
                        "UNAVAILABLE",
                        "INTERNAL",
                    ],
                },
                "message": {"type": "string"},
                "field": {"type": "string", "description": "The field at fault, when one is."},
            },
            "additionalProperties": True,
        },
    },
}
ERROR_RESPONSES = {
    "400": "Invalid input (VALIDATION_ERROR)",
    "401": "Missing or invalid token (UNAUTHORIZED)",
    "403": "Not allowed for this client (FORBIDDEN)",
    "404": "Not found (NOT_FOUND)",
    "429": "Too many requests (RATE_LIMITED)",
    "500": "Internal error (INTERNAL)",
}


class EnvelopeAutoSchema(AutoSchema):
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


def add_error_responses(result, generator, request, public):
    """drf-spectacular postprocessing hook: the error envelope on every operation."""
    result.setdefault("components", {}).setdefault("schemas", {})["ErrorEnvelope"] = ERROR_ENVELOPE
    ref = {"$ref": "#/components/schemas/ErrorEnvelope"}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for code, description in ERROR_RESPONSES.items():
                responses.setdefault(
                    code,
                    {"description": description, "content": {"application/json": {"schema": ref}}},
                )
    return result


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "neuromem_site.api.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "create_api_client token"}
