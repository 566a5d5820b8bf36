"""Load benchmark (issue #31): concurrent clients on a mixed workload, over HTTP.

    make bench-load                                            # 100,000 memories; 8, 32, 64 clients
    make bench-load ARGS="--count 20000 --heavy 5000 --seconds 15"        # a quick run
    make bench-load ARGS="--web-workers 4 --web-threads 4 --worker-concurrency 2"
    # load once into a kept directory, then measure other settings on it:
    NEUROMEM_DATA_DIR=/tmp/load-data .venv/bin/python -m neuromem_site.devstack exec -- \
        .venv/bin/python bench/load.py --reuse --web-threads 4

The dataset is bench/recall.py's (`--count` memories over `--users` users, one heavy user of
`--heavy`, embeddings ready, indexes built as the migrations define them). The service runs as
`make run` runs it: gunicorn with the project's configuration (`--web-workers`, and
`--web-threads` for gunicorn's threaded worker) and a Celery worker embedding what is written
(`--worker-concurrency`). Each simulated client is an API client of its own (its own token,
so one client's rate limit never slows another) and, for `--seconds` at each level of
`--clients`, loops without pause over a mixed workload:

- 20% writes, `POST /memories/` (a new sentence for a random user, so every one is an ADD);
- 60% recall, `POST /recall/` (random words, so each query is embedded in its request);
- 20% reads: `GET /memories/?user_id=` (a page of 20) or `GET /memories/{id}/`, half each.

Per level: throughput, p50 / p95 / p99 per operation, errors (an answer other than 2xx, or no
answer). After each level: every write answered 2xx is in the database, and none of them stays
`pending` once the worker has caught up (how long that took is reported). Prints Markdown for
docs/benchmarks.md.
"""

import argparse
import asyncio
import os
import platform
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field

# isort: split
import bootstrap

# isort: split
import httpx
from common import free_port, percentile, web_ready
from django.core.management import call_command
from django.db import connection
from recall import LATIN_WORDS, dataset_arguments, dataset_loaded, sentence

from memories.models import EmbeddingStatus, Memory
from neuromem_site.api.services import api_client_create
from neuromem_site.devstack import celery_command, gunicorn_command

WRITE, RECALL, LIST, GET = "write", "recall", "list", "get"
# The mix: 20% writes, 60% recall, 20% reads (listing and by id, half each).
MIX = ((WRITE, 0.2), (RECALL, 0.6), (LIST, 0.1), (GET, 0.1))
PENDING_WAIT_SECONDS = 600


@dataclass
class Level:
    clients: int
    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    written: list[str] = field(default_factory=list)
    missing: int = 0
    pending_after: int = 0
    drained_seconds: float = 0.0

    def done(self, operation: str) -> int:
        return len(self.latencies[operation])

    def throughput(self, *operations: str) -> float:
        return sum(self.done(op) + self.errors[op] for op in operations) / self.seconds


async def client_loop(
    client: httpx.AsyncClient,
    level: Level,
    users: list[str],
    memory_ids: list[str],
    rng: random.Random,
    deadline: float,
) -> None:
    operations, weights = zip(*MIX, strict=True)
    while time.monotonic() < deadline:
        operation = rng.choices(operations, weights)[0]
        user_id = rng.choice(users)
        started = time.perf_counter()
        try:
            if operation == WRITE:
                content = f"{sentence(rng)} {uuid.uuid4().hex[:8]}"
                body = {"user_id": user_id, "content": content, "memory_type": "fact"}
                response = await client.post("/memories/", json=body)
            elif operation == RECALL:
                query = " ".join(rng.sample(LATIN_WORDS, k=4))
                response = await client.post("/recall/", json={"user_id": user_id, "query": query})
            elif operation == LIST:
                response = await client.get("/memories/", params={"user_id": user_id, "limit": 20})
            else:
                response = await client.get(f"/memories/{rng.choice(memory_ids)}/")
        except httpx.HTTPError:
            level.errors[operation] += 1
            continue
        elapsed = (time.perf_counter() - started) * 1000
        if not response.is_success:
            level.errors[operation] += 1
            continue
        level.latencies[operation].append(elapsed)
        if operation == WRITE:
            level.written.append(response.json()["data"]["memory"]["id"])


async def run_level(
    base_url: str, tokens: list[str], users: list[str], memory_ids: list[str], seconds: float
) -> Level:
    level = Level(clients=len(tokens))
    clients = [
        httpx.AsyncClient(
            base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=60
        )
        for token in tokens
    ]
    started = time.monotonic()
    deadline = started + seconds
    try:
        await asyncio.gather(
            *(
                client_loop(client, level, users, memory_ids, random.Random(n), deadline)
                for n, client in enumerate(clients)
            )
        )
    finally:
        for client in clients:
            await client.aclose()
    level.seconds = time.monotonic() - started
    return level


def writes_checked(level: Level) -> None:
    """Every write answered 2xx is stored; wait until the worker has embedded them all."""
    stored = Memory.objects.filter(id__in=level.written)
    level.missing = len(level.written) - stored.count()
    started = time.monotonic()
    pending = stored.filter(embedding_status=EmbeddingStatus.PENDING)
    while pending.exists() and time.monotonic() - started < PENDING_WAIT_SECONDS:
        time.sleep(0.5)
    level.drained_seconds = time.monotonic() - started
    level.pending_after = pending.count()


def started_process(argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        argv,
        cwd=bootstrap.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def warm(base_url: str, token: str, users: list[str], web_processes: int) -> None:
    """Each web process loads the embedding model on its first recall: not in the timings."""
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}) as client:
        for user_id in users[: 10 * web_processes]:
            client.post("/recall/", json={"user_id": user_id, "query": "morning tea"}, timeout=120)


def row(label: str, values: list[float]) -> str:
    if not values:
        return f"| {label} | 0 | – | – | – |"
    return (
        f"| {label} | {len(values):,} | {statistics.median(values):.1f} | "
        f"{percentile(values, 0.95):.1f} | {percentile(values, 0.99):.1f} |"
    )


def report(levels: list[Level], args: argparse.Namespace, written: int) -> str:
    best_recall = max(level.throughput(RECALL) for level in levels)
    lines = [
        f"Dataset: {written:,} memories ({args.count:,} over {args.users:,} users, a heavy user "
        f"of {args.heavy:,}). gunicorn: {args.web_workers} workers × {args.web_threads} "
        f"threads; Celery worker concurrency {args.worker_concurrency}; {args.seconds:.0f} s a "
        f"level. Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()} (the clients run on it too).",
        "",
        "| clients | requests/s | recall/s | recall vs best | errors | writes 2xx | missing "
        "| pending after | worker caught up in |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for level in levels:
        lines.append(
            f"| {level.clients} | {level.throughput(WRITE, RECALL, LIST, GET):.1f} | "
            f"{level.throughput(RECALL):.1f} | {level.throughput(RECALL) / best_recall:.2f} | "
            f"{sum(level.errors.values())} | {len(level.written):,} | {level.missing} | "
            f"{level.pending_after} | {level.drained_seconds:.0f} s |"
        )
    for level in levels:
        lines += [
            "",
            f"{level.clients} clients, latency (ms):",
            "",
            "| operation | answered | p50 | p95 | p99 |",
            "|---|---:|---:|---:|---:|",
            row("write `POST /memories/`", level.latencies[WRITE]),
            row("recall `POST /recall/`", level.latencies[RECALL]),
            row("list `GET /memories/?user_id=`", level.latencies[LIST]),
            row("get `GET /memories/{id}/`", level.latencies[GET]),
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    dataset_arguments(parser)
    parser.add_argument("--clients", default="8,32,64", help="the levels, a comma list")
    parser.add_argument("--seconds", type=float, default=30, help="how long each level runs")
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--web-threads", type=int, default=1)
    parser.add_argument("--worker-concurrency", type=int, default=2)
    args = parser.parse_args()
    levels = [int(n) for n in args.clients.split(",")]
    rng = random.Random(31)
    call_command("migrate", verbosity=0)
    written, _, _ = dataset_loaded(args, rng)
    users = [f"user-{n}" for n in range(args.users)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT id::text FROM memories TABLESAMPLE SYSTEM (1) LIMIT 5000")
        memory_ids = [memory_id for (memory_id,) in cursor.fetchall()]
    tokens = [
        api_client_create(name=f"load-{n}-{time.time_ns()}", user_prefixes=[], is_staff=True)[1]
        for n in range(max(levels))
    ]

    port = free_port()
    base_url = f"http://127.0.0.1:{port}/api/v1"
    web_options = ["--workers", str(args.web_workers), "--threads", str(args.web_threads)]
    web = started_process(gunicorn_command(f"127.0.0.1:{port}", *web_options))
    worker = started_process(
        celery_command(
            "worker", "--concurrency", str(args.worker_concurrency), "--loglevel", "WARNING"
        )
    )
    results = []
    try:
        web_ready(base_url)
        warm(base_url, tokens[0], users, args.web_workers)
        for clients in levels:
            print(f"  {clients} clients for {args.seconds:.0f} s", file=sys.stderr, flush=True)
            level = asyncio.run(
                run_level(base_url, tokens[:clients], users, memory_ids, args.seconds)
            )
            writes_checked(level)
            results.append(level)
    finally:
        for process in (web, worker):
            process.terminate()
            process.wait()
    print(report(results, args, written))


if __name__ == "__main__":
    main()
