"""Real checks of the four parts NeuroMem needs: database, Redis, a Celery worker, Celery beat.

The answer comes within HEALTH_TIMEOUT whatever Redis does: the checks that go through Redis
run in a thread of their own, and a check that has not answered by then is reported failed.
"""

import threading
import time
from collections.abc import Callable
from typing import Any

import redis
from django.conf import settings
from django.db import connection

from neuromem_site.beat import beat_heartbeat_age
from neuromem_site.celery import app as celery_app

# Without these the service cannot answer at all; without the others it answers, degraded.
ESSENTIAL = ("database", "redis")


def check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return "SELECT 1 answered"


def check_redis() -> str:
    client = redis.Redis.from_url(
        settings.REDIS_URL,
        socket_timeout=settings.REDIS_SOCKET_TIMEOUT,
        socket_connect_timeout=settings.REDIS_SOCKET_TIMEOUT,
    )
    try:
        client.ping()
    finally:
        client.close()
    return "PING answered"


def check_worker() -> str:
    # limit=1: one live worker is enough, so don't wait out the timeout for the others.
    replies = celery_app.control.ping(timeout=settings.HEALTH_WORKER_PING_TIMEOUT, limit=1)
    if not replies:
        raise RuntimeError(
            f"no Celery worker answered a ping within {settings.HEALTH_WORKER_PING_TIMEOUT}s"
        )
    return f"worker {next(iter(replies[0]))} answered"


def check_beat() -> str:
    age = beat_heartbeat_age()
    if age is None:
        raise RuntimeError("Celery beat has written no heartbeat")
    if age > settings.BEAT_HEARTBEAT_MAX_AGE:
        raise RuntimeError(
            f"last heartbeat {age:.0f}s ago (max {settings.BEAT_HEARTBEAT_MAX_AGE}s)"
        )
    return f"last heartbeat {age:.1f}s ago"


def run_check(check: Callable[[], str]) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        detail, ok = check(), True
    except Exception as error:  # any failure is the answer we are asked for
        detail, ok = f"{type(error).__name__}: {error}", False
    return {
        "ok": ok,
        "detail": detail,
        "latency_ms": round((time.perf_counter() - started) * 1000, 1),
    }


def redis_checks(checks: dict[str, dict[str, Any]]) -> None:
    """Redis, then the worker and beat, which are reached through it."""
    checks["redis"] = run_check(check_redis)
    if checks["redis"]["ok"]:
        checks["worker"] = run_check(check_worker)
        checks["beat"] = run_check(check_beat)
    else:
        # Asking would only wait out the socket timeouts again.
        for name in ("worker", "beat"):
            checks[name] = {
                "ok": False,
                "detail": "not checked: Redis is unavailable",
                "latency_ms": 0.0,
            }


def system_health() -> dict[str, Any]:
    started = time.monotonic()
    redis_side: dict[str, dict[str, Any]] = {}
    # Daemon: a thread stuck on a hung Redis ends with its socket timeouts, never blocks exit.
    thread = threading.Thread(target=redis_checks, args=(redis_side,), daemon=True)
    thread.start()
    checks = {"database": run_check(check_database)}
    thread.join(max(0.0, settings.HEALTH_TIMEOUT - (time.monotonic() - started)))
    budget_ms = round(settings.HEALTH_TIMEOUT * 1000, 1)
    for name in ("redis", "worker", "beat"):
        # dict(): the thread may still write its late answers; this reply is decided now.
        checks[name] = dict(redis_side.get(name) or {}) or {
            "ok": False,
            "detail": f"no answer within the health budget ({settings.HEALTH_TIMEOUT}s)",
            "latency_ms": budget_ms,
        }
    if not all(checks[name]["ok"] for name in ESSENTIAL):
        status = "unhealthy"
    elif all(check["ok"] for check in checks.values()):
        status = "healthy"
    else:
        status = "degraded"
    return {"status": status, "checks": checks}
