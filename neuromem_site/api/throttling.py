from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

if TYPE_CHECKING:  # DRF imports this module while defining APIView
    from rest_framework.views import APIView

log = logging.getLogger("neuromem.api")


class ApiClientRateThrottle(SimpleRateThrottle):
    """API_RATE_LIMIT per API client (per address before authentication), counted in Redis."""

    scope = "api_client"

    def get_cache_key(self, request: Request, view: APIView) -> str:
        ident = request.user.pk if request.user is not None else self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def allow_request(self, request: Request, view: APIView) -> bool:
        try:
            return super().allow_request(request, view)
        except Exception:
            # Redis being down must not take the API down with it: fail open, and say so.
            log.warning("rate limit not checked: cache unavailable", exc_info=True)
            return True
