"""The Python client (clients/python) against the real service: pytest-django's `live_server`
(a real HTTP server in this process, on the test database, with the suite's Redis), API
clients made as `make api-client` makes them, and nothing of the service mocked.

Faults are real ones: the rate limit spent, a table locked with a statement timeout set on
the server's connections (PostgreSQL cancels its statements: 503 UNAVAILABLE), a port where
nothing listens, a server that never answers."""

import random
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg
import pytest
from django.core.signals import request_finished, request_started
from django.db import connection
from neuromem_client import NeuroMem

from neuromem_site.api.services import api_client_create
from tests.memories.scratch import server_url

USER = "cl:alice"
# Quick retries: the tests count attempts, they need not wait for them.
FAST = {"backoff": 0.01, "max_backoff": 5.0}


@pytest.fixture
def make_token(transactional_db) -> Callable[..., str]:
    """A new API client's token: make_token("name", ["p:"], staff=False)."""

    def make(name: str = "cl", prefixes: list[str] | None = None, *, staff: bool = False) -> str:
        prefixes = prefixes if prefixes is not None else [f"{name}:"]
        return api_client_create(name=name, user_prefixes=prefixes, is_staff=staff)[1]

    return make


@pytest.fixture
def token(make_token) -> str:
    """The token of the API client `cl`, for the end users `cl:…`."""
    return make_token()


@pytest.fixture
def make_nm(live_server, token) -> Iterator[Callable[..., NeuroMem]]:
    """A NeuroMem client of the live server: make_nm(token=None, **options), by default
    as the client `cl`."""
    made: list[NeuroMem] = []

    def make(other_token: str | None = None, **options) -> NeuroMem:
        client = NeuroMem(live_server.url, other_token or token, **{**FAST, **options})
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture
def nm(make_nm) -> NeuroMem:
    """A client for the end users `cl:…`."""
    return make_nm()


@pytest.fixture
def staff(make_nm, make_token) -> NeuroMem:
    return make_nm(make_token("ops", [], staff=True))


@pytest.fixture
def served() -> Iterator[list[tuple[str, str]]]:
    """(method, path) of every request the live server takes, in order."""
    seen: list[tuple[str, str]] = []

    def record(sender, environ, **kwargs) -> None:
        seen.append((environ["REQUEST_METHOD"], environ["PATH_INFO"]))

    request_started.connect(record)
    yield seen
    request_started.disconnect(record)


@contextmanager
def table_locked(table: str, *, statement_timeout_ms: int | None) -> Iterator[None]:
    """`table` locked by another session; with `statement_timeout_ms`, the requests the
    server takes meanwhile cancel any statement that waits that long (SQLSTATE 57014: the
    service answers 503 UNAVAILABLE), without it they wait until the lock goes. On the way
    out, waits for the server to finish them: the test database is flushed next."""
    in_flight = threading.Semaphore(0)
    # By the serving thread: a request answered before the lock may signal its end inside it
    # (Django sends request_finished when the server closes the response, after the client
    # has read it), and that end must not stand for one still waiting on the lock.
    started: list[int] = []

    def begin(sender, **kwargs) -> None:
        started.append(threading.get_ident())
        if statement_timeout_ms is not None:
            # In the server's request thread, on the connection it will use (a kept-alive
            # client connection keeps its thread, and that thread its database connection).
            with connection.cursor() as cursor:
                cursor.execute(f"SET statement_timeout = {statement_timeout_ms}")

    def end(sender, **kwargs) -> None:
        if threading.get_ident() in started:
            in_flight.release()

    request_started.connect(begin)
    request_finished.connect(end)
    url = server_url(connection.settings_dict["NAME"])
    try:
        with psycopg.connect(url) as locker:
            locker.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            yield
            locker.rollback()
        for _ in started:
            in_flight.acquire(timeout=10)
    finally:
        request_started.disconnect(begin)
        request_finished.disconnect(end)


@contextmanager
def tcp_server(answer: Callable[[socket.socket], None]) -> Iterator[tuple[str, list[int]]]:
    """A TCP server on 127.0.0.1 that hands each connection to `answer` in a thread; yields
    its URL and a list that counts the connections it accepted."""
    accepted: list[int] = []
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()
    open_connections: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            accepted.append(1)
            open_connections.append(conn)
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", accepted
    finally:
        stop.set()
        thread.join()
        listener.close()
        for conn in open_connections:
            conn.close()


# 64 made-up words ("kalo", "mine" …): sentences of them are nobody's memories.
SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo")
WORDS = [first + second for first in SYLLABLES for second in SYLLABLES]


def sentences(count: int) -> list[str]:
    """`count` sentences of six distinct words, no two of the same words, so none restates
    another (the write path takes a near duplicate for an UPDATE, whatever the word order)."""
    rng = random.Random(32)
    seen: set[frozenset[str]] = set()
    made: list[str] = []
    while len(made) < count:
        words = rng.sample(WORDS, 6)
        if frozenset(words) not in seen:
            seen.add(frozenset(words))
            made.append(" ".join(words))
    return made
