"""Read replicas (core/db/replicas.py), against a real streaming replica of the test's embedded
PostgreSQL made with pg_basebackup, behind the real web service of tests/test_faults.py.

Recall, search, listing and export read from the replica; a client that wrote within
REPLICA_READ_AFTER_WRITE_S reads its own writes from the primary; a replica further behind
than that, or away, is skipped. The replica's replay is paused to tell the two databases
apart: what was written after the pause is on the primary only.
"""

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection

from core.db import replicas
from core.db.replicas import LAG_SQL, ReplicaRouter, lagging_read, read_alias, write_noted
from memories.models import Memory
from memories.services import forgetting
from neuromem_site.api.services import api_client_create
from neuromem_site.dev_services import stop_process_group
from tests import test_faults
from tests.test_faults import Stack

make_stack, own_redis, provider = (
    test_faults.make_stack,
    test_faults.own_redis,
    test_faults.provider,
)

USER = "faults:alice"
# REPLICA_READ_AFTER_WRITE_S in the stack: long enough for a few requests, short to wait out.
WINDOW = 8.0


class Replica:
    """A hot standby of the test's PostgreSQL, streaming from it, on a socket of its own."""

    def __init__(self, directory: Path) -> None:
        primary = settings.DATABASES["default"]
        self.port = str(primary["PORT"] or 5432)
        self.directory = directory
        self.data = directory / "data"
        self.log = directory / "postgres.log"
        with connection.cursor() as cursor:
            cursor.execute("SHOW data_directory")
            (primary_data,) = cursor.fetchone()
        # PostgreSQL refuses to run as root: as the primary's owner then (pgserver's user).
        owner_uid = os.stat(primary_data).st_uid
        self.owner = pwd.getpwuid(owner_uid).pw_name if os.geteuid() == 0 else None
        if self.owner:
            os.chown(directory, owner_uid, -1)
        bin_dir = Path(shutil.which("pg_basebackup") or "").parent
        if not (bin_dir / "postgres").exists():
            from pgserver._commands import POSTGRES_BIN_PATH

            bin_dir = POSTGRES_BIN_PATH
        self.bin = bin_dir
        subprocess.run(
            [
                self.bin / "pg_basebackup",
                "--pgdata",
                self.data,
                "--write-recovery-conf",
                "--wal-method=stream",
                "--checkpoint=fast",
                "--host",
                primary["HOST"],
                "--port",
                self.port,
                "--username",
                primary["USER"] or "postgres",
            ],
            user=self.owner,
            check=True,
            capture_output=True,
            timeout=300,
        )
        database = connection.settings_dict["NAME"]
        self.url = (
            f"postgresql://{quote(primary['USER'] or '')}:@/{database}"
            f"?host={quote(str(directory), safe='')}&port={self.port}"
        )
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [
                    self.bin / "postgres",
                    "-D",
                    self.data,
                    "-h",
                    "",
                    "-k",
                    self.directory,
                    "-p",
                    self.port,
                    "-c",
                    "shared_buffers=128MB",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                user=self.owner,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(self.url, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                assert self.process.poll() is None, self.log.read_text()[-2000:]
                assert time.monotonic() < deadline, self.log.read_text()[-2000:]
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process is not None:
            stop_process_group(self.process, signal.SIGINT)
            self.process = None

    def sql(self, statement: str, params: list | None = None) -> list[tuple]:
        with psycopg.connect(self.url, autocommit=True) as replica:
            return replica.execute(statement, params).fetchall()

    def wait_for(self, memory_id: str) -> None:
        deadline = time.monotonic() + 30
        while not self.sql("SELECT 1 FROM memories WHERE id = %s", [memory_id]):
            assert time.monotonic() < deadline, "the replica did not replay the write"
            time.sleep(0.1)


@pytest.fixture
def replica(transactional_db) -> Iterator[Replica]:
    if not str(settings.DATABASES["default"]["HOST"]).startswith("/"):
        pytest.skip("a replica is made of the embedded PostgreSQL only (a Unix socket)")
    # A short directory: a Unix socket path must stay under ~100 bytes.
    directory = Path(tempfile.mkdtemp(prefix="pgreplica-", dir="/tmp"))
    standby = Replica(directory)
    standby.start()
    yield standby
    standby.stop()
    shutil.rmtree(directory, ignore_errors=True)


def replica_stack(make_stack, replica: Replica) -> Stack:
    return make_stack(
        "web",
        DATABASE_REPLICA_URLS=replica.url,
        REPLICA_READ_AFTER_WRITE_S=str(WINDOW),
        REPLICA_CHECK_SECONDS="0.2",
    )


def write(stack: Stack, token: str, content: str) -> str:
    status, body, _ = test_faults.write(stack, token, content)
    assert status == 201, (body, stack.logs())
    return body["data"]["memory"]["id"]


def listed(stack: Stack, token: str) -> set[str]:
    status, _, body, _ = stack.request("GET", f"/api/v1/memories/?user_id={USER}", token=token)
    assert status == 200, (body, stack.logs())
    return {memory["id"] for memory in body["data"]}


def recalled(stack: Stack, token: str, query: str) -> set[str]:
    status, _, body, _ = stack.request(
        "POST", "/api/v1/recall/", {"user_id": USER, "query": query}, token
    )
    assert status == 200, (body, stack.logs())
    return {hit["id"] for hit in body["data"]["merged"]}


def exported(stack: Stack, token: str) -> set[str]:
    status, _, body, _ = stack.request("GET", f"/api/v1/users/{USER}/export/", token=token)
    assert status == 200, (body, stack.logs())
    return {memory["id"] for memory in body["data"]["memories"]}


def searched(stack: Stack, token: str, query: str) -> set[str]:
    status, _, body, _ = stack.request(
        "GET", f"/api/v1/search/?user_id={USER}&q={quote(query)}", token=token
    )
    assert status == 200, (body, stack.logs())
    return {hit["id"] for hit in body["data"]}


@pytest.mark.slow
def test_lagging_reads_come_from_the_replica_and_a_writer_reads_its_own_writes(make_stack, replica):
    writer = api_client_create(name="replica-writer", user_prefixes=["faults:"])[1]
    reader = api_client_create(name="replica-reader", user_prefixes=["faults:"])[1]
    stack = replica_stack(make_stack, replica)
    violin = write(stack, writer, "The user plays the violin")
    replica.wait_for(violin)

    replica.sql("SELECT pg_wal_replay_pause()")
    cello = write(stack, writer, "The user plays the cello")
    # The writer wrote a moment ago: the primary answers it.
    assert {violin, cello} <= listed(stack, writer)
    assert cello in recalled(stack, writer, "cello")
    # The reader did not: the replica, which has not replayed the cello.
    assert violin in listed(stack, reader)
    assert cello not in listed(stack, reader)
    assert cello not in recalled(stack, reader, "cello")
    assert cello not in searched(stack, reader, "cello")
    assert exported(stack, reader) == {violin}
    # A memory read by id is never a lagging read.
    status, _, body, _ = stack.request("GET", f"/api/v1/memories/{cello}/", token=reader)
    assert (status, body["data"]["id"]) == (200, cello)

    # The replica falls further behind than the window: skipped, the reader sees the cello.
    deadline = time.monotonic() + WINDOW + 10
    while cello not in listed(stack, reader):
        assert time.monotonic() < deadline, stack.logs()
        time.sleep(0.5)
    assert cello in recalled(stack, reader, "cello")
    replica.sql("SELECT pg_wal_replay_resume()")
    # Caught up again: the replica answers the reader once more, the cello included.
    replica.wait_for(cello)
    assert {violin, cello} <= listed(stack, reader)


@pytest.mark.slow
def test_a_replica_away_is_skipped(make_stack, replica):
    reader = api_client_create(name="replica-reader", user_prefixes=["faults:"])[1]
    violin = Memory.objects.create(
        user_id=USER, memory_type="fact", content="The user plays the violin"
    ).id
    replica.wait_for(str(violin))
    stack = replica_stack(make_stack, replica)
    assert listed(stack, reader) == {str(violin)}

    replica.stop()
    # The web workers' replica connections are broken and new ones refused: read again on
    # the primary, first by the failed read, then by the replica's check.
    for _ in range(4):
        status, _, body, elapsed = stack.request(
            "GET", f"/api/v1/memories/?user_id={USER}", token=reader
        )
        assert (status, {m["id"] for m in body["data"]}) == (200, {str(violin)}), stack.logs()
        assert elapsed < settings.REPLICA_CONNECT_TIMEOUT + 3
        assert str(violin) in recalled(stack, reader, "violin")


def test_without_replicas_every_read_is_the_primarys(django_capture_on_commit_callbacks, db):
    assert settings.DATABASE_REPLICA_URLS == []
    assert lagging_read(caller_name="anyone", read=read_alias) == DEFAULT_DB_ALIAS
    with django_capture_on_commit_callbacks() as callbacks:
        write_noted("anyone")
    assert callbacks == []  # nothing to note without a replica
    router = ReplicaRouter()
    assert router.db_for_read(Memory) == DEFAULT_DB_ALIAS
    assert router.db_for_write(Memory) == DEFAULT_DB_ALIAS
    assert not router.allow_migrate("replica_0", "memories")
    assert router.allow_migrate(DEFAULT_DB_ALIAS, "memories")


def test_a_primary_has_no_lag(db):
    with connection.cursor() as cursor:
        cursor.execute(LAG_SQL)
        assert cursor.fetchone() == (0,)


def test_a_forget_is_noted_for_the_replicas_when_it_commits(
    make_client, transactional_db, monkeypatch
):
    """Not when its access check let it through: the topic's embedding comes between (an HTTP
    provider may take longer than the window), and a replica may still hold what it erased."""
    monkeypatch.setattr(replicas, "replica_aliases", lambda: ["replica_0"])
    http, _ = make_client("rw-forget", ["rwf:"])
    body = {
        "user_id": "rwf:alice",
        "content": "Alice lives at 12 Elm Street.",
        "memory_type": "fact",
    }
    assert http.post("/api/v1/memories/", body, format="json").status_code == 201
    events: list[str] = []
    embedded, noted = forgetting.topic_meanings, replicas._write_note

    def embedding(topics):
        events.append("embedded")
        return embedded(topics)

    def note(caller_name: str) -> None:
        events.append("noted")
        noted(caller_name)

    monkeypatch.setattr(forgetting, "topic_meanings", embedding)
    monkeypatch.setattr(replicas, "_write_note", note)
    forget = http.post("/api/v1/users/rwf:alice/forget/", {"topic": "Elm Street"}, format="json")
    assert forget.status_code == 200
    assert events[-1] == "noted" and "embedded" in events
    replicas._noted.clear()
