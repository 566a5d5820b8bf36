"""Where a recall's time goes between the service and the HTTP answer (issue #31, item 6).

    make bench-http-layers                                # 2,000 memories, 300 recalls a layer
    make bench-http-layers ARGS="--requests 1000 --profile 30"

The same recalls (query vectors cached, so the model is out of it) measured at each layer, p50
and p95 in ms, each layer's cost the difference to the one below:

1. the service, `memories_recall`;
2. the operation the view runs, `memory_recall_result` (traits, access counting, output), on
   input validated beforehand;
3. the whole Django stack in process, Django's test client with the bearer token (middleware,
   authentication, rate limit, the guardrail's gate, DRF, the envelope, JSON);
4. over HTTP, gunicorn as `make run` runs it (one connection kept alive by the client).

The three in-process layers are timed in turn on each request (the machine's drift falls on
all three alike). Then the operation's parts on the same recalls' hits, each in isolation and
in turn: the access counting, the believed traits, the output serializer. Then the Django
layer's parts: the same requests in process with the operation's answer given, and again with
one part taken out (the token lookup, the rate limit, the input's validation, the middleware),
one at a time, every variant once a round in a shuffled order; a part's cost is what taking it
out alone saves. Then a cProfile of layer 3: the functions with the most time of their own, and the
most cumulative time among NeuroMem's, DRF's and Django's.
"""

import argparse
import cProfile
import pstats
import random
import statistics
import time
from collections.abc import Callable
from contextlib import nullcontext
from unittest import mock

# isort: split
import bootstrap  # noqa: F401

# isort: split
from common import api_over_http, percentile
from django.core.management import call_command
from django.test import Client, override_settings
from recall import build_search_indexes, drop_search_indexes, load, query_for

from core.access import SYSTEM
from memories.access_counts import accesses_record
from memories.api import views as memory_views
from memories.api.operations import memory_recall_result
from memories.api.serializers.recall import RecallInput, RecallOutput
from memories.hooks import trait_belief
from memories.recall import RecallQuery, memories_recall
from neuromem_site.api.authentication import BearerTokenAuthentication
from neuromem_site.api.selectors import api_client_by_token
from neuromem_site.api.serializers import validated_input
from neuromem_site.api.services import api_client_create
from neuromem_site.api.throttling import ApiClientRateThrottle

USERS = 20


def timed(call: Callable[[], object], times: int) -> list[float]:
    timings = []
    for _ in range(times):
        started = time.perf_counter()
        call()
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def in_turn(calls: dict[str, Callable[[], object]], times: int) -> dict[str, list[float]]:
    """Each call's timings, the calls made one after the other `times` times."""
    timings: dict[str, list[float]] = {label: [] for label in calls}
    for _ in range(times):
        for label, call in calls.items():
            started = time.perf_counter()
            call()
            timings[label].append((time.perf_counter() - started) * 1000)
    return timings


def table(rows: dict[str, list[float]], heading: str, *, above: bool) -> str:
    """Markdown: each row's p50 and p95; `above`: and its p50 minus the row before's."""
    columns = [heading, "p50 (ms)", "p95 (ms)"] + (["p50 above the row before"] if above else [])
    lines = ["| " + " | ".join(columns) + " |", "|---" + "|---:" * (len(columns) - 1) + "|"]
    before = None
    for label, timings in rows.items():
        p50 = statistics.median(timings)
        cells = [label, f"{p50:.2f}", f"{percentile(timings, 0.95):.2f}"]
        if above:
            cells.append("" if before is None else f"{p50 - before:+.2f}")
        lines.append("| " + " | ".join(cells) + " |")
        before = p50
    return "\n".join(lines)


def cycling(calls: list[Callable[[], object]]) -> Callable[[], object]:
    position = iter(range(10**9))
    return lambda: calls[next(position) % len(calls)]()


def django_parts(token: str, bodies: list[dict], times: int) -> dict[str, list[float]]:
    """POST /recall/ in process with the operation's answer given, and with one part taken out
    at a time (see the module's docstring), timed in a shuffled order each round."""
    api_client = api_client_by_token(token=token)
    validated = validated_input(RecallInput, bodies[0])
    answer = memory_recall_result(caller=api_client.caller, data=validated)
    headers = {"Authorization": f"Bearer {token}"}
    in_process = Client(headers=headers, SERVER_NAME="localhost")
    with override_settings(MIDDLEWARE=[]):
        bare = Client(headers=headers, SERVER_NAME="localhost")
        bare.get("/api/v1/health/")  # its handler loads no middleware
    # Each variant: the client it is sent with, and the part a mock stands in for.
    variants = {
        "the operation's answer given": (in_process, None),
        "without the token lookup": (
            in_process,
            mock.patch.object(
                BearerTokenAuthentication, "authenticate", lambda self, request: (api_client,) * 2
            ),
        ),
        "without the rate limit": (
            in_process,
            mock.patch.object(
                ApiClientRateThrottle, "allow_request", lambda self, request, view: True
            ),
        ),
        "without the input validation": (
            in_process,
            mock.patch.object(
                memory_views, "validated_user_input", lambda request, cls, data: dict(validated)
            ),
        ),
        "without the middleware": (bare, None),
    }
    timings: dict[str, list[float]] = {label: [] for label in variants}
    order = list(variants)
    rng = random.Random(7)
    with mock.patch.object(memory_views, "memory_recall_result", return_value=answer):
        for round_ in range(times + 50):
            rng.shuffle(order)
            body = bodies[round_ % len(bodies)]
            for label in order:
                client, taken_out = variants[label]
                with taken_out or nullcontext():
                    started = time.perf_counter()
                    response = client.post("/api/v1/recall/", body, content_type="application/json")
                    elapsed = (time.perf_counter() - started) * 1000
                assert response.status_code == 200, response.content
                if round_ >= 50:  # the first rounds warm the clients
                    timings[label].append(elapsed)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=2_000)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--profile", type=int, default=25, help="profile rows to print")
    args = parser.parse_args()
    rng = random.Random(6)
    call_command("migrate", verbosity=0)
    drop_search_indexes()
    load([(f"user-{n}", args.memories // USERS) for n in range(USERS)], rng)
    build_search_indexes()
    _, token = api_client_create(name=f"layers-{time.time_ns()}", user_prefixes=[], is_staff=True)
    queries = [(f"user-{n % USERS}", query_for(f"user-{n % USERS}", rng)) for n in range(50)]
    bodies = [{"user_id": user_id, "query": query} for user_id, query in queries]

    service = cycling(
        [
            lambda q=q: memories_recall(
                caller=SYSTEM, request=RecallQuery(user_id=q[0], query=q[1])
            )
            for q in queries
        ]
    )
    validated = [validated_input(RecallInput, body) for body in bodies]
    operation = cycling(
        [lambda data=data: memory_recall_result(caller=SYSTEM, data=data) for data in validated]
    )
    django_client = Client(headers={"Authorization": f"Bearer {token}"}, SERVER_NAME="localhost")

    def posted(body: dict) -> None:
        response = django_client.post("/api/v1/recall/", body, content_type="application/json")
        assert response.status_code == 200, response.content

    in_process = cycling([lambda body=body: posted(body) for body in bodies])
    for call in (service, operation, in_process):
        timed(call, 100)  # warm: the model, the query vectors' cache, the connection
    layers = in_turn(
        {
            "service `memories_recall`": service,
            "operation `memory_recall_result`": operation,
            "Django in process (test client, token)": in_process,
        },
        args.requests,
    )
    with api_over_http(token, timeout=60) as http:
        over_http = cycling(
            [
                lambda body=body: http.post("/recall/", json=body).raise_for_status()
                for body in bodies
            ]
        )
        timed(over_http, 100)
        layers["HTTP, gunicorn"] = timed(over_http, args.requests)
    print(table(layers, "layer", above=True))

    recalled = [
        memories_recall(caller=SYSTEM, request=RecallQuery(user_id=user_id, query=query))
        for user_id, query in queries
    ]
    believed = {
        user_id: trait_belief().believed(caller=SYSTEM, user_id=user_id) for user_id, _ in queries
    }
    parts = in_turn(
        {
            "access counting `accesses_record`": cycling(
                [
                    lambda hits=hits: accesses_record(memory_ids=[hit.memory.id for hit in hits])
                    for hits in recalled
                ]
            ),
            "believed traits `trait_belief().believed`": cycling(
                [
                    lambda user_id=user_id: trait_belief().believed(caller=SYSTEM, user_id=user_id)
                    for user_id, _ in queries
                ]
            ),
            "output `RecallOutput(…).data`": cycling(
                [
                    lambda hits=hits, traits=believed[user_id]: (
                        RecallOutput({"fields": "full", "merged": hits, "traits": traits}).data
                    )
                    for hits, (user_id, _) in zip(recalled, queries, strict=True)
                ]
            ),
        },
        args.requests,
    )
    print(f"\n{table(parts, 'part of the operation, on the same hits', above=False)}")
    django = django_parts(token, bodies, args.requests)
    base = statistics.median(django["the operation's answer given"])
    print(
        f"\n{table(django, 'the Django layer, in process', above=False)}\n\nSaved by taking "
        "each part out, p50: "
        + ", ".join(
            f"{label.removeprefix('without the ')} {base - statistics.median(timings):.2f} ms"
            for label, timings in django.items()
            if label.startswith("without")
        )
    )

    profiler = cProfile.Profile()
    profiler.runcall(timed, in_process, args.requests)
    stats = pstats.Stats(profiler)
    print(f"\nProfile of {args.requests} in-process requests, by own time:\n\n```")
    stats.sort_stats("tottime").print_stats(args.profile)
    print("```\n\nBy cumulative time:\n\n```")
    stats.sort_stats("cumulative").print_stats(
        r"neuromem|memories|core|rest_framework|django", args.profile
    )
    print("```")


if __name__ == "__main__":
    main()
