"""The process's Redis client for the project's own keys (access counts, rate limits). Short
timeouts (REDIS_SOCKET_TIMEOUT) and no retries: callers fail open when Redis is down or hung,
and must not hang first."""

from functools import cache

import redis
from django.conf import settings


@cache
def app_redis() -> redis.Redis:
    # from_url builds the pool's connections without redis-py's client-level retries (10 by
    # default with Redis(...)): one timeout per call, not eleven.
    return redis.Redis.from_url(
        settings.REDIS_URL,
        socket_timeout=settings.REDIS_SOCKET_TIMEOUT,
        socket_connect_timeout=settings.REDIS_SOCKET_TIMEOUT,
    )
