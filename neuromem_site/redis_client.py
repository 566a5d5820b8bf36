"""The process's Redis client for the project's own keys (access counts, rate limits). Short
timeouts: callers fail open when Redis is down, and must not hang first."""

from functools import cache

import redis
from django.conf import settings


@cache
def app_redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1, socket_connect_timeout=1)
