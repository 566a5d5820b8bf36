"""The process's Redis client for the project's own keys (access counts, rate limits, the query
vector cache, embedding holds). Short timeouts (REDIS_SOCKET_TIMEOUT) and no retries: callers
fail open when Redis is down or hung, and must not hang first. Every command and pipeline is
timed (neuromem_redis_command_duration_seconds)."""

from functools import cache

import redis
from django.conf import settings
from redis.client import Pipeline

from core.metrics import REDIS_DURATION


class TimedPipeline(Pipeline):
    def execute(self, raise_on_error: bool = True):
        with REDIS_DURATION.labels("pipeline").time():
            return super().execute(raise_on_error)


class TimedRedis(redis.Redis):
    def execute_command(self, *args, **options):
        with REDIS_DURATION.labels(str(args[0]).lower()).time():
            return super().execute_command(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint=None) -> TimedPipeline:
        return TimedPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)


@cache
def app_redis() -> redis.Redis:
    # from_url builds the pool's connections without redis-py's client-level retries (10 by
    # default with Redis(...)): one timeout per call, not eleven.
    return TimedRedis.from_url(
        settings.REDIS_URL,
        socket_timeout=settings.REDIS_SOCKET_TIMEOUT,
        socket_connect_timeout=settings.REDIS_SOCKET_TIMEOUT,
    )
