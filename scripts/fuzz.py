"""`make fuzz`: schemathesis over the whole OpenAPI schema, against the real app.

    make fuzz [ARGS="--max-time 60 --workers 2 --seed 1"]

Run by `devstack exec --temporary` (throw-away embedded PostgreSQL + Redis, or DATABASE_URL /
REDIS_URL): migrates, creates a staff API client and a prefixed one (`fuzz-agent:`), starts
gunicorn with the real settings, seeds a few memories and a session, then runs `st run` on
the live `/api/schema/` once per client, each bounded by `--max-time` seconds, with every
check (`--checks all`) but use_after_free and ensure_resource_availability (see fuzz()): no
5xx, status codes, content types, headers and bodies as documented, negative data rejected
and valid data accepted (positive_data_acceptance), authentication not ignored. Exits 1 when
any check failed; the JSON reports stay in `--report-dir`.

When schemathesis loads this file as its hooks module (SCHEMATHESIS_HOOKS), it registers a
hook that steers valid requests: half of them onto seeded data (`user_id`s into the client's
prefix, `memory_id`s / `session_id`s onto seeded rows; without it nearly every request of the
prefixed client would be an, entirely correct, 403/404), and all of them clear of the rules
OpenAPI 3.0 cannot state (ORDERED_PAIRS, ROW_REFERENCES, server-given cursors, NUL in
metadata keys). It also teaches schemathesis the `python-regex` format.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import httpx

from neuromem_site.devstack import gunicorn_command

BASE_DIR = Path(__file__).resolve().parent.parent
PREFIX = "fuzz-agent:"
SEEDED_USER = f"{PREFIX}alice"


# --- Hooks (run inside `st run`) -------------------------------------------------------------


def _pick(value: Any, choices: list[str]) -> str | None:
    """Deterministic in the generated value, so Hypothesis can replay and shrink a case."""
    digest = zlib.crc32(repr(value).encode())
    if not choices or digest % 2:
        return None
    return choices[(digest // 2) % len(choices)]


def _in_prefix(value: Any) -> Any:
    if not isinstance(value, str) or value.startswith(PREFIX) or zlib.crc32(value.encode()) % 2:
        return value
    return (PREFIX + value)[:255]


# Rules a valid request must keep that no OpenAPI 3.0 schema can state (docs/security.md,
# "Fuzzing"): the pairs whose first must not exceed the second, and the body fields that must
# name rows of the request's own end user, or fit the clock and the session's last message.
ORDERED_PAIRS = [
    ("score_min", "score_max"),
    ("scoreMin", "scoreMax"),
    ("from_timestamp", "to_timestamp"),
    ("fromTimestamp", "toTimestamp"),
]
ROW_REFERENCES = ("session_id", "source_episode_ids", "links", "sent_at")


def _without_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {_without_nul(key): _without_nul(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_nul(item) for item in value]
    return value


def _ordered(query: dict[str, Any]) -> dict[str, Any]:
    query = dict(query)
    for low, high in ORDERED_PAIRS:
        try:
            if float(query[low]) > float(query[high]):
                query[low], query[high] = query[high], query[low]
        except (KeyError, TypeError, ValueError):
            pass
    return query


def steer_case(context: Any, case: Any) -> Any:
    """Valid cases only: a negative case must stay invalid for negative_data_rejection."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return case
    memory_ids = os.environ.get("FUZZ_MEMORY_IDS", "").split()
    session_ids = os.environ.get("FUZZ_SESSION_IDS", "").split()
    # A link's target must be a current memory of the source's user: the seeded one.
    target = os.environ["FUZZ_LINK_TARGET"]
    # A stateful case's ids come from earlier answers: they stay.
    if case.path_parameters and meta.phase.name != "stateful":
        path = dict(case.path_parameters)
        if "memory_id" in path:
            path["memory_id"] = _pick(path["memory_id"], memory_ids) or path["memory_id"]
        if "session_id" in path:
            path["session_id"] = _pick(path["session_id"], session_ids) or path["session_id"]
        if "user_id" in path:
            path["user_id"] = _in_prefix(path["user_id"])
        _replace(case, "path_parameters", path)
    if case.query:
        # Only a `page.next` the server gave is a cursor.
        query = {name: value for name, value in case.query.items() if name != "cursor"}
        if "user_id" in query:
            query["user_id"] = _in_prefix(query["user_id"])
        if "target_id" in query:
            query["target_id"] = target
        _replace(case, "query", _ordered(query))
    if isinstance(case.body, dict):
        body = {name: value for name, value in case.body.items() if name not in ROW_REFERENCES}
        if "user_id" in body:
            body["user_id"] = _in_prefix(body["user_id"])
        if "target_id" in body:
            body["target_id"] = target
        if "metadata" in body:
            # No NUL in its keys either: OpenAPI 3.0 has no `propertyNames` to say so.
            body["metadata"] = _without_nul(body["metadata"])
        _replace(case, "body", body)
    return case


def not_an_unknown_header(context: Any, case: Any) -> bool:
    """A negative case is dropped when all it breaks is the set of headers, by one the schema
    does not name: HTTP lets any header through (proxies add their own), so no server can
    refuse it. Schemathesis also sends unknown query parameters and body fields, which the API
    refuses, and those cases stay."""
    from schemathesis.core.parameters import ParameterLocation
    from schemathesis.generation.meta import CoveragePhaseData, CoverageScenario

    data = case.meta.phase.data if case.meta is not None else None
    return not (
        isinstance(data, CoveragePhaseData)
        and data.scenario == CoverageScenario.OBJECT_UNEXPECTED_PROPERTIES
        and data.parameter_location == ParameterLocation.HEADER
    )


def _replace(case: Any, part: str, value: dict[str, Any]) -> None:
    """Only a part that changed: schemathesis validates a replaced part again, as sent (a path
    parameter percent-encoded, so longer), and would call the case invalid."""
    if value != getattr(case, part):
        setattr(case, part, value)


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


if __name__ != "__main__" and os.environ.get("FUZZ_HOOKS"):
    import schemathesis
    from hypothesis import strategies as st

    schemathesis.hook("map_case")(steer_case)
    schemathesis.hook("filter_case")(not_an_unknown_header)
    # The safety contract's constraints (evolution/api/serializers.py, RegexField).
    schemathesis.openapi.format("python-regex", st.text(min_size=1).filter(_compiles))


# --- Driver ----------------------------------------------------------------------------------


def manage(*args: str) -> str:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_web(port: int, workers: int) -> subprocess.Popen:
    env = {
        **os.environ,
        # The fuzzer is one client sending hundreds of requests a second, not an abuser.
        "API_RATE_LIMIT": "1000000/min",
        # No Celery worker here: health would wait the full ping timeout on every call.
        "HEALTH_WORKER_PING_TIMEOUT": "0.05",
    }
    # Served as `make run` serves it, quieter.
    argv = gunicorn_command(
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--access-logfile",
        os.devnull,
        "--log-level",
        "warning",
    )
    return subprocess.Popen(argv, cwd=BASE_DIR, env=env, start_new_session=True)


def wait_healthy(base: str, web: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if web.poll() is not None:
            raise SystemExit("gunicorn exited before answering")
        try:
            if httpx.get(f"{base}/api/v1/health/", timeout=5).status_code < 500:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit("gunicorn did not answer within 60 s")


def seed(base: str, token: str) -> dict[str, str]:
    """A few memories and a session of SEEDED_USER, for the hooks to point requests at."""
    headers = {"Authorization": f"Bearer {token}"}
    memory_ids, session_ids = [], []
    with httpx.Client(base_url=f"{base}/api/v1", headers=headers, timeout=30) as http:
        for index, (memory_type, content) in enumerate(
            [
                ("fact", "Alice prefers green tea"),
                ("fact", "Alice lives in Austin"),
                ("episodic", "Alice went hiking on Sunday"),
                ("trait", "Alice is curious"),
                ("document", "Alice's notes on pgvector"),
            ]
        ):
            response = http.post(
                "/memories/",
                json={
                    "user_id": SEEDED_USER,
                    "content": content,
                    "memory_type": memory_type,
                    "key": f"seed-{index}",
                },
            )
            response.raise_for_status()
            memory_ids.append(response.json()["data"]["memory"]["id"])
        for _ in range(2):
            response = http.post("/sessions/", json={"user_id": SEEDED_USER})
            response.raise_for_status()
            session_ids.append(response.json()["data"]["id"])
        # Links go to it; no path points at it, so no request deletes or supersedes it.
        target = {"user_id": SEEDED_USER, "content": "Alice likes teal", "memory_type": "fact"}
        response = http.post("/memories/", json=target)
        response.raise_for_status()
    return {
        "FUZZ_MEMORY_IDS": " ".join(memory_ids),
        "FUZZ_SESSION_IDS": " ".join(session_ids),
        "FUZZ_LINK_TARGET": response.json()["data"]["memory"]["id"],
    }


def fuzz(
    base: str, name: str, token: str, args: argparse.Namespace, seeded: dict[str, str]
) -> dict[str, Any]:
    report = args.report_dir / f"{name}.json"
    argv = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(BASE_DIR / "scripts" / "schemathesis.toml"),
        "run",
        f"{base}/api/schema/",
        "--url",
        base,
        "--header",
        f"Authorization: Bearer {token}",
        "--checks",
        "all",
        # use_after_free: deleting keeps a record here, by design (docs/api.md): DELETE
        # /memories/{id}/ and supersede expire a memory whose versions, history and links stay
        # readable. ensure_resource_availability: it reads any 404 under a created resource as
        # that resource missing, where it is a part not made yet (a link to remove, an agent's
        # SOUL before its bootstrap); a checks setting per operation does not turn it off.
        "--exclude-checks",
        "use_after_free,ensure_resource_availability",
        "--max-time",
        str(args.max_time),
        "--workers",
        str(args.workers),
        "--request-timeout",
        "30",
        "--generation-database",
        "none",
        "--report",
        "json",
        "--report-json-path",
        str(report),
        "--no-color",
        # Reproductions must show every value (a body's `key` would read "[Filtered]"); the
        # tokens are throw-away, like the database they live in.
        "--output-sanitize",
        "false",
    ]
    if args.seed is not None:
        argv += ["--seed", str(args.seed)]
    env = {**os.environ, **seeded, "FUZZ_HOOKS": "1", "SCHEMATHESIS_HOOKS": __file__}
    print(f"\n=== schemathesis as the {name} client ({args.max_time} s) ===", flush=True)
    try:
        # The grace covers schema loading and the phases that run before the budget applies.
        # In the report directory: schemathesis keeps a cache of failures in its cwd.
        subprocess.run(argv, cwd=args.report_dir, env=env, timeout=args.max_time + 120)
    except subprocess.TimeoutExpired:
        print(f"schemathesis as {name} overran its budget; stopped", flush=True)
    return json.loads(report.read_text()) if report.exists() else {"complete": False}


def summary(name: str, report: dict[str, Any]) -> bool:
    """Print one line per failure group; True when the run is clean."""
    cases = report.get("test_cases", {})
    failures = report.get("failures", [])
    errors = report.get("errors", [])
    print(
        f"{name}: {cases.get('generated', 0)} cases, "
        f"{len(failures)} failure groups, {len(errors)} errors, "
        f"complete={report.get('complete')}"
    )
    for failure in failures:
        operations = ", ".join(failure.get("operations", []))
        print(f"  FAIL {failure['title']} ×{failure['count']}: {operations}")
    for error in errors:
        print(f"  ERROR {error['title']} ×{error['count']}")
    return report.get("complete", False) and not failures and not errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # Over 30,000 cases in all, about 13 minutes, on a 2-core machine.
    parser.add_argument("--max-time", type=int, default=380, help="seconds per client")
    parser.add_argument("--workers", type=int, default=1, help="schemathesis workers")
    parser.add_argument("--web-workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument(
        "--report-dir", type=Path, default=BASE_DIR / ".data" / "fuzz", help="JSON reports"
    )
    args = parser.parse_args()
    started = time.monotonic()
    args.report_dir = args.report_dir.resolve()
    args.report_dir.mkdir(parents=True, exist_ok=True)

    manage("migrate", "--noinput", "--verbosity", "0")
    tokens = {
        "staff": manage("create_api_client", "fuzz-staff", "--staff").strip(),
        "prefixed": manage("create_api_client", "fuzz-agent", "--user-prefix", PREFIX).strip(),
    }
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = start_web(port, args.web_workers)
    try:
        wait_healthy(base, web)
        seeded = seed(base, tokens["prefixed"])
        reports = {name: fuzz(base, name, token, args, seeded) for name, token in tokens.items()}
    finally:
        web.terminate()
        try:
            web.wait(20)
        except subprocess.TimeoutExpired:
            web.kill()
    print("\n=== make fuzz ===")
    clean = [summary(name, report) for name, report in reports.items()]
    cases = sum(report.get("test_cases", {}).get("generated", 0) for report in reports.values())
    print(f"total: {cases} cases in {time.monotonic() - started:.0f} s")
    return 0 if all(clean) else 1


if __name__ == "__main__":
    sys.exit(main())
