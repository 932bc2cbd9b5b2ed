"""Per-token rate limit for the agent API, counted in Django's cache (Redis in production).

A fixed window of ``HINDSIGHT_RATE_LIMIT_WINDOW`` seconds allows ``HINDSIGHT_RATE_LIMIT_REQUESTS``
requests per API token (per user or client address for requests without a token). The counter is
an atomic cache increment, so several gunicorn workers on several machines share one budget.
"""

from __future__ import annotations

import math
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from leaderboard.authentication import AgentPrincipal


class TokenRateThrottle(BaseThrottle):
    def __init__(self) -> None:
        self._wait: float | None = None

    def _ident(self, request: Any, view: Any) -> str:
        user = getattr(request, "user", None)
        if isinstance(user, AgentPrincipal):
            return f"token:{user.token.pk}"
        if user is not None and user.is_authenticated:
            return f"user:{user.pk}"
        return f"addr:{self.get_ident(request)}"

    def allow_request(self, request: Any, view: Any) -> bool:
        limit = int(settings.HINDSIGHT_RATE_LIMIT_REQUESTS)
        window = max(1, int(settings.HINDSIGHT_RATE_LIMIT_WINDOW))
        if limit <= 0:
            return True
        now = time.time()
        window_index = int(now // window)
        key = f"hindsight:ratelimit:{self._ident(request, view)}:{window}:{window_index}"
        cache.add(key, 0, timeout=window + 5)
        try:
            count = cache.incr(key)
        except ValueError:
            # The key expired between add and incr; start the window again.
            cache.add(key, 1, timeout=window + 5)
            count = 1
        if count <= limit:
            return True
        self._wait = (window_index + 1) * window - now
        return False

    def wait(self) -> float | None:
        return None if self._wait is None else max(1, math.ceil(self._wait))
