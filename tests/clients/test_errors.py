"""Each error class from a real answer of the service (or a real absence of one), and when the
client retries: 429, 503 and no answer, for idempotent calls only."""

import time
import uuid

import pytest
from neuromem_client import (
    Conflict,
    ConnectionFailed,
    Forbidden,
    NeuroMem,
    NeuroMemError,
    NotFound,
    RateLimited,
    RequestTimeout,
    Unauthorized,
    Unavailable,
    ValidationFailed,
)

from neuromem_site.api.throttling import ApiClientRateThrottle
from tests.clients.conftest import USER, table_locked, tcp_server

MEMORIES = ("GET", "/api/v1/memories/")
WRITE = ("POST", "/api/v1/memories/")


def test_validation_failed_names_the_field(nm: NeuroMem):
    with pytest.raises(ValidationFailed) as raised:
        nm.memories.add(USER, " ")
    assert (raised.value.status, raised.value.code, raised.value.field) == (
        400,
        "VALIDATION_ERROR",
        "content",
    )
    assert raised.value.details == {"content": [raised.value.message]}
    assert raised.value.request_id
    with pytest.raises(ValidationFailed) as raised:
        next(nm.memories.list(USER, page_size=500))
    assert raised.value.field == "limit" and raised.value.error["maxAllowed"] == 200
    assert str(raised.value) == (
        "VALIDATION_ERROR: Parameter 'limit' exceeds maximum value of 200 (field limit)"
    )


def test_unauthorized_forbidden_not_found(nm: NeuroMem, make_nm):
    with pytest.raises(Unauthorized) as raised:
        make_nm("nm_" + "x" * 43).whoami()
    assert raised.value.status == 401
    with pytest.raises(Forbidden) as raised:
        nm.memories.add("elsewhere:bob", "I like tea")
    assert (raised.value.status, raised.value.code) == (403, "FORBIDDEN")
    with pytest.raises(NotFound) as raised:
        nm.memories.get(str(uuid.uuid4()))
    assert (raised.value.status, raised.value.code) == (404, "NOT_FOUND")
    assert isinstance(raised.value, NeuroMemError)


def test_conflict_carries_the_current_version(nm: NeuroMem):
    memory = nm.memories.add(USER, "I like green tea")["memory"]
    nm.memories.update(memory["id"], version=1, importance=0.7)
    with pytest.raises(Conflict) as raised:
        nm.memories.update(memory["id"], version=1, importance=0.2)
    assert (raised.value.field, raised.value.current_version) == ("version", 2)
    nm.memories.add(USER, "I live in Oslo", key="home")
    with pytest.raises(Conflict) as raised:
        nm.memories.add(USER, "I live in Bergen", key="home")
    assert raised.value.field == "key" and raised.value.current_version is None


@pytest.fixture
def rate_limit(monkeypatch):
    """The rate limit at `per_minute`, `at` seconds into a fixed window (Retry-After is the
    rest of it, rounded up); after `next_window_after` refusals the window turns, as time
    would."""
    clock = {"now": 60 * 29_000_000 + 59.5, "refused": 0, "turn_after": None}
    allow = ApiClientRateThrottle.allow_request

    def allow_request(self, request, view):
        allowed = allow(self, request, view)
        if not allowed:
            clock["refused"] += 1
            if clock["refused"] == clock["turn_after"]:
                clock["now"] += 60
        return allowed

    def limit(per_minute: int, *, at: float = 59.5, next_window_after: int | None = None):
        monkeypatch.setattr(
            ApiClientRateThrottle, "THROTTLE_RATES", {"api_client": f"{per_minute}/min"}
        )
        monkeypatch.setattr(ApiClientRateThrottle, "timer", lambda self: clock["now"])
        monkeypatch.setattr(ApiClientRateThrottle, "allow_request", allow_request)
        clock["now"] = 60 * 29_000_000 + at
        clock["turn_after"] = next_window_after
        return clock

    return limit


def test_a_rate_limited_read_is_retried_until_the_window_turns(make_nm, rate_limit, served):
    nm = make_nm(max_retries=3)
    rate_limit(1, next_window_after=1)  # Retry-After: 1
    assert list(nm.memories.list(USER)) == []  # the window's one request
    served.clear()
    started = time.monotonic()
    assert list(nm.memories.list(USER)) == []
    assert served == [MEMORIES] * 2  # refused, then the next window
    assert time.monotonic() - started >= 1.0


def test_a_rate_limited_write_is_not_retried(make_nm, rate_limit, served):
    nm = make_nm(max_retries=3)
    rate_limit(1, at=58.5)
    nm.whoami()
    served.clear()
    with pytest.raises(RateLimited) as raised:
        nm.memories.add(USER, "I like tea")
    assert served == [WRITE]
    assert (raised.value.status, raised.value.code, raised.value.retry_after) == (
        429,
        "RATE_LIMITED",
        2.0,
    )


def test_a_read_waits_the_retry_after_then_gives_up(make_nm, rate_limit, served):
    nm = make_nm(max_retries=1)
    rate_limit(1, at=59.5)  # Retry-After: 1
    nm.whoami()
    served.clear()
    started = time.monotonic()
    with pytest.raises(RateLimited):
        nm.whoami()
    assert time.monotonic() - started >= 1.0
    assert len(served) == 2


def test_a_retry_after_beyond_max_backoff_fails_at_once(make_nm, rate_limit, served):
    nm = make_nm(max_retries=3, max_backoff=5.0)
    rate_limit(1, at=20.0)  # Retry-After: 40
    nm.whoami()
    served.clear()
    with pytest.raises(RateLimited) as raised:
        nm.whoami()
    assert raised.value.retry_after == 40.0 and len(served) == 1


def test_unavailable_reads_are_retried_writes_are_not(make_nm, served, settings):
    settings.DATABASE_RETRY_AFTER = 0
    nm = make_nm(max_retries=2)
    nm.whoami()  # the client's default agent exists before the table is locked
    served.clear()
    with table_locked("memories", statement_timeout_ms=300):
        with pytest.raises(Unavailable) as raised:
            list(nm.memories.list(USER))
        assert served == [MEMORIES] * 3
        assert (raised.value.status, raised.value.code, raised.value.retry_after) == (
            503,
            "UNAVAILABLE",
            0.0,
        )
        served.clear()
        with pytest.raises(Unavailable):
            nm.memories.add(USER, "I like tea")
        assert served == [WRITE]
    assert nm.memories.add(USER, "I like tea")["operation"] == "ADD"


def test_a_read_that_outlasts_the_timeout(make_nm, served):
    nm = make_nm(timeout=0.5, max_retries=1)
    nm.whoami()
    served.clear()
    with table_locked("memories", statement_timeout_ms=None):
        started = time.monotonic()
        with pytest.raises(RequestTimeout) as raised:
            list(nm.memories.list(USER))
        assert 1.0 <= time.monotonic() - started < 5
        assert served == [MEMORIES] * 2
        assert raised.value.status is None and isinstance(raised.value, ConnectionFailed)
        served.clear()
        with pytest.raises(RequestTimeout):
            nm.memories.add(USER, "I like tea")
        assert served == [WRITE]


def hang_up(conn) -> None:
    conn.close()


def test_no_answer_is_retried_for_reads_only():
    with tcp_server(hang_up) as (url, accepted):
        nm = NeuroMem(url, "nm_token", max_retries=2, backoff=0.01)
        with pytest.raises(ConnectionFailed) as raised:
            nm.whoami()
        assert len(accepted) == 3 and not isinstance(raised.value, RequestTimeout)
        accepted.clear()
        with pytest.raises(ConnectionFailed):
            nm.memories.add(USER, "I like tea")
        assert len(accepted) == 1
        # DELETEs whose repeat answers otherwise: a purge's counts would be zeros, an unlink
        # NotFound.
        memory = str(uuid.uuid4())
        for delete in (lambda: nm.users.purge(USER), lambda: nm.memories.unlink(memory, memory)):
            accepted.clear()
            with pytest.raises(ConnectionFailed):
                delete()
            assert len(accepted) == 1
        nm.close()


def html_page(conn) -> None:
    conn.recv(65536)
    page = b"<html>Sign in to the proxy</html>"
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: "
        + str(len(page)).encode()
        + b"\r\nConnection: close\r\n\r\n"
        + page
    )
    conn.close()


def test_an_answer_that_is_no_envelope_is_a_neuromem_error():
    """A proxy's sign-in page, with 200: a NeuroMemError like every failure."""
    with tcp_server(html_page) as (url, _):
        nm = NeuroMem(url, "nm_token", max_retries=0)
        with pytest.raises(NeuroMemError) as raised:
            nm.whoami()
        assert raised.value.status == 200 and "Sign in to the proxy" in raised.value.message
        nm.close()


def test_a_server_that_never_answers():
    with tcp_server(lambda conn: None) as (url, accepted):
        nm = NeuroMem(url, "nm_token", timeout=0.2, max_retries=1, backoff=0.01)
        with pytest.raises(RequestTimeout):
            nm.whoami()
        assert len(accepted) == 2
        nm.close()
