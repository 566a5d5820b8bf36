"""A real Celery worker process for a test, on the test database."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db import connection

from neuromem_site.celery import app as celery_app
from tests.memories.scratch import BASE_DIR, server_url

START_TIMEOUT = 60


def worker_hostname(name: str) -> str:
    return f"{name}-{os.getpid()}@{socket.gethostname()}"


@contextmanager
def celery_worker(
    *, hostname: str, log: Path | None = None, **environment: str
) -> Iterator[subprocess.Popen]:
    """`celery worker --pool solo` with the test database's URL and `environment`, once it
    answers a ping; stopped afterwards. Its output goes to `log`, when given."""
    env = {
        **os.environ,
        "DATABASE_URL": server_url(connection.settings_dict["NAME"]),
        **environment,
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "neuromem_site",
            "worker",
            "--pool",
            "solo",
            "--loglevel",
            "WARNING",
            "--hostname",
            hostname,
        ],
        cwd=BASE_DIR,
        env=env,
        stdout=log.open("ab") if log else subprocess.DEVNULL,
        stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not celery_app.control.ping(destination=[hostname], timeout=0.5):
            assert process.poll() is None and time.monotonic() < deadline, "worker did not start"
        yield process
    finally:
        process.terminate()
        process.wait(timeout=30)
