"""The API's errors as exceptions: one class per `error.code` of the envelope
(`{"ok": false, "error": {"code", "message", "field"?, ...}}`, docs/api.md), and two for
when no answer came (the connection failed, or the timeout passed)."""

from __future__ import annotations

from typing import Any

import httpx


class NeuroMemError(Exception):
    """Any failure of a call. `status` is the HTTP status (None when no answer came), `code`
    the envelope's code, `error` the envelope's whole `error` object, `request_id` the
    answer's X-Request-ID (quote it when reporting a problem)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str = "",
        error: dict[str, Any] | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.error = error or {}
        self.request_id = request_id

    @property
    def field(self) -> str | None:
        """The input at fault, as a path into the request (`items[2].content`), if named."""
        return self.error.get("field")

    def __str__(self) -> str:
        where = f" (field {self.field})" if self.field else ""
        return f"{self.code or 'ERROR'}: {self.message}{where}"


class ValidationFailed(NeuroMemError):
    """400 VALIDATION_ERROR (also 413 PAYLOAD_TOO_LARGE): `field` names the input at fault,
    `details` every field's errors when a serializer gave them."""

    @property
    def details(self) -> dict[str, Any] | None:
        return self.error.get("details")


class Unauthorized(NeuroMemError):
    """401: no token, or an unknown or revoked one."""


class Forbidden(NeuroMemError):
    """403: writing outside the client's prefixes, a staff-only call, or a guardrail block
    (codes GUARD_*)."""


class NotFound(NeuroMemError):
    """404: an unknown id or route, or one outside the client's prefixes."""


class Conflict(NeuroMemError):
    """409: a stale `version` (`current_version` is the memory's now), a memory no longer
    current, a held key, an ended session."""

    @property
    def current_version(self) -> int | None:
        return self.error.get("current_version")


class RateLimited(NeuroMemError):
    """429: over the client's rate limit; `retry_after` seconds until the window ends."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class Unavailable(NeuroMemError):
    """503: the database is away (nothing was written) or the service is unhealthy;
    `retry_after` seconds to wait, when the service said."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ConnectionFailed(NeuroMemError):
    """No answer: the connection could not be made or broke. For a write, whether it
    happened is unknown."""


class RequestTimeout(ConnectionFailed):
    """No answer within the client's timeout."""


ERROR_CODES: dict[str, type[NeuroMemError]] = {
    "VALIDATION_ERROR": ValidationFailed,
    "PAYLOAD_TOO_LARGE": ValidationFailed,
    "UNAUTHORIZED": Unauthorized,
    "FORBIDDEN": Forbidden,
    "GUARD_ANCHOR_MISSING": Forbidden,
    "GUARD_CONSTRAINT_VIOLATED": Forbidden,
    "GUARD_CONTRACT_UNAVAILABLE": Forbidden,
    "NOT_FOUND": NotFound,
    "CONFLICT": Conflict,
    "RATE_LIMITED": RateLimited,
    "UNAVAILABLE": Unavailable,
}
# An answer without the envelope (a proxy's page): classified by its status alone.
STATUS_CLASSES: dict[int, type[NeuroMemError]] = {
    400: ValidationFailed,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: ValidationFailed,
    429: RateLimited,
    503: Unavailable,
}


def retry_after_seconds(response: httpx.Response, error: dict[str, Any]) -> float | None:
    """The wait the service asked for: the Retry-After header (seconds), else `retry_after`."""
    for value in (response.headers.get("Retry-After"), error.get("retry_after")):
        try:
            return max(0.0, float(value))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
    return None


def error_from_response(response: httpx.Response) -> NeuroMemError:
    """The exception an error answer stands for."""
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        error = {"code": "", "message": response.text[:200] or response.reason_phrase}
    code = str(error.get("code") or "")
    cls = ERROR_CODES.get(code) or STATUS_CLASSES.get(response.status_code, NeuroMemError)
    kwargs: dict[str, Any] = {
        "status": response.status_code,
        "code": code,
        "error": error,
        "request_id": response.headers.get("X-Request-ID"),
    }
    if cls in (RateLimited, Unavailable):
        kwargs["retry_after"] = retry_after_seconds(response, error)
    return cls(str(error.get("message") or ""), **kwargs)


def envelope_of(response: httpx.Response) -> dict[str, Any]:
    """A success's envelope; an answer that is none (a proxy's HTML page) is a NeuroMemError,
    not a JSON decoding error."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or "data" not in body:
        raise NeuroMemError(
            f"The answer is no NeuroMem envelope ({response.headers.get('content-type', '')}): "
            f"{response.text[:200]}",
            status=response.status_code,
            request_id=response.headers.get("X-Request-ID"),
        )
    return body


def error_from_transport(error: httpx.TransportError) -> ConnectionFailed:
    cls = RequestTimeout if isinstance(error, httpx.TimeoutException) else ConnectionFailed
    return cls(f"{type(error).__name__}: {error}" if str(error) else type(error).__name__)
