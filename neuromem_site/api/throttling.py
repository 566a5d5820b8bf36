from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import redis
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from core.metrics import THROTTLED
from core.redis_client import app_redis

if TYPE_CHECKING:  # DRF imports this module while defining APIView
    from rest_framework.views import APIView

log = logging.getLogger("neuromem.api")


class ApiClientRateThrottle(SimpleRateThrottle):
    """API_RATE_LIMIT per API client (per address before authentication), counted in Redis in
    fixed windows: one INCR per request. (DRF's own throttle keeps every request's timestamp
    in one cached list and reads and re-pickles it each time: thousands of entries a minute
    at our default rate.)"""

    scope = "api_client"

    def get_cache_key(self, request: Request, view: APIView) -> str:
        ident = request.user.pk if request.user is not None else self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def allow_request(self, request: Request, view: APIView) -> bool:
        if self.rate is None:
            return True
        now = self.timer()
        window = int(now // self.duration)
        self.retry_after = self.duration - now % self.duration
        key = f"{self.get_cache_key(request, view)}:{window}"
        try:
            pipe = app_redis().pipeline(transaction=False)
            pipe.incr(key)
            pipe.expire(key, self.duration)
            count, _ = pipe.execute()
        except redis.RedisError:
            # Redis being down must not take the API down with it: fail open, and say so.
            log.warning("rate limit not checked: Redis unavailable", exc_info=True)
            return True
        if count > self.num_requests:
            THROTTLED.inc()
            return False
        return True

    def wait(self) -> float:
        return self.retry_after
