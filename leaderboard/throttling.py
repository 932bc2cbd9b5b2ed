"""Per-token rate limit for the agent API, counted in Django's cache (Redis in production).

A fixed window of ``HINDSIGHT_RATE_LIMIT_WINDOW`` seconds allows ``HINDSIGHT_RATE_LIMIT_REQUESTS``
requests per API token (per user or client address for requests without a token). The counter is
an atomic cache increment, so several gunicorn workers on several machines share one budget; on
Redis it costs one round trip per request.
"""

from __future__ import annotations

import math
import time
from typing import Any

from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache
from rest_framework.throttling import BaseThrottle

from leaderboard.authentication import AgentPrincipal


def _count(key: str, *, timeout: int) -> int:
    """Add one to the window's counter and return it."""
    backend = caches[DEFAULT_CACHE_ALIAS]
    if isinstance(backend, RedisCache):
        # One round trip: SET NX creates the counter with its expiry, INCR counts; both in a pipeline.
        # Keys and integer values are stored as Django's cache API would (``cache.get`` reads them).
        redis_key = backend.make_and_validate_key(key)
        # Django builds a new redis.Redis object on every cache call; one per backend (per thread) is
        # enough, and saves building its response-callback table on every request.
        client = backend.__dict__.get("_hindsight_client")
        if client is None:
            client = backend.__dict__["_hindsight_client"] = backend._cache.get_client(redis_key, write=True)
        pipe = client.pipeline(transaction=False)
        pipe.set(redis_key, 0, ex=timeout, nx=True)
        pipe.incr(redis_key)
        return int(pipe.execute()[1])
    backend.add(key, 0, timeout=timeout)
    try:
        return backend.incr(key)
    except ValueError:
        # The key expired between add and incr; start the window again.
        backend.add(key, 1, timeout=timeout)
        return 1


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
        count = _count(key, timeout=window + 5)
        if count <= limit:
            return True
        self._wait = (window_index + 1) * window - now
        return False

    def wait(self) -> float | None:
        return None if self._wait is None else max(1, math.ceil(self._wait))
