"""The database or Redis away, on the real stack of tests/test_faults.py.

While PostgreSQL cannot be reached, every route answers 503 UNAVAILABLE with Retry-After (REST,
a seed 004 route, MCP over HTTP and over stdio, the admin), none waits longer than the connect
timeout, and the first requests after it returns succeed. Writes stored while Redis (the
Celery broker) was down or hung are all `ready` within two minutes of its return, each
embedded once.

The database is taken away through a relay: a Unix socket in front of the test's PostgreSQL,
which the stack connects through and the test cuts (every connection closed, new ones
refused, as when the server stops) or stalls (new connections accepted, never answered).
"""

import json
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from urllib.parse import quote, urlencode

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from mcp import StdioServerParameters

from memories.models import EmbeddingStatus, Memory
from tests import test_faults
from tests.mcp.conftest import mcp_session, stdio_command, stdio_environment
from tests.memories.scratch import BASE_DIR, server_url
from tests.test_faults import ANSWER_BOUND, FakeEmbeddings, Stack, write

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# The fault tests' fixtures: the stack, its Redis, the embedding provider, an API token.
make_stack, own_redis, provider, token = (
    test_faults.make_stack,
    test_faults.own_redis,
    test_faults.provider,
    test_faults.token,
)

USER = "faults:alice"
# The stack's connections, to find them in pg_stat_activity.
APPLICATION_NAME = "neuromem-outages"
# The target: every write stored during the outage is ready this long after it ends.
READY_AFTER_RETURN = 120.0


def pipe(source: socket.socket, target: socket.socket) -> None:
    """Copy `source` to `target` until either closes, then close both ways."""
    with suppress(OSError):
        while data := source.recv(65536):
            target.sendall(data)
    for sock in (source, target):
        with suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class DatabaseRelay:
    """A Unix socket relaying to the test's PostgreSQL; `url` reaches the test database
    through it."""

    def __init__(self, directory: Path) -> None:
        db = settings.DATABASES["default"]
        port = str(db["PORT"] or 5432)
        self.upstream = Path(db["HOST"]) / f".s.PGSQL.{port}"
        self.path = directory / self.upstream.name
        query = urlencode({"host": directory, "port": port, "application_name": APPLICATION_NAME})
        user, password = quote(db["USER"] or "", safe=""), quote(db["PASSWORD"] or "", safe="")
        database = connection.settings_dict["NAME"]
        self.url = f"postgresql://{user}:{password}@/{database}?{query}"
        self.listener: socket.socket | None = None
        self.stalled = False
        self.sockets: list[socket.socket] = []

    def open(self) -> None:
        """Relay new connections."""
        self.stalled = False
        if self.listener is None:
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(str(self.path))
            listener.listen(64)
            listener.settimeout(0.1)  # so the accepting thread sees a cut
            self.listener = listener
            threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """As a stopped server: every relayed connection closed, new ones refused."""
        listener, self.listener = self.listener, None
        if listener is not None:
            listener.close()
            self.path.unlink()
        self._close_all()

    def stall(self) -> None:
        """As a server that does not answer: new connections accepted and left unanswered."""
        self.open()
        self.stalled = True
        self._close_all()

    def _accept(self, listener: socket.socket) -> None:
        while self.listener is listener:
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.setblocking(True)
            self.sockets.append(client)
            if self.stalled:
                continue
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.connect(str(self.upstream))
            self.sockets.append(server)
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=pipe, args=(source, target), daemon=True).start()

    def _close_all(self) -> None:
        sockets, self.sockets = self.sockets, []
        for sock in sockets:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


@pytest.fixture
def relay(transactional_db) -> Iterator[DatabaseRelay]:
    # A short directory: a Unix socket path must stay under ~100 bytes.
    directory = Path(tempfile.mkdtemp(prefix="pgrelay-", dir="/tmp"))
    database_relay = DatabaseRelay(directory)
    database_relay.open()
    yield database_relay
    database_relay.cut()
    shutil.rmtree(directory)


MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
MCP_LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def routes(n: int) -> dict[str, tuple[str, str, dict | None, dict[str, str] | None]]:
    """One request per kind of API route: name → (method, path, body, headers)."""
    return {
        "REST write": (
            "POST",
            "/api/v1/memories/",
            {"user_id": USER, "content": f"written at step {n}", "memory_type": "fact"},
            None,
        ),
        "REST read": ("GET", f"/api/v1/memories/?user_id={USER}", None, None),
        "seed route": (
            "POST",
            "/add_memory",
            {"user_id": USER, "key": f"step-{n}", "value": {"text": f"seeded at step {n}"}},
            None,
        ),
        "MCP over HTTP": ("POST", "/mcp", MCP_LIST_TOOLS, MCP_HEADERS),
    }


def assert_unavailable(stack: Stack, token: str, n: int) -> None:
    for name, (method, path, body, headers) in routes(n).items():
        status, answered, raw, elapsed = stack.exchange(method, path, body, token, headers)
        assert status == 503, (name, status, raw[:300], stack.logs())
        assert answered["Content-Type"] == "application/json", (name, answered["Content-Type"])
        assert json.loads(raw)["error"] == {
            "code": "UNAVAILABLE",
            "message": "The database is unavailable; try again shortly.",
            "retry_after": 5,
        }, name
        assert answered["Retry-After"] == "5", name
        assert elapsed < ANSWER_BOUND, (name, elapsed)


def test_the_database_away_answers_503_with_retry_after_then_recovers(make_stack, relay, token):
    stack = make_stack("web", DATABASE_URL=relay.url, DATABASE_CONNECT_TIMEOUT="2")
    for n in range(4):  # each gunicorn worker holds a connection
        assert write(stack, token, f"before the outage {n}")[0] == 201

    relay.cut()
    for n in range(3):  # the workers' broken connections first, then refused ones
        assert_unavailable(stack, token, n)
    # The admin, outside DRF: a session to look up; plain text there.
    status, answered, raw, elapsed = stack.exchange(
        "GET", "/admin/", headers={"Cookie": f"sessionid={'s' * 32}"}
    )
    assert (status, answered["Content-Type"], answered["Retry-After"]) == (503, "text/plain", "5")
    assert raw == b"The database is unavailable; try again shortly."
    status, _, body, elapsed = stack.request("GET", "/api/v1/health/")
    assert (status, body["data"]["checks"]["database"]["ok"]) == (503, False)
    assert elapsed < ANSWER_BOUND

    relay.stall()  # new connections wait out DATABASE_CONNECT_TIMEOUT
    assert_unavailable(stack, token, 3)

    relay.open()
    for n in range(4, 8):  # the first requests after its return succeed, on both workers
        for name, (method, path, body, headers) in routes(n).items():
            status, _, raw, _ = stack.exchange(method, path, body, token, headers)
            assert status in (200, 201), (name, status, raw[:300], stack.logs())
    assert "Traceback" not in (stack.tmp_path / "web.log").read_text()
    # What answered 503 left nothing behind.
    written = set(Memory.objects.filter(user_id=USER).values_list("content", flat=True))
    assert {f"written at step {n}" for n in range(4)}.isdisjoint(written)
    assert {f"written at step {n}" for n in range(4, 8)} <= written


def test_a_connection_the_database_ended_is_replaced_before_the_next_request(
    make_stack, relay, token
):
    stack = make_stack("web", DATABASE_URL=relay.url)
    for n in range(4):
        assert write(stack, token, f"before the restart {n}")[0] == 201

    # As a restarted PostgreSQL does to them (57P01, "terminating connection due to
    # administrator command").
    with psycopg.connect(server_url("postgres"), autocommit=True) as admin:
        ended = admin.execute(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE application_name = %s",
            [APPLICATION_NAME],
        ).fetchone()[0]
    assert ended >= 1

    for n in range(6):  # CONN_HEALTH_CHECKS: each worker replaces its connection first
        status, body, _ = write(stack, token, f"after the restart {n}")
        assert status == 201, (body, stack.logs())


def test_mcp_tools_answer_unavailable_while_the_database_is_away(relay, token):
    environment = {
        **stdio_environment(token),
        "DATABASE_URL": relay.url,
        "DATABASE_CONNECT_TIMEOUT": "2",
    }
    command, *args = stdio_command()
    server = StdioServerParameters(command=command, args=args, env=environment, cwd=str(BASE_DIR))
    add = {"user_id": USER, "memory_type": "fact"}
    with mcp_session(server) as mcp:
        assert mcp.data("memory_add", content="before the outage", **add)["operation"] == "ADD"
        relay.cut()
        assert mcp.error("memory_add", content="during the outage", **add) == {
            "code": "UNAVAILABLE",
            "message": "The database is unavailable; try again shortly.",
            "retry_after": 5,
        }
        relay.open()
        assert mcp.data("memory_add", content="after the outage", **add)["operation"] == "ADD"
    written = set(Memory.objects.filter(user_id=USER).values_list("content", flat=True))
    assert written == {"before the outage", "after the outage"}


def write_through(stack: Stack, token: str, seconds: float, label: str) -> list[str]:
    """Write for `seconds`, every write answered 201 in time; the memories' ids."""
    ids = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status, body, elapsed = write(stack, token, f"{label} {len(ids)}")
        assert status == 201 and elapsed < ANSWER_BOUND, (status, body, elapsed)
        ids.append(body["data"]["memory"]["id"])
        time.sleep(0.2)
    return ids


def wait_all_ready(ids: list[str], stack: Stack, timeout: float) -> float:
    """Seconds until every memory of `ids` is `ready`; fails after `timeout`."""
    started = time.monotonic()
    while True:
        states = Counter(
            Memory.objects.filter(pk__in=ids).values_list("embedding_status", flat=True)
        )
        if states[EmbeddingStatus.READY] == len(ids):
            return time.monotonic() - started
        assert time.monotonic() - started < timeout, f"{dict(states)}\n{stack.logs()}"
        time.sleep(0.5)


def assert_embedded_once(ids: list[str]) -> None:
    contents = Memory.objects.filter(pk__in=ids).values_list("content", flat=True)
    embedded = Counter(FakeEmbeddings.texts)
    assert {content: embedded[content] for content in contents} == dict.fromkeys(contents, 1)


def test_writes_stored_while_redis_was_down_are_ready_soon_after_it_returns(
    make_stack, own_redis, token
):
    stack = make_stack("web", "worker", "beat")  # the sweep's defaults: every 30 s, 20 s grace
    own_redis.kill()
    ids = write_through(stack, token, 30, "written while Redis was down")
    assert Memory.objects.filter(pk__in=ids, embedding_status=EmbeddingStatus.PENDING).count() == (
        len(ids)
    )

    own_redis.restart()
    took = wait_all_ready(ids, stack, READY_AFTER_RETURN)
    print(f"{len(ids)} writes stored while Redis was down: all ready {took:.0f} s after its return")
    assert_embedded_once(ids)


def test_writes_stored_while_redis_hung_are_ready_soon_after_it_answers(
    make_stack, own_redis, token
):
    stack = make_stack("web", "worker", "beat")
    assert write(stack, token, "before the hang")[0] == 201  # the web's broker connection is up
    os.kill(own_redis.process.pid, signal.SIGSTOP)
    try:
        ids = write_through(stack, token, 20, "written while Redis hung")
    finally:
        os.kill(own_redis.process.pid, signal.SIGCONT)
    took = wait_all_ready(ids, stack, READY_AFTER_RETURN)
    print(f"{len(ids)} writes stored while Redis hung: all ready {took:.0f} s after it answered")
    assert_embedded_once(ids)
