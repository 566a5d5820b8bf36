"""Real checks of the four parts NeuroMem needs: database, Redis, a Celery worker, Celery beat."""

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
    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1, socket_connect_timeout=1)
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


def system_health() -> dict[str, Any]:
    checks = {"database": run_check(check_database), "redis": run_check(check_redis)}
    if checks["redis"]["ok"]:
        checks["worker"] = run_check(check_worker)
        checks["beat"] = run_check(check_beat)
    else:
        # Both are reached through Redis; asking would only wait out the broker's retries.
        skipped = {"ok": False, "detail": "not checked: Redis is unavailable", "latency_ms": 0.0}
        checks["worker"], checks["beat"] = dict(skipped), dict(skipped)
    if not all(checks[name]["ok"] for name in ESSENTIAL):
        status = "unhealthy"
    elif all(check["ok"] for check in checks.values()):
        status = "healthy"
    else:
        status = "degraded"
    return {"status": status, "checks": checks}
