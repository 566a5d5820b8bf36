"""Boots the real `make run` entry point (embedded PostgreSQL and Redis included) in a
subprocess, as a user would, and checks that Ctrl-C leaves nothing behind."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from neuromem_site import embedded

BASE_DIR = Path(__file__).resolve().parent.parent
BOOT_TIMEOUT = 180

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fresh_environment() -> dict[str, str]:
    """The environment of a fresh clone: no URLs, so the entry point embeds its services."""
    hidden = {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "NEUROMEM_DATA_DIR", "DEBUG"}
    return {key: value for key, value in os.environ.items() if key not in hidden}


def get(url: str, token: str | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


class Stack:
    def __init__(self, data_dir: Path, log_path: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.process: subprocess.Popen | None = None

    def devstack(self, *args: str, **kwargs) -> subprocess.Popen:
        command = [sys.executable, "-m", "neuromem_site.devstack", "--data-dir", str(self.data_dir)]
        return subprocess.Popen([*command, *args], cwd=BASE_DIR, env=fresh_environment(), **kwargs)

    def start(self) -> None:
        with open(self.log_path, "a") as log:
            # A session of its own, like a terminal's foreground job: SIGINT reaches only it.
            self.process = self.devstack(
                "run",
                "--port",
                str(self.port),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_healthy(self) -> dict:
        deadline = time.monotonic() + BOOT_TIMEOUT
        last: object = None
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"run exited early:\n{self.log()}"
            try:
                status, body = get(f"{self.base}/api/v1/health/")
                last = body
                if status == 200 and body["data"]["status"] == "healthy":
                    return body["data"]
            except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
                last = error
            time.sleep(1)
        raise AssertionError(f"never healthy; last answer {last}\n{self.log()}")

    def processes(self) -> list[psutil.Process]:
        """Everything the stack runs: its process tree, and the daemonised PostgreSQL."""
        tree = psutil.Process(self.process.pid).children(recursive=True)
        postmaster_pid = int(
            (embedded.postgres_dir(self.data_dir) / "postmaster.pid").read_text().split()[0]
        )
        postmaster = psutil.Process(postmaster_pid)
        return [*tree, postmaster, *postmaster.children(recursive=True)]

    def interrupt(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=90)

    @contextmanager
    def running(self) -> Iterator["Stack"]:
        """Started and healthy; interrupted afterwards unless it already stopped."""
        self.start()
        try:
            self.wait_healthy()
            yield self
        finally:
            if self.process.poll() is None:
                self.interrupt()

    def create_api_client(self, name: str, *options: str) -> str:
        """A token, made by `manage.py create_api_client` beside the running stack."""
        maker = self.devstack(
            "exec",
            "--",
            sys.executable,
            "manage.py",
            "create_api_client",
            name,
            *options,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        output, errors = maker.communicate(timeout=120)
        assert maker.returncode == 0, errors
        return output.strip()

    def log(self) -> str:
        return self.log_path.read_text()[-5000:]


def alive(processes: list[psutil.Process]) -> list[str]:
    left = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                left.append(f"{process.pid} {' '.join(process.cmdline())}")
        except psutil.NoSuchProcess:
            pass
    return left


def test_run_boots_healthy_keeps_data_across_restarts_and_stops_cleanly(tmp_path):
    stack = Stack(tmp_path / "data", tmp_path / "run.log")
    stack.start()
    try:
        health = stack.wait_healthy()
        assert all(check["ok"] for check in health["checks"].values()), health

        # A second `run` on the same data must not start a second set of servers.
        second = stack.devstack(
            "run",
            "--port",
            str(free_port()),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        output, _ = second.communicate(timeout=60)
        assert second.returncode == 2
        assert "already running" in output

        # One-off commands beside a running stack use its services.
        token = stack.create_api_client("boot-test")
        status, body = get(f"{stack.base}/api/v1/auth/whoami/", token)
        assert (status, body["data"]["name"]) == (200, "boot-test")

        running = stack.processes()
        assert stack.interrupt() == 0, stack.log()
        assert alive(running) == [], stack.log()
        assert not embedded.redis_socket(stack.data_dir).exists()

        # Ctrl-C, then `make run` again: the same data is there.
        stack.start()
        stack.wait_healthy()
        status, body = get(f"{stack.base}/api/v1/auth/whoami/", token)
        assert (status, body["data"]["name"]) == (200, "boot-test")
        running = stack.processes()
        assert stack.interrupt() == 0, stack.log()
        assert alive(running) == [], stack.log()
    finally:
        if stack.process.poll() is None:  # a failed assertion above: still stop it all
            stack.interrupt()


def test_exec_ended_by_sigterm_ends_its_command_and_stops_the_services(tmp_path):
    # As a CI runner or a container stops a job: SIGTERM to `devstack exec`, not to its child.
    stack = Stack(tmp_path / "data", tmp_path / "exec.log")
    ready = tmp_path / "ready"
    command = f"import pathlib, time; pathlib.Path({str(ready)!r}).touch(); time.sleep(300)"
    with open(stack.log_path, "a") as log:
        stack.process = stack.devstack(
            "exec",
            "--",
            sys.executable,
            "-c",
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + BOOT_TIMEOUT
        while not ready.exists():
            assert stack.process.poll() is None, stack.log()
            assert time.monotonic() < deadline, stack.log()
            time.sleep(0.5)
        running = stack.processes()
        stack.process.send_signal(signal.SIGTERM)
        assert stack.process.wait(timeout=90) == 128 + signal.SIGTERM, stack.log()
        assert alive(running) == [], stack.log()
        assert not embedded.redis_socket(stack.data_dir).exists()
    finally:
        if stack.process.poll() is None:
            stack.interrupt()
