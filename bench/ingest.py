"""Ingest benchmark: memories/s through the service and through HTTP (issue #4).

    make bench-ingest                      # 20,000 memories, 200 users, 10% duplicates
    make bench-ingest ARGS="--count 2000"  # a quick run

Writes N memories (CJK and Latin, 10% exact duplicates) in batches of 1,000 through
`memory_add_many`, then N more (other users, same mix) through `POST /api/v1/memories/batch/`
on a gunicorn started for the run, and reports memories/s for both and how long until every
embedding is ready. Runs on the embedded services in a throw-away directory (or on
DATABASE_URL / REDIS_URL). Prints a Markdown table for docs/benchmarks.md.
"""

import argparse
import os
import platform
import random
import subprocess
import time

from bootstrap import BASE_DIR

# isort: split
from common import api_over_http
from django.conf import settings
from django.core.management import call_command

from core.access import SYSTEM
from memories.models import EmbeddingStatus, Memory
from memories.services import MemoryInput, memory_add_many
from neuromem_site.api.services import api_client_create
from neuromem_site.devstack import celery_command

LATIN = [
    "prefers green tea in the morning",
    "works on the payments team",
    "is learning to play the cello",
    "went hiking near Lake Tahoe",
    "has a dog named Biscuit",
    "plans a trip to Lisbon in May",
    "dislikes loud open offices",
    "reads science fiction",
]
CJK = [
    "喜欢在周末去咖啡馆看书",
    "在北京的一家科技公司工作",
    "正在学习弹吉他",
    "上个月去了成都旅行",
    "对花生过敏",
    "计划明年搬到上海",
    "每天早上跑步五公里",
    "最喜欢的菜是麻婆豆腐",
]


def dataset(count: int, users: int, prefix: str, seed: int) -> list[dict]:
    rng = random.Random(seed)
    items: list[dict] = []
    for n in range(count):
        if items and rng.random() < 0.10:
            items.append(dict(rng.choice(items)))  # an exact duplicate: NOOP
            continue
        phrase = rng.choice(LATIN if n % 2 else CJK)
        items.append(
            {
                "user_id": f"{prefix}{rng.randrange(users)}",
                "content": f"{phrase} #{n}" if n % 2 else f"{phrase}（{n}）",
                "memory_type": rng.choice(["fact", "fact", "episodic", "document"]),
            }
        )
    return items


def batches(items: list, size: int = 1000):
    for start in range(0, len(items), size):
        yield items[start : start + size]


def via_service(items: list[dict]) -> float:
    started = time.perf_counter()
    for batch in batches(items):
        memory_add_many(items=[MemoryInput(**item) for item in batch], caller=SYSTEM)
    return time.perf_counter() - started


def via_http(items: list[dict], token: str) -> float:
    with api_over_http(token, timeout=300) as client:
        started = time.perf_counter()
        for batch in batches(items, 500):
            response = client.post("/memories/batch/", json={"items": batch})
            response.raise_for_status()
            assert all(result["ok"] for result in response.json()["data"]["results"])
        return time.perf_counter() - started


def until_embedded(started: float) -> float:
    while Memory.objects.filter(embedding_status=EmbeddingStatus.PENDING).exists():
        time.sleep(0.2)
    return time.perf_counter() - started


def start_worker() -> subprocess.Popen:
    worker = subprocess.Popen(
        celery_command("worker", "--concurrency", "2", "--loglevel", "WARNING"),
        cwd=BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    from neuromem_site.celery import app

    while not app.control.ping(timeout=0.5):
        time.sleep(0.2)
    return worker


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--users", type=int, default=200)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    _, token = api_client_create(name=f"bench-{time.time_ns()}", user_prefixes=[], is_staff=True)

    burst_items = dataset(args.count, args.users, "burst-", seed=3)
    service_items = dataset(args.count, args.users, "svc-", seed=1)
    http_items = dataset(args.count, args.users, "http-", seed=2)

    # A burst with no worker running: the writes alone, then the backlog drained.
    started = time.perf_counter()
    burst_seconds = via_service(burst_items)
    worker = start_worker()
    try:
        burst_embedded = until_embedded(started)
        # Steady state: the worker embeds while the writes go on, competing for the cores.
        started = time.perf_counter()
        service_seconds = via_service(service_items)
        service_embedded = until_embedded(started)
        started = time.perf_counter()
        http_seconds = via_http(http_items, token)
        http_embedded = until_embedded(started)
    finally:
        worker.terminate()
        worker.wait()
    rows = Memory.objects.count()

    print(
        f"""
| run | memories | write s | memories/s | all embeddings ready after s |
|---|---|---|---|---|
| service, burst (worker started after the writes) | {args.count:,} | {burst_seconds:.1f} \
| {args.count / burst_seconds:,.0f} | {burst_embedded:.1f} |
| service, worker embedding meanwhile | {args.count:,} | {service_seconds:.1f} \
| {args.count / service_seconds:,.0f} | {service_embedded:.1f} |
| HTTP `POST /memories/batch/` (500 a request), worker meanwhile | {args.count:,} \
| {http_seconds:.1f} | {args.count / http_seconds:,.0f} | {http_embedded:.1f} |

Service runs: `memory_add_many`, 1,000 a call. Rows written: {rows:,} (the rest were exact
duplicates: NOOP). Embeddings by `{settings.EMBEDDING_PROVIDER}` in a Celery worker
(concurrency 2); near duplicates by the write's lexical vector. Machine: \
{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}.
"""
    )


if __name__ == "__main__":
    main()
