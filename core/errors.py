"""The errors domain code raises. Plain exceptions: services, selectors, tasks, the admin and
the MCP server share them; only the API maps them to HTTP (neuromem_site/api/envelope.py)."""

from typing import Any


class DomainError(Exception):
    """`message` for people; `field` when one input is at fault; `extra` travels with the error
    to the client (e.g. `current_version`)."""

    def __init__(self, message: str, *, field: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.extra = extra


class Invalid(DomainError):
    """The input cannot be used as given."""


class NotFound(DomainError):
    """It does not exist, or the caller may not know that it does."""


class Forbidden(DomainError):
    """The caller may not change it."""


class Refused(Forbidden):
    """Forbidden by a rule with a code of its own (the runtime guardrail's GUARD_*), which the
    client reads instead of FORBIDDEN."""

    def __init__(self, message: str, *, code: str, **extra: Any) -> None:
        super().__init__(message, **extra)
        self.code = code


class Conflict(DomainError):
    """It changed since the caller read it, or its state forbids the change."""


class Unavailable(DomainError):
    """A service it needs is down; trying again later may work, `retry_after` seconds from now
    when known (it travels to the client as `retry_after` and HTTP's Retry-After)."""

    def __init__(self, message: str, *, retry_after: int | None = None, **extra: Any) -> None:
        if retry_after is not None:
            extra["retry_after"] = retry_after
        super().__init__(message, **extra)
        self.retry_after = retry_after
