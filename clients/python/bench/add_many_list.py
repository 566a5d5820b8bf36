"""The client's overhead (issue #32's target): add 1,000 memories with `memories.add_many` and
read them back with `memories.list` in one iterator, against raw httpx doing the same calls
(one POST /memories/batch/, then GET /memories/ page by page) in the same run, on the same
server. Target: the client within 1.2× of raw httpx.

    # a throw-away service of its own (gunicorn on the embedded PostgreSQL and Redis):
    .venv/bin/python -m neuromem_site.devstack exec --temporary -- \\
        .venv/bin/python clients/python/bench/add_many_list.py
    # or a running one, with a token whose prefixes hold `--prefix`:
    .venv/bin/python clients/python/bench/add_many_list.py --base-url http://127.0.0.1:8000 \\
        --token nm_... --prefix bench:

Each round writes to a new end user per side (so every write is an ADD); the sides alternate
which goes first. Prints each side's median and best round, and the ratios of both.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from neuromem_client import NeuroMem

from neuromem_site.devstack import gunicorn_command

REPO = Path(__file__).resolve().parents[3]
SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo")
WORDS = [first + second for first in SYLLABLES for second in SYLLABLES]


def sentences(count: int) -> list[str]:
    """Sentences of six distinct made-up words, no two of the same words: none restates
    another, so each is written (an ADD), not taken for a near duplicate."""
    rng = random.Random(32)
    seen: set[frozenset[str]] = set()
    made: list[str] = []
    while len(made) < count:
        words = rng.sample(WORDS, 6)
        if frozenset(words) not in seen:
            seen.add(frozenset(words))
            made.append(" ".join(words))
    return made


def with_client(client: NeuroMem, items: list[dict], user_id: str) -> int:
    client.memories.add_many(items)
    return sum(1 for _ in client.memories.list(user_id))


def with_httpx(http: httpx.Client, items: list[dict], user_id: str) -> int:
    answer = http.post("/memories/batch/", json={"items": items})
    answer.raise_for_status()
    listed, cursor = 0, None
    while True:
        params = {"user_id": user_id, "limit": 200}
        if cursor is not None:
            params["cursor"] = cursor
        page = http.get("/memories/", params=params)
        page.raise_for_status()
        body = page.json()
        listed += len(body["data"])
        cursor = body["page"]["next"]
        if cursor is None:
            return listed


def timed(run: Callable[[list[dict], str], int], items: list[dict], user_id: str) -> float:
    started = time.perf_counter()
    listed = run(items, user_id)
    elapsed = time.perf_counter() - started
    if listed != len(items):
        raise RuntimeError(f"{user_id}: {listed} memories listed, {len(items)} written")
    return elapsed


@contextmanager
def own_service() -> Iterator[tuple[str, str, str]]:
    """gunicorn as `make run` starts it, on this environment's database (run under
    `devstack exec`, migrated here), and a new API client's token."""

    def manage(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=REPO, capture_output=True, text=True
        )
        if done.returncode:
            raise RuntimeError(f"manage.py {args[0]} failed:\n{done.stderr}")
        return done.stdout

    manage("migrate", "--noinput")
    name = f"bench-{time.time_ns()}"
    token = manage("create_api_client", name).strip().splitlines()[-1]
    port = 18000 + os.getpid() % 1000
    web = subprocess.Popen(
        gunicorn_command(f"127.0.0.1:{port}"),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                httpx.get(f"{base_url}/api/v1/health/", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        yield base_url, token, f"{name}:"
    finally:
        web.terminate()
        web.wait()


def measure(base_url: str, token: str, prefix: str, count: int, rounds: int) -> None:
    texts = sentences(count)
    client = NeuroMem(base_url, token, timeout=120)
    http = httpx.Client(
        base_url=f"{base_url}/api/v1",
        headers={"Authorization": f"Bearer {token}"},
        timeout=120,
    )
    sides = {
        "client": lambda items, user_id: with_client(client, items, user_id),
        "httpx": lambda items, user_id: with_httpx(http, items, user_id),
    }
    times: dict[str, list[float]] = {side: [] for side in sides}
    for round_ in range(rounds + 1):  # round 0 warms the server up, and is not counted
        order = list(sides) if round_ % 2 else list(reversed(sides))
        for side in order:
            user_id = f"{prefix}{side}-{round_}-{time.time_ns()}"
            items = [{"user_id": user_id, "content": t, "memory_type": "fact"} for t in texts]
            elapsed = timed(sides[side], items, user_id)
            if round_:
                times[side].append(elapsed)
    client.close()
    http.close()
    medians = {side: statistics.median(values) for side, values in times.items()}
    print(f"{count} memories: add_many, then list in one iterator; {rounds} rounds")
    for side, median in medians.items():
        runs = ", ".join(f"{value:.3f}" for value in times[side])
        print(f"  {side:7} median {median:.3f} s, best {min(times[side]):.3f} s  ({runs})")
    # The service's time dominates and varies from round to round on a shared machine: the
    # best rounds show the client's own cost with the least of that noise.
    print(
        f"  ratio client / httpx: {medians['client'] / medians['httpx']:.3f} of the medians, "
        f"{min(times['client']) / min(times['httpx']):.3f} of the best (target ≤ 1.2)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default=os.environ.get("NEUROMEM_BASE_URL"))
    parser.add_argument("--token", default=os.environ.get("NEUROMEM_TOKEN"))
    parser.add_argument("--prefix", default="bench:", help="user_id prefix of the token")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if args.base_url:
        if not args.token:
            parser.error("--base-url needs --token (or NEUROMEM_TOKEN)")
        measure(args.base_url, args.token, args.prefix, args.count, args.rounds)
        return
    with own_service() as (base_url, token, prefix):
        measure(base_url, token, prefix, args.count, args.rounds)


if __name__ == "__main__":
    main()
