"""What the synchronous and the asynchronous clients share: their options, when to retry,
how arguments become a request, and how an operation's requests are carried out."""

from __future__ import annotations

import json
import random
from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, NamedTuple, TypeAlias, TypeVar
from urllib.parse import quote

import httpx

from neuromem_client.errors import (
    ConnectionFailed,
    NeuroMemError,
    RateLimited,
    Unavailable,
    ValidationFailed,
    error_from_response,
    error_from_transport,
)

VERSION = "1.0.1"
API_PREFIX = "/api/v1"
# Methods a repeat cannot do twice: a GET reads, a PUT sets, a DELETE of what is gone changes
# nothing. POSTs that are idempotent all the same say so call by call.
IDEMPOTENT_METHODS = frozenset({"GET", "PUT", "DELETE"})
# The service's caps: items per POST /memories/batch/ (MEMORY_BATCH_MAX), a page (1–200).
BATCH_MAX = 1000
PAGE_MAX = 200
T = TypeVar("T")


def segment(value: object) -> str:
    """`value` as one URL path segment, every reserved character escaped: the service acts on
    the id named ("a%62" is not "ab"; "?" and "#" do not end the path; "." and ".." are no
    dot segments, which a URL resolves away)."""
    quoted = quote(str(value), safe="")
    return quoted.replace(".", "%2E") if quoted in (".", "..") else quoted


@dataclass(frozen=True)
class ClientOptions:
    """How a client reaches the service.

    - `base_url`: the service's root (`http://127.0.0.1:8000`); the client adds `/api/v1`.
    - `timeout`: seconds for each attempt (connect, each read, each write).
    - `max_retries`: further attempts of an idempotent call after a 429, a 503 or no answer.
    - `backoff`: the first wait in seconds, doubled at each retry (with jitter), at most
      `max_backoff`; a Retry-After from the service is waited instead when it is longer, and
      a call whose Retry-After exceeds `max_backoff` fails at once rather than sleep.
    - `headers`: added to every request (`X-NeuroMem-Agent`, `X-NeuroMem-Session`).
    """

    base_url: str
    token: str
    timeout: float = 30.0
    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 30.0
    headers: dict[str, str] = field(default_factory=dict)

    def http_options(self) -> dict[str, Any]:
        """httpx.Client / AsyncClient keyword arguments."""
        return {
            "base_url": self.base_url.rstrip("/") + API_PREFIX,
            "timeout": httpx.Timeout(self.timeout),
            "headers": {
                "Authorization": f"Bearer {self.token}",
                "User-Agent": f"neuromem-client/{VERSION}",
                "Accept": "application/json",
                **self.headers,
            },
        }


def retry_delay(
    options: ClientOptions, attempt: int, failure: NeuroMemError, retryable: bool
) -> float | None:
    """Seconds to wait before attempt `attempt + 1`, or None to give up with `failure`."""
    if not retryable or attempt >= options.max_retries:
        return None
    if not isinstance(failure, RateLimited | Unavailable | ConnectionFailed):
        return None
    backoff = min(options.max_backoff, options.backoff * 2**attempt)
    backoff *= random.uniform(0.8, 1.0)  # clients retrying together spread out
    asked = getattr(failure, "retry_after", None)
    if asked is None:
        return backoff
    if asked > options.max_backoff:
        return None
    return max(asked, backoff)


class Request(NamedTuple):
    """One call of the API, `path` under /api/v1; `idempotent` as `NeuroMem.request` takes it."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    idempotent: bool | None = None


class Retry:
    """One request's attempts: `after(outcome)` is the wait before the next attempt, or
    raises the failure the outcome stands for when the request may not be repeated."""

    def __init__(self, options: ClientOptions, request: Request) -> None:
        self.options = options
        self.retryable = (
            request.method.upper() in IDEMPOTENT_METHODS
            if request.idempotent is None
            else request.idempotent
        )
        self.attempt = 0

    def after(self, outcome: httpx.Response | httpx.TransportError) -> float:
        failure: NeuroMemError
        if isinstance(outcome, httpx.TransportError):
            failure = error_from_transport(outcome)
            failure.__cause__ = outcome
        else:
            failure = error_from_response(outcome)
        delay = retry_delay(self.options, self.attempt, failure, self.retryable)
        if delay is None:
            raise failure
        self.attempt += 1
        return delay


# An operation written once, as a generator of the requests it needs, sent each answer's
# JSON (or thrown its error); the sync client carries it out with blocking calls, the async
# one with awaited ones.
Steps: TypeAlias = Generator[Request, Any, T]


class Operation(Generic[T]):
    """Steps in progress: `next(outcome)` hands the last answer (a NeuroMemError is thrown
    in) and answers the next request, or None once `result` is known."""

    def __init__(self, steps: Steps[T]) -> None:
        self._steps = steps
        self.result: T

    def next(self, outcome: Any) -> Request | None:
        try:
            if isinstance(outcome, NeuroMemError):
                return self._steps.throw(outcome)
            return self._steps.send(outcome)
        except StopIteration as done:
            self.result = done.value
            return None


def data(
    method: str,
    path: str,
    *,
    params: dict[str, Any] | None = None,
    json: Any = None,
    idempotent: bool | None = None,
) -> Steps[Any]:
    """One request, answering the envelope's `data`."""
    answer = yield Request(method, path, params, json, idempotent)
    return answer["data"]


def page(
    path: str, params: dict[str, Any], cursor: str | None
) -> Steps[tuple[list[Any], str | None]]:
    """A page of a paged route: its items and the cursor of the next page (None on the last)."""
    page_params = params if cursor is None else {**params, "cursor": cursor}
    answer = yield Request("GET", path, page_params)
    return answer["data"], answer["page"]["next"]


def http_arguments(request: Request) -> dict[str, Any]:
    """httpx's arguments for `request`, its JSON body encoded here: what JSON cannot carry (NaN,
    a lone surrogate) is refused as the service refuses it, before anything is sent."""
    sent: dict[str, Any] = {"method": request.method, "url": request.path, "params": request.params}
    if request.json is not None:
        try:
            sent["content"] = json.dumps(request.json, allow_nan=False, ensure_ascii=False).encode()
        except ValueError as error:  # UnicodeEncodeError too
            raise ValidationFailed(
                f"The request cannot be sent as JSON: {error}", code="VALIDATION_ERROR"
            ) from error
        sent["headers"] = {"Content-Type": "application/json"}
    return sent


def wire(value: Any) -> Any:
    """A value as JSON carries it: datetimes as ISO 8601 (naive ones are the service's UTC)."""
    return value.isoformat() if isinstance(value, datetime) else value


def body(**fields: Any) -> dict[str, Any]:
    """A JSON body of the fields given (None: not given)."""
    return {name: wire(value) for name, value in fields.items() if value is not None}


def query_params(**params: Any) -> dict[str, Any]:
    """Query parameters of the ones given: booleans as the service spells them, a sequence
    (of states) as its comma list."""
    return {name: query_value(value) for name, value in params.items() if value is not None}


def query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(value)
    return wire(value)


def soul_path(agent_id: int | None, rest: str = "") -> str:
    """A SOUL route: the caller's default agent, or `agent_id`."""
    prefix = "/soul/" if agent_id is None else f"/agents/{segment(agent_id)}/soul/"
    return prefix + rest


def batches(items: list[Any], size: int) -> list[tuple[int, list[Any]]]:
    """`items` in slices of at most `size`, each with the index of its first item."""
    if not 1 <= size <= BATCH_MAX:
        raise ValueError(f"batch_size must be 1–{BATCH_MAX}")
    return [(start, items[start : start + size]) for start in range(0, len(items), size)]


def reindexed(results: list[dict[str, Any]], start: int) -> list[dict[str, Any]]:
    """A slice's batch results, their `index` counted in the whole list."""
    if start:
        for result in results:
            result["index"] += start
    return results
