"""Python's full garbage collections in a web worker, with and without the gunicorn hooks that
freeze what the worker built while starting and warming (neuromem_site/gunicorn_conf.py).

    make bench-gc                                     # 6,000 recalls a run, two rounds
    make bench-gc ARGS="--requests 10000 --rounds 3"

Each run starts gunicorn with the project's configuration and one worker
(bench/gc_worker_conf.py, which also times each full collection in the worker; `GC_FREEZE=off`
for the runs without the hooks) and sends it recalls of typical users, one after the other,
over HTTP. The runs alternate. Reported: the recalls' p50 / p99 / max after the first 100 (which
load the model and build what is cached), and the worker's full collections: how many, the
longest, all of them together, and the objects left in the oldest generation after the last
one (what the next walks, the frozen ones not counted).
"""

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

# isort: split
import bootstrap

# isort: split
from common import api_over_http, percentile
from django.core.management import call_command
from recall import build_search_indexes, drop_search_indexes, load, query_for

from neuromem_site.api.services import api_client_create
from neuromem_site.gunicorn_conf import WARM_REQUESTS

USERS = 20
MODES = {"frozen (the hooks)": "on", "not frozen": "off"}


def run(*, freeze: str, token: str, requests: int, seed: int) -> tuple[list[float], list[str]]:
    """The recalls' times over HTTP and the worker's full collections (`<ms> <objects>`)."""
    with tempfile.TemporaryDirectory() as directory:
        pauses_file = Path(directory) / "pauses"
        pauses_file.touch()
        environment = {
            **os.environ,
            "GC_FREEZE": freeze,
            "GC_PAUSES_FILE": str(pauses_file),
            "PYTHONPATH": os.pathsep.join(
                [
                    str(Path(__file__).parent),
                    str(bootstrap.BASE_DIR),
                    os.environ.get("PYTHONPATH", ""),
                ]
            ),
        }
        with api_over_http(
            token, timeout=60, workers=1, config="gc_worker_conf", environment=environment
        ) as client:
            rng = random.Random(seed)
            timings = []
            for _ in range(requests):
                user_id = f"user-{rng.randrange(USERS)}"
                body = {"user_id": user_id, "query": query_for(user_id, rng)}
                started = time.perf_counter()
                client.post("/recall/", json=body).raise_for_status()
                timings.append((time.perf_counter() - started) * 1000)
        return timings, pauses_file.read_text().split("\n")[:-1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=2_000)
    parser.add_argument("--requests", type=int, default=6_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    drop_search_indexes()
    load([(f"user-{n}", args.memories // USERS) for n in range(USERS)], random.Random(6))
    build_search_indexes()
    _, token = api_client_create(name=f"gc-{time.time_ns()}", user_prefixes=[], is_staff=True)
    lines = [
        f"| worker | recall p50 / p99 / max after the first {WARM_REQUESTS} (ms) "
        "| full collections | the longest (ms) | all of them (ms) "
        "| left in the oldest generation |",
        "|---|---|---|---|---|---|",
    ]
    for round_number in range(args.rounds):
        modes = list(MODES.items())
        for label, freeze in modes if round_number % 2 == 0 else modes[::-1]:
            timings, pauses = run(
                freeze=freeze, token=token, requests=args.requests, seed=round_number
            )
            warm = timings[WARM_REQUESTS:]
            pause_ms = [float(line.split()[0]) for line in pauses]
            walked = int(pauses[-1].split()[1]) if pauses else 0
            lines.append(
                f"| {label}, round {round_number + 1} | {statistics.median(warm):.1f} / "
                f"{percentile(warm, 0.99):.1f} / {max(warm):.1f} | {len(pause_ms)} "
                f"| {max(pause_ms, default=0):.1f} | {sum(pause_ms):.0f} | {walked:,} |"
            )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
