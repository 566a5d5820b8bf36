"""Faults on the real stack: gunicorn (with its production config) and a Celery worker (and
beat) against the test database and a Redis of the test's own, which the tests kill, stop
(SIGSTOP) and restart. The contract they prove is docs/security.md's "Fault contract": a write
that answers success was committed and ends `ready`, one that answers 5xx left nothing behind,
nothing hangs on Redis, nothing under /api/ is HTML."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from email.message import Message
from pathlib import Path

import psutil
import psycopg
import pytest
import redis
from celery import Celery
from django.conf import settings
from django.db import connection
from django.utils import timezone
from kombu import Connection, Producer, Queue

from core.access import Caller
from core.jobs import task_queued_or_unacknowledged
from core.redis_client import app_redis
from memories.models import EmbeddingStatus, Memory
from memories.services import MemoryInput, embeddings_requeue_stale, memory_add
from memories.services.embedding_jobs import EMBED_TASK, QUEUED_KEY
from neuromem_site import embedded
from neuromem_site.api.services import api_client_create
from neuromem_site.celery import app as celery_app
from neuromem_site.dev_services import EmbeddedRedis, stop_process_group
from tests.fake_openai import FakeOpenAIHandler, serving
from tests.memories.scratch import BASE_DIR, server_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Hang detectors, not performance thresholds: a request stuck on a hung Redis took 30 s.
ANSWER_BOUND = 10.0
READY_TIMEOUT = 60.0


class FakeEmbeddings(FakeOpenAIHandler):
    """An OpenAI-compatible /embeddings that can hold its next answer, so a task is caught
    mid-work."""

    calls = 0
    texts: list[str] = []  # every text embedded, in order
    hold = threading.Event()  # set: the next calls wait for `release`
    release = threading.Event()
    received = threading.Event()

    def answer(self, path: str, body: dict) -> tuple[int, dict]:
        type(self).calls += 1
        type(self).texts.extend(body["input"])
        if self.hold.is_set():
            self.received.set()
            self.release.wait(30)
        data = [
            {"index": i, "embedding": [1.0] + [0.0] * (body["dimensions"] - 1)}
            for i, _ in enumerate(body["input"])
        ]
        return 200, {"data": data}


@pytest.fixture
def provider() -> Iterator[str]:
    FakeEmbeddings.calls = 0
    FakeEmbeddings.texts.clear()
    for event in (FakeEmbeddings.hold, FakeEmbeddings.release, FakeEmbeddings.received):
        event.clear()
    with serving(FakeEmbeddings) as base_url:
        yield base_url
        FakeEmbeddings.release.set()


class OwnRedis(EmbeddedRedis):
    """The embedded Redis, in the test's directory: killing it leaves the suite's Redis alone."""

    @property
    def url(self) -> str:
        return embedded.redis_url(self.data_dir)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()

    def restart(self) -> None:
        self.socket.unlink(missing_ok=True)
        self.start()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Stack:
    """gunicorn + Celery worker (+ beat) as `make run` starts them, on the test database."""

    def __init__(self, tmp_path: Path, redis_server: OwnRedis, env: dict[str, str]) -> None:
        self.tmp_path = tmp_path
        self.redis = redis_server
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.hostname = f"faults-{os.getpid()}-{self.port}@%h"
        self.env = {
            **os.environ,
            "DATABASE_URL": server_url(connection.settings_dict["NAME"]),
            "REDIS_URL": redis_server.url,
            "WEB_CONCURRENCY": "2",
            "CELERY_CONCURRENCY": "1",
            **env,
        }
        self.processes: dict[str, subprocess.Popen] = {}
        # Not the current app: the suite's shared tasks must keep publishing to its own Redis.
        self.broker = Celery(
            "faults", broker=embedded.celery_redis_url(redis_server.url), set_as_current=False
        )
        self.broker.conf.broker_transport_options = {"socket_timeout": 1}

    def start(self, name: str) -> subprocess.Popen:
        commands = {
            "web": [
                "gunicorn",
                "--config",
                "python:neuromem_site.gunicorn_conf",
                "--bind",
                f"127.0.0.1:{self.port}",
                "neuromem_site.wsgi:application",
            ],
            "worker": [
                "celery",
                "-A",
                "neuromem_site",
                "worker",
                "--concurrency",
                "1",
                "--hostname",
                self.hostname,
                "--loglevel",
                "INFO",
            ],
            "beat": ["celery", "-A", "neuromem_site", "beat", "--pidfile", "", "-l", "INFO"],
        }
        with open(self.tmp_path / f"{name}.log", "a") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", *commands[name]],
                cwd=BASE_DIR,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.processes[name] = process
        return process

    def wait_web(self) -> None:
        deadline = time.monotonic() + 60
        while True:
            try:
                self.request("GET", "/api/v1/auth/whoami/")  # 401, from Django
                return
            except (urllib.error.URLError, ConnectionError):
                assert self.processes["web"].poll() is None, self.logs()
                assert time.monotonic() < deadline, f"web did not start\n{self.logs()}"
                time.sleep(0.2)

    def wait_worker(self) -> None:
        deadline = time.monotonic() + 60
        hostname = self.hostname.replace("%h", socket.gethostname())
        while not self.broker.control.ping(timeout=0.5, destination=[hostname]):
            assert self.processes["worker"].poll() is None, self.logs()
            assert time.monotonic() < deadline, f"worker did not start\n{self.logs()}"

    def stop(self, name: str) -> None:
        stop_process_group(self.processes.pop(name))

    def exchange(
        self,
        method: str,
        path: str,
        body: dict | None = None,
        token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Message, bytes, float]:
        """(status, headers, body, seconds taken)."""
        request = urllib.request.Request(f"{self.base}{path}", method=method, headers=headers or {})
        if body is not None:
            request.data = json.dumps(body).encode()
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, answered, raw = response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            status, answered, raw = error.code, error.headers, error.read()
        return status, answered, raw, time.monotonic() - started

    def request(
        self, method: str, path: str, body: dict | None = None, token: str | None = None
    ) -> tuple[int, str, dict, float]:
        """(status, Content-Type, JSON body, seconds taken)."""
        status, headers, raw, elapsed = self.exchange(method, path, body, token)
        content_type = headers.get("Content-Type", "")
        assert content_type.startswith("application/json"), (status, content_type, raw[:300])
        return status, content_type, json.loads(raw), elapsed

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text()[-3000:]}"
            for path in sorted(self.tmp_path.glob("*.log"))
        )


@pytest.fixture
def own_redis(tmp_path) -> Iterator[OwnRedis]:
    # A short directory: a Unix socket path must stay under ~100 bytes.
    server = OwnRedis(tmp_path / "r")
    server.start()
    yield server
    if server.process.poll() is None:
        os.kill(server.process.pid, signal.SIGCONT)
    server.stop()


@pytest.fixture
def make_stack(transactional_db, tmp_path, own_redis, provider) -> Iterator:
    stacks: list[Stack] = []

    def make(*names: str, **env: str) -> Stack:
        stack = Stack(
            tmp_path,
            own_redis,
            {
                "EMBEDDING_PROVIDER": "openai",
                "EMBEDDING_API_BASE": provider,
                "EMBEDDING_DIM": str(settings.EMBEDDING_DIM),
                **env,
            },
        )
        stacks.append(stack)
        for name in names:
            stack.start(name)
        if "web" in names:
            stack.wait_web()
        if "worker" in names:
            stack.wait_worker()
        return stack

    yield make
    # Before the database is flushed; all asked at once, then each waited for.
    processes = [process for stack in stacks for process in stack.processes.values()]
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        stop_process_group(process)


@pytest.fixture
def token(transactional_db) -> str:
    return api_client_create(name="faults", user_prefixes=["faults:"])[1]


def write(stack: Stack, token: str, content: str) -> tuple[int, dict, float]:
    status, _, body, elapsed = stack.request(
        "POST",
        "/api/v1/memories/",
        {"user_id": "faults:alice", "content": content, "memory_type": "fact"},
        token,
    )
    return status, body, elapsed


def wait_ready(memory_id: str, stack: Stack, timeout: float = READY_TIMEOUT) -> Memory:
    deadline = time.monotonic() + timeout
    while True:
        memory = Memory.objects.get(pk=memory_id)
        if memory.embedding_status == EmbeddingStatus.READY:
            return memory
        assert time.monotonic() < deadline, f"still {memory.embedding_status}\n{stack.logs()}"
        time.sleep(0.2)


def test_write_with_redis_killed_is_committed_and_requeued_when_redis_returns(
    make_stack, own_redis, token
):
    stack = make_stack(
        "web", "worker", "beat", EMBEDDING_REQUEUE_INTERVAL="2", EMBEDDING_REQUEUE_GRACE="2"
    )
    own_redis.kill()

    status, body, elapsed = write(stack, token, "written while Redis was dead")
    assert (status, body["data"]["operation"]) == (201, "ADD"), body
    assert elapsed < ANSWER_BOUND
    memory = Memory.objects.get(pk=body["data"]["memory"]["id"])  # committed
    assert memory.embedding_status == EmbeddingStatus.PENDING
    assert "not published (broker unavailable)" in (stack.tmp_path / "web.log").read_text()

    status, _, body, elapsed = stack.request("GET", "/api/v1/health/")
    assert (status, body["error"]["code"]) == (503, "UNAVAILABLE")
    assert body["data"]["checks"]["redis"]["ok"] is False
    assert elapsed < ANSWER_BOUND

    # No task was ever published for it: beat's sweep hands it to the worker.
    own_redis.restart()
    assert wait_ready(memory.pk, stack).embedding is not None
    assert "requeue_stale_embeddings" in (stack.tmp_path / "beat.log").read_text()


def test_hung_redis_holds_no_request(make_stack, own_redis, token):
    stack = make_stack("web", "worker")
    os.kill(own_redis.process.pid, signal.SIGSTOP)
    try:
        status, body, elapsed = write(stack, token, "written while Redis was hung")
        assert status == 201 and elapsed < ANSWER_BOUND, (status, body, elapsed)
        assert Memory.objects.filter(pk=body["data"]["memory"]["id"]).exists()

        status, _, body, elapsed = stack.request(
            # A name in the query: recall also asks Redis whether it is common (best effort).
            "POST",
            "/api/v1/recall/",
            {"user_id": "faults:alice", "query": "Hung, Alice?"},
            token,
        )
        assert status == 200 and elapsed < ANSWER_BOUND, (status, body, elapsed)

        status, _, body, elapsed = stack.request("GET", "/api/v1/health/")
        assert (status, body["data"]["status"]) == (503, "unhealthy")
        assert body["data"]["checks"]["database"]["ok"] is True
        assert body["data"]["checks"]["redis"]["ok"] is False
        assert elapsed < settings.HEALTH_TIMEOUT + 1
    finally:
        os.kill(own_redis.process.pid, signal.SIGCONT)
    status, _, body, _ = stack.request("GET", "/api/v1/health/")
    assert status == 200 and body["data"]["checks"]["redis"]["ok"] is True, body


def test_killed_pool_process_task_is_delivered_again(make_stack, token):
    stack = make_stack("web", "worker")
    FakeEmbeddings.hold.set()
    status, body, _ = write(stack, token, "embedded when its pool process died")
    assert status == 201
    assert FakeEmbeddings.received.wait(30), stack.logs()  # the task is mid-work

    (pool_process,) = psutil.Process(stack.processes["worker"].pid).children()
    pool_process.kill()
    FakeEmbeddings.hold.clear()
    FakeEmbeddings.release.set()

    wait_ready(body["data"]["memory"]["id"], stack)
    assert FakeEmbeddings.calls >= 2
    assert "WorkerLostError" in (stack.tmp_path / "worker.log").read_text()


def test_killed_worker_tasks_come_back_after_the_visibility_timeout(make_stack, token):
    # A time limit of 3 s makes the visibility timeout 6 s (settings: twice the limit).
    stack = make_stack("web", "worker", TASK_TIME_LIMIT="3")
    FakeEmbeddings.hold.set()
    status, body, _ = write(stack, token, "embedded after its worker died")
    assert status == 201
    assert FakeEmbeddings.received.wait(30), stack.logs()
    delivered = time.monotonic()

    worker = stack.processes.pop("worker")
    os.killpg(worker.pid, signal.SIGKILL)  # main process and pool: nothing acknowledges
    worker.wait()
    FakeEmbeddings.hold.clear()
    FakeEmbeddings.release.set()
    memory = Memory.objects.get(pk=body["data"]["memory"]["id"])
    assert memory.embedding_status == EmbeddingStatus.PENDING

    # The restarted worker (a supervisor's job) finds the message once it is 6 s old: at once
    # when it starts after that, else within its 10 s sweep.
    time.sleep(max(0.0, delivered + 6.5 - time.monotonic()))
    stack.start("worker")
    wait_ready(memory.pk, stack, timeout=30)


def raw_exchange(stack: Stack, payload: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", stack.port), timeout=10) as sock:
        sock.sendall(payload)
        response = b""
        while chunk := sock.recv(65536):
            response += chunk
    head, _, body = response.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in header_lines)
    return int(status_line.split()[1]), {k.lower(): v for k, v in headers.items()}, body


# gunicorn answers these itself, before Django sees anything.
MALFORMED = {
    "bad request line": (b"NOT A REQUEST\r\n\r\n", 400),
    "bad Content-Length": (
        b"POST /api/v1/memories/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: twelve\r\n\r\n",
        400,
    ),
    "request line too long": (b"GET /api/" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    "too many headers": (b"GET /api/v1/health/ HTTP/1.1\r\n" + b"X-A: b\r\n" * 200 + b"\r\n", 431),
}


def test_gunicorn_own_errors_are_json_envelopes(make_stack):
    stack = make_stack("web")
    for name, (payload, status) in MALFORMED.items():
        answered, headers, body = raw_exchange(stack, payload)
        assert answered == status, (name, answered, body)
        assert headers["content-type"] == "application/json", (name, body)
        error = json.loads(body)
        assert error["ok"] is False and error["error"]["message"], (name, error)
        # As neuromem_site/api/envelope.py's STATUS_CODES; other 4xx are VALIDATION_ERROR.
        assert error["error"]["code"] == "VALIDATION_ERROR", (name, error)


def test_worker_timeout_answers_json_and_leaves_no_write(make_stack, token):
    stack = make_stack("web", WEB_TIMEOUT="2")
    with psycopg.connect(server_url(connection.settings_dict["NAME"])) as blocker:
        # The write's INSERT waits on this until gunicorn aborts the worker.
        blocker.execute("LOCK TABLE memories IN SHARE MODE")
        status, body, elapsed = write(stack, token, "written by an aborted worker")
        assert (status, body["error"]["code"]) == (500, "INTERNAL"), body
        assert elapsed < ANSWER_BOUND  # gunicorn's timeout (2 s here) answered, not the lock
        assert "Traceback" not in json.dumps(body)
    time.sleep(1)  # the aborted transaction's backend notices its client is gone
    assert not Memory.objects.filter(user_id="faults:alice").exists()
    status, body, _ = write(stack, token, "written by an aborted worker")
    assert (status, body["data"]["operation"]) == (201, "ADD"), body


def test_the_visibility_timeout_outlasts_every_late_acknowledged_task():
    celery_app.loader.import_default_modules()
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    late = [
        task
        for name, task in celery_app.tasks.items()
        if task.acks_late and not name.startswith("celery.")  # Celery's own (chords) unused
    ]
    assert late and all(task.time_limit and task.time_limit < visibility for task in late)
    assert settings.CELERY_TASK_REJECT_ON_WORKER_LOST is True


def test_the_sweep_requeues_stale_memories_no_task_holds_once():
    def add(content: str) -> Memory:
        item = MemoryInput(user_id="faults:bob", content=content, memory_type="fact")
        return memory_add(item=item, caller=Caller(name="test", is_staff=True)).memory

    def publish_failed(memory: Memory) -> None:  # as when Redis was down at its commit
        app_redis().delete(QUEUED_KEY.format(memory.pk))

    stranded, ready, queued = add("stranded at 3am"), add("green tea"), add("a task holds it")
    fresh = add("quantum physics")  # pending too, but not for long enough
    for memory in (stranded, ready, fresh):
        publish_failed(memory)
    hour_ago = timezone.now() - timedelta(hours=1)
    Memory.objects.filter(pk__in=[stranded.pk, ready.pk, queued.pk]).update(created_at=hour_ago)
    Memory.objects.filter(pk=ready.pk).update(embedding_status=EmbeddingStatus.READY)
    queue = redis.Redis.from_url(settings.REDIS_URL)
    before = queue.llen("celery")

    assert embeddings_requeue_stale(older_than=timedelta(minutes=10)) == 1
    assert queue.llen("celery") == before + 1
    task = json.loads(queue.lindex("celery", 0))
    assert task["headers"]["task"] == "memories.tasks.embed_memories"
    assert task["headers"]["argsrepr"] == repr(([str(stranded.pk)],))
    # Its task now holds it: the next sweep queues nothing.
    assert embeddings_requeue_stale(older_than=timedelta(minutes=10)) == 0
    assert queue.llen("celery") == before + 1


def test_with_no_embedding_task_in_the_broker_the_sweep_ignores_the_holds():
    """A message a worker took from the queue while Redis hung, before it could record it as
    delivered, is lost, and its memories stay held by it. With no embedding task queued or
    unacknowledged, no task can hold anything: the sweep queues them at once."""
    item = MemoryInput(user_id="faults:bob", content="lost with its message", memory_type="fact")
    lost = memory_add(item=item, caller=Caller(name="test", is_staff=True)).memory
    Memory.objects.filter(pk=lost.pk).update(created_at=timezone.now() - timedelta(hours=1))
    assert app_redis().exists(QUEUED_KEY.format(lost.pk))  # held by its (lost) task
    broker = redis.Redis.from_url(settings.REDIS_URL)
    with celery_app.connection_for_read() as connection:
        channel = connection.default_channel
        queues = [channel._q_for_pri("celery", step) for step in channel.priority_steps]
        unacked = channel.unacked_key
    broker.delete(*queues, unacked)  # nothing queued, nothing delivered: the message is gone
    assert not task_queued_or_unacknowledged(EMBED_TASK)

    # Another task's message, unacknowledged (the sweep's own, running): still no embedding.
    other = {"headers": {"task": "memories.tasks.requeue_stale_embeddings"}}
    broker.hset(unacked, "tag-1", json.dumps([other, "", "celery"]))
    assert not task_queued_or_unacknowledged(EMBED_TASK)
    assert embeddings_requeue_stale(older_than=timedelta(minutes=10)) == 1
    task = json.loads(broker.lindex("celery", 0))
    assert task["headers"]["argsrepr"] == repr(([str(lost.pk)],))
    assert task_queued_or_unacknowledged(EMBED_TASK)

    # Delivered, not acknowledged (a worker runs it): the holds count again.
    broker.delete(*queues)
    broker.hset(unacked, "tag-2", json.dumps([task, "", "celery"]))
    assert task_queued_or_unacknowledged(EMBED_TASK)
    assert embeddings_requeue_stale(older_than=timedelta(minutes=10)) == 0
    broker.delete(unacked)


def test_an_ack_redis_did_not_answer_frees_the_prefetch_place(own_redis):
    """A worker whose acknowledgement timed out while Redis hung must go on taking messages:
    its prefetch place is freed (neuromem_site/broker.py). Redis may still apply the ack once
    it answers; if not, the message comes back after the visibility timeout."""
    options = {"socket_timeout": 1, "socket_connect_timeout": 1}
    url = embedded.celery_redis_url(own_redis.url)
    with Connection(url, transport_options=options) as connection:
        channel = connection.channel()
        channel.basic_qos(0, 1, False)  # a pool process's window: one message
        queue = Queue("ack-test", channel=channel)
        queue.declare()
        Producer(channel).publish({"n": 1}, routing_key="ack-test")
        message = queue.get(no_ack=False)
        assert message is not None and not channel.qos.can_consume()
        os.kill(own_redis.process.pid, signal.SIGSTOP)
        try:
            with pytest.raises(redis.exceptions.TimeoutError):
                message.ack()
        finally:
            os.kill(own_redis.process.pid, signal.SIGCONT)
        assert channel.qos.can_consume()
