"""Celery beat's scheduler, with a heartbeat the health endpoint can read.

Beat runs no tasks itself, so the only honest sign of life is one it writes: on every tick
(at least every CELERY_BEAT_MAX_LOOP_INTERVAL seconds) it stores the time in Redis.
"""

import time

from django.conf import settings
from django.core.cache import cache
from django_celery_beat.schedulers import DatabaseScheduler

BEAT_HEARTBEAT_KEY = "beat:heartbeat"


def beat_heartbeat_write(*, now: float) -> None:
    cache.set(BEAT_HEARTBEAT_KEY, now, timeout=settings.BEAT_HEARTBEAT_MAX_AGE * 10)


def beat_heartbeat_age() -> float | None:
    """Seconds since beat's last heartbeat, or None when it never wrote one (or it expired)."""
    last = cache.get(BEAT_HEARTBEAT_KEY)
    return None if last is None else max(0.0, time.time() - last)


class HeartbeatScheduler(DatabaseScheduler):
    """django-celery-beat's database scheduler (schedules editable in the admin) + heartbeat."""

    def tick(self, *args, **kwargs):
        try:
            beat_heartbeat_write(now=time.time())
        except Exception:  # a Redis outage must not stop beat; health reports it instead
            self.logger.exception("beat heartbeat could not be written")
        return super().tick(*args, **kwargs)
