"""The response envelope of docs/api.md: `{"ok": true, "data": ...}` or
`{"ok": false, "error": {...}}`.

Views return plain data; the renderer wraps it. Every error, whether DRF raised it, a view
raised an ApiError, the domain raised one of core/errors.py, Django raised Http404,
or something crashed, goes through
`exception_handler` and leaves with a precise code, never as HTML or a stack trace.
"""

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error

from core.db.outages import database_unavailable
from core.errors import Conflict, DomainError, Forbidden, Invalid, NotFound, Unavailable
from core.logs import security_log
from core.validation import LONE_SURROGATE

log = logging.getLogger("neuromem.api")


class Envelope(dict):
    """A body that is already in envelope form; the renderer passes it through untouched."""


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE


class ApiError(exceptions.APIException):
    """An error with a code of docs/api.md; extra keyword arguments become fields of `error`."""

    status_code = status.HTTP_400_BAD_REQUEST
    code = "VALIDATION_ERROR"

    def __init__(self, message: str, *, field: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.extra = extra


@contextmanager
def error_fields_renamed(names: Mapping[str, str]) -> Iterator[None]:
    """A validation, API or domain error raised inside names its field as `names` spells it
    (ours → the caller's: the key-addressed routes' camelCase, an MCP alias)."""
    try:
        yield
    except exceptions.ValidationError as error:
        if isinstance(error.detail, dict):
            error.detail = {names.get(name, name): d for name, d in error.detail.items()}
        raise
    except (ApiError, DomainError) as error:
        error.field = names.get(error.field, error.field)
        raise


# The domain's errors (core/errors.py) → status and code of docs/api.md.
DOMAIN_ERRORS: dict[type[DomainError], tuple[int, str]] = {
    Invalid: (status.HTTP_400_BAD_REQUEST, "VALIDATION_ERROR"),
    Forbidden: (status.HTTP_403_FORBIDDEN, "FORBIDDEN"),
    NotFound: (status.HTTP_404_NOT_FOUND, "NOT_FOUND"),
    Conflict: (status.HTTP_409_CONFLICT, "CONFLICT"),
    Unavailable: (status.HTTP_503_SERVICE_UNAVAILABLE, "UNAVAILABLE"),
}


def range_error(
    field: str, provided: Any, *, min_allowed: Any = None, max_allowed: Any = None
) -> ApiError:
    """A range error: the field, the limits (`minAllowed`, `maxAllowed`), and `provided`."""
    if max_allowed is not None and (min_allowed is None or provided > max_allowed):
        message = f"Parameter '{field}' exceeds maximum value of {max_allowed}"
    else:
        message = f"Parameter '{field}' is below minimum value of {min_allowed}"
    limits = {"minAllowed": min_allowed, "maxAllowed": max_allowed}
    return ApiError(
        message,
        field=field,
        provided=provided,
        **{k: v for k, v in limits.items() if v is not None},
    )


def checked_range(field: str, provided: int, *, min_allowed: int, max_allowed: int) -> int:
    """`provided` when within the limits, else a range error."""
    if not min_allowed <= provided <= max_allowed:
        raise range_error(field, provided, min_allowed=min_allowed, max_allowed=max_allowed)
    return provided


# HTTP status → code of docs/api.md (DRF's own exceptions each have a distinct status).
STATUS_CODES: dict[int, str] = {
    400: "VALIDATION_ERROR",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    406: "NOT_ACCEPTABLE",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    429: "RATE_LIMITED",
    503: "UNAVAILABLE",
}


def printable(value: Any) -> Any:
    """`value` as UTF-8 can carry it: a lone surrogate that an error echoes from the input (a
    choice that is none of the choices) becomes U+FFFD instead of failing the answer."""
    if isinstance(value, str):
        return LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {printable(key): printable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [printable(item) for item in value]
    return value


def error_body(code: str, message: str, *, field: str | None = None, **extra: Any) -> Envelope:
    error: dict[str, Any] = {"code": code, "message": message}
    if field is not None:
        error["field"] = field
    error.update(extra)
    return Envelope(ok=False, error=printable(error))


def field_path(path: str, key: str | int) -> str:
    if isinstance(key, int):  # list items; DRF keys a ListSerializer's errors by index
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def first_error(detail: Any, path: str = "") -> tuple[str | None, str]:
    """The first (field path, message) in a nested DRF error detail: `items[2].content`."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            if key in ("non_field_errors", "__all__"):
                return first_error(value, path)
            if value:  # batch errors hold empty dicts for the items that were fine
                return first_error(value, field_path(path, key))
    if isinstance(detail, list):
        if all(isinstance(item, str) for item in detail):
            return path or None, str(detail[0]) if detail else "Invalid input."
        for index, item in enumerate(detail):
            if item:
                return first_error(item, field_path(path, index))
    return path or None, str(detail)


def domain_error_response(exc: DomainError) -> Response:
    # The nearest class in DOMAIN_ERRORS: a subclass (say, of Conflict) answers as its parent.
    status_code, code = next(
        DOMAIN_ERRORS[cls] for cls in type(exc).__mro__ if cls in DOMAIN_ERRORS
    )
    code = getattr(exc, "code", code)  # Refused names its own
    extra = dict(exc.extra)
    if isinstance(exc, Invalid) and exc.field is not None:
        extra.setdefault("details", {exc.field: [exc.message]})  # as DRF's own field errors
    return Response(error_body(code, exc.message, field=exc.field, **extra), status=status_code)


def api_error_response(exc: exceptions.APIException | DomainError) -> Response:
    if isinstance(exc, DomainError):
        return domain_error_response(exc)
    if isinstance(exc, ApiError):
        body = error_body(exc.code, exc.message, field=exc.field, **exc.extra)
    elif isinstance(exc, exceptions.ValidationError):
        field, message = first_error(exc.detail)
        body = error_body("VALIDATION_ERROR", message, field=field, details=exc.detail)
    else:
        body = error_body(STATUS_CODES.get(exc.status_code, "INTERNAL"), str(exc.detail))
    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if getattr(exc, "wait", None):
        headers["Retry-After"] = str(int(exc.wait))
    return Response(body, status=exc.status_code, headers=headers)


def database_unavailable_error(exc: Exception) -> Unavailable:
    """What a client is told when the database is away (core/db/outages.py): try again."""
    log.warning("Database unavailable: %s", exc)
    return Unavailable(
        "The database is unavailable; try again shortly.",
        retry_after=settings.DATABASE_RETRY_AFTER,
    )


# Answers logged as security events (core/logs.py): the status → the event.
SECURITY_STATUSES = {401: "auth_failed", 403: "refused"}


def exception_handler(exc: Exception, context: dict) -> Response:
    """DRF's EXCEPTION_HANDLER (and the MCP tools'): every failure becomes an error envelope
    and rolls back; the database away is 503 UNAVAILABLE with Retry-After."""
    if database_unavailable(exc):
        exc = database_unavailable_error(exc)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or None)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(as_serializer_error(exc))
    elif isinstance(exc, RequestDataTooBig):  # a body with no Content-Length to judge first
        exc = PayloadTooLarge(str(exc))
    from rest_framework.views import set_rollback  # not at the top: views imports this module

    set_rollback()
    if isinstance(exc, exceptions.APIException | DomainError):
        response = api_error_response(exc)
        if isinstance(exc, Unavailable) and exc.retry_after is not None:
            response["Retry-After"] = str(exc.retry_after)
        if response.status_code in SECURITY_STATUSES:
            security_log.warning(
                "%s: %s",
                SECURITY_STATUSES[response.status_code],
                response.data["error"]["code"],
                extra={
                    "event": SECURITY_STATUSES[response.status_code],
                    "code": response.data["error"]["code"],
                    "view": type(context["view"]).__name__ if context.get("view") else "",
                },
            )
        return response
    view = context.get("view")
    log.error("Unhandled error in %s", type(view).__name__ if view else "API", exc_info=exc)
    return Response(
        error_body("INTERNAL", "Internal server error."),
        status=status.HTTP_500_INTERNAL_SERVER_ERROR,
    )


class EnvelopeJSONRenderer(JSONRenderer):
    """Wraps what views return in `{"ok": true, "data": ...}`; errors are already wrapped."""

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        response = (renderer_context or {}).get("response")
        if response is not None and response.status_code == status.HTTP_204_NO_CONTENT:
            return b""
        if not isinstance(data, Envelope):
            if response is not None and response.status_code >= 400:
                data = error_body(STATUS_CODES.get(response.status_code, "INTERNAL"), str(data))
            else:
                data = Envelope(ok=True, data=data)
        return super().render(data, accepted_media_type, renderer_context)
