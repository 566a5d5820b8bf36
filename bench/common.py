"""What the benchmarks share: SQL one statement at a time, bulk loads into `memories`, the web
service started for a run, and the machine the numbers were taken on."""

import os
import platform
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import bootstrap

# isort: split
import httpx
import pgtrigger
import psycopg
from django.db import connection, transaction

from memories.vectors import vector_cursor
from neuromem_site.devstack import gunicorn_command

# A load writes no ADD rows to the audit log (bench/admin.py writes them after, set-based).
AUDIT_INSERT_TRIGGER = "memories.Memory:memories_audit_insert"
INSERT_CHUNK = 100_000


def sql(statement: str, params: Any = None) -> Any:
    """One statement; `%%` is `%` even without parameters."""
    with connection.cursor() as cursor:
        cursor.execute(statement, {} if params is None else params)
        return cursor.fetchone() if cursor.description else cursor.rowcount


def memories_insert(statement: str, params: dict[str, Any], count: int) -> Iterator[int]:
    """Run `statement`, an INSERT … SELECT of the rows `%(start)s` to `%(stop)s` of `count`, in
    chunks of INSERT_CHUNK rows, a transaction each; yield the rows written so far."""
    for start in range(0, count, INSERT_CHUNK):
        stop = min(count, start + INSERT_CHUNK)
        with (
            transaction.atomic(),
            pgtrigger.ignore(AUDIT_INSERT_TRIGGER),
            vector_cursor() as cursor,
        ):
            # pgtrigger's ignore is transaction-local: set by one statement through Django's
            # cursor, then the insert on a raw one (pgtrigger's wrapper cannot prefix a
            # statement with named parameters).
            sql("SELECT 1")
            cursor.execute(statement, {**params, "start": start, "stop": stop})
        yield stop


@contextmanager
def memories_copy(column_types: dict[str, str]) -> Iterator[psycopg.Copy]:
    """A binary COPY into these columns of `memories` (name: psycopg type), in a transaction of
    its own. Binary: formatting 1,024 floats a row as text would dominate the load."""
    columns = ", ".join(column_types)
    with (
        transaction.atomic(),
        pgtrigger.ignore(AUDIT_INSERT_TRIGGER),
        vector_cursor() as cursor,
        cursor.copy(f"COPY memories ({columns}) FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.set_types(list(column_types.values()))
        yield copy


def memories_size() -> str:
    """The size of the memories partitions with their indexes, e.g. `1234 MB`."""
    (size,) = sql(
        "SELECT pg_size_pretty(sum(pg_total_relation_size(inhrelid))) FROM pg_inherits"
        " WHERE inhparent = 'memories'::regclass"
    )
    return size


def percentile(values: list[float], share: float) -> float:
    """The value at `share` (0–1) of the sorted values, the nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def web_ready(base_url: str) -> None:
    """Returns once the web service at `base_url` (…/api/v1) answers its health check with a
    success; RuntimeError after a minute or more without."""
    for _ in range(300):
        try:
            if httpx.get(f"{base_url}/health/", timeout=2).is_success:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError("gunicorn did not answer /health/")


@contextmanager
def api_over_http(
    token: str,
    *,
    timeout: float,
    workers: int = 2,
    config: str = "neuromem_site.gunicorn_conf",
    environment: dict[str, str] | None = None,
) -> Iterator[httpx.Client]:
    """A client of the web service (gunicorn with the project's configuration, 2 workers, as
    `make run`) started for the block; `config`: another configuration module, found on
    `environment`'s PYTHONPATH."""
    port = free_port()
    # Options override the configuration gunicorn_command names, the last --config included.
    options = ("--config", f"python:{config}", "--workers", str(workers), "--timeout", "300")
    web = subprocess.Popen(
        gunicorn_command(f"127.0.0.1:{port}", *options),
        cwd=bootstrap.BASE_DIR,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base_url = f"http://127.0.0.1:{port}/api/v1"
        client = httpx.Client(
            base_url=base_url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
        )
        web_ready(base_url)
        yield client
    finally:
        web.terminate()
        web.wait()


def machine() -> dict[str, Any]:
    (version,) = sql("SHOW server_version")
    (shared_buffers,) = sql("SHOW shared_buffers")
    with open("/proc/meminfo") as meminfo:
        total_kb = int(meminfo.readline().split()[1])
    return {
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "memory_gib": round(total_kb / 2**20),
        "python": platform.python_version(),
        "postgresql": version.split()[0],
        "shared_buffers": shared_buffers,
    }


def machine_summary(about: dict[str, Any]) -> str:
    """The report's machine line, up to its end: the benchmark adds what else it ran on."""
    return (
        f"Machine: {about['machine']}, {about['cpus']} cores, {about['memory_gib']} GiB, Python "
        f"{about['python']}, PostgreSQL {about['postgresql']} (shared_buffers "
        f"{about['shared_buffers']})"
    )
