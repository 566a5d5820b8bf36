"""`make run` keeps itself running (docs/operations.md): each process of the real entry point
(embedded PostgreSQL and Redis included), killed with SIGKILL, is restarted and health turns
healthy again; a process that keeps crashing stops the whole stack and says why."""

import json
import os
import signal
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator

import psutil
import pytest

from neuromem_site import embedded
from tests.test_entry_point import BOOT_TIMEOUT, Stack, alive

pytestmark = pytest.mark.slow

# A deadline to wait for, not a measure: recovery takes seconds (docs/operations.md).
RECOVERY_DEADLINE = 120
# How each child of the supervisor shows in its command line.
SIGNATURES = {
    "web": " -m gunicorn ",
    "worker": " -m celery -A neuromem_site worker ",
    "beat": " -m celery -A neuromem_site beat ",
    "Redis": "/redis-server ",
    "PostgreSQL": "/bin/postgres -D ",
}


@pytest.fixture(scope="module")
def light_environment() -> Iterator[None]:
    """One web and one worker process and the lexical embedding provider: the processes
    under test, at a fraction of their memory and start-up time."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EMBEDDING_PROVIDER", "hashing")
        patch.setenv("WEB_CONCURRENCY", "1")
        patch.setenv("CELERY_CONCURRENCY", "1")
        yield


@pytest.fixture(scope="module")
def stack(tmp_path_factory, light_environment) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("supervision")
    with Stack(tmp / "data", tmp / "run.log").running() as stack:
        yield stack


@pytest.fixture(scope="module")
def token(stack: Stack) -> str:
    return stack.create_api_client("supervision", "--user-prefix", "sv:")


def child_pid(stack: Stack, name: str) -> int | None:
    """The pid of the supervisor's running child `name`, if there is one."""
    for child in psutil.Process(stack.process.pid).children():
        try:
            command_line = " ".join(child.cmdline())
        except psutil.Error:  # a dead child not reaped yet
            continue
        if SIGNATURES[name] in command_line:
            return child.pid
    return None


def health(stack: Stack) -> tuple[int | str, str | None, dict | None]:
    """Status, content type and `data` of one health answer; the error's name when none."""
    try:
        with urllib.request.urlopen(f"{stack.base}/api/v1/health/", timeout=10) as response:
            status, headers, body = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, headers, body = error.code, error.headers, error.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
        return type(getattr(error, "reason", error)).__name__, None, None
    try:
        data = json.loads(body)["data"]
    except (ValueError, KeyError):
        data = None
    return status, headers.get_content_type(), data


def request(stack: Stack, token: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    call = urllib.request.Request(f"{stack.base}/api/v1/{path}", data=data)
    call.add_header("Authorization", f"Bearer {token}")
    call.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(call, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


# First: the stack of the tests below is not started yet, so the two do not share the CPUs.
def test_a_crash_loop_stops_everything_with_the_last_lines(tmp_path, light_environment):
    # A web configuration gunicorn cannot read: web dies at every start.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WEB_CONCURRENCY", "many")
        stack = Stack(tmp_path / "data", tmp_path / "run.log")
        stack.start()
    try:
        deadline = time.monotonic() + BOOT_TIMEOUT
        while "web exited" not in stack.log_path.read_text() and time.monotonic() < deadline:
            assert stack.process.poll() is None, stack.log()
            time.sleep(0.5)
        running = stack.processes()
        assert stack.process.wait(timeout=RECOVERY_DEADLINE) == 1, stack.log()
    finally:
        if stack.process.poll() is None:
            stack.interrupt()

    log = stack.log_path.read_text()
    for delay in (1, 2, 4, 8):  # doubling after each crash
        assert f"web exited with status 1; restarting it in {delay} s" in log
    report = log[log.index("5 crashes within 120 s, a crash loop") :]
    assert "The last lines of web:" in report
    assert "invalid literal for int() with base 10: 'many'" in report
    assert alive(running) == [], log
    assert not (embedded.postgres_dir(stack.data_dir) / "postmaster.pid").exists()
    assert not embedded.redis_socket(stack.data_dir).exists()


@pytest.mark.parametrize("name", ["worker", "web", "beat", "Redis", "PostgreSQL"])
def test_a_killed_process_comes_back_and_health_recovers(stack, token, name):
    killed = child_pid(stack, name)
    assert killed, f"no {name} among the supervisor's children"
    os.kill(killed, signal.SIGKILL)

    answers = []
    deadline = time.monotonic() + RECOVERY_DEADLINE
    while time.monotonic() < deadline:
        assert stack.process.poll() is None, f"make run exited:\n{stack.log()}"
        answer = health(stack)
        answers.append(answer)
        status, _, data = answer
        restarted = child_pid(stack, name) not in (None, killed)
        if restarted and status == 200 and data["status"] == "healthy":
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"{name} not back within {RECOVERY_DEADLINE}s: {answers[-3:]}")

    assert f"{name} was killed by SIGKILL; restarting it in 1 s" in stack.log_path.read_text()
    # Meanwhile health answered in JSON, 200 or 503; only with web down did nothing answer.
    for answer in answers:
        status, content_type, data = answer
        if isinstance(status, str):
            assert name == "web", answer
        else:
            assert (status, content_type) in {(200, "application/json"), (503, "application/json")}
            assert data, answer
    # The restart waits at least a second, so the polls saw the gap. (Not beat's: health
    # accepts a heartbeat up to a minute old.)
    gaps = {
        "web": lambda status, data: isinstance(status, str),
        "worker": lambda status, data: status == 200 and not data["checks"]["worker"]["ok"],
        "Redis": lambda status, data: status == 503 and not data["checks"]["redis"]["ok"],
        "PostgreSQL": lambda status, data: status == 503 and not data["checks"]["database"]["ok"],
    }
    if name in gaps:
        assert any(gaps[name](status, data) for status, _, data in answers), answers

    # Every part works again with the others: a write goes through web to PostgreSQL, its
    # embedding task through Redis to the worker, which stores the vector.
    user_id = f"sv:{uuid.uuid4().hex}"
    status, body = request(
        stack,
        token,
        "memories/",
        {"user_id": user_id, "content": f"{name} came back", "memory_type": "fact"},
    )
    assert status == 201, body
    memory_id = body["data"]["memory"]["id"]
    while time.monotonic() < deadline:
        status, body = request(stack, token, f"memories/{memory_id}/")
        assert status == 200, body
        if body["data"]["embedding_status"] == "ready":
            break
        time.sleep(0.5)
    else:
        raise AssertionError(f"the write after {name} came back stayed {body['data']}")
