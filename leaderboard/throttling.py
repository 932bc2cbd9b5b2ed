"""Rate limits counted in Django's cache (Redis in production), and who a request comes from.

A fixed window of ``HINDSIGHT_RATE_LIMIT_WINDOW`` seconds allows ``HINDSIGHT_RATE_LIMIT_REQUESTS``
requests to the whole API per agent token (per signed-in user, else per client address, for
requests without a token). The counter is an atomic cache increment, so several gunicorn workers on
several machines share one budget; on Redis it costs one round trip per request.

The client address is ``REMOTE_ADDR`` unless that is one of ``HINDSIGHT_TRUSTED_PROXIES``: only then
is ``X-Forwarded-For`` read, from the right, skipping the trusted proxies' own entries (anything to
the left of the first untrusted hop was written by the client and proves nothing).

When the cache cannot be reached, ``HINDSIGHT_RATE_LIMIT_FAIL_OPEN`` decides: serve uncounted, or
(the default) answer 503 with ``Retry-After``.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache
from rest_framework import exceptions, status
from rest_framework.throttling import BaseThrottle

from leaderboard.authentication import AgentPrincipal
from leaderboard.outage import CACHE_DOWN_ERRORS, UNAVAILABLE_RETRY_AFTER_SECONDS

logger = logging.getLogger(__name__)

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class ServiceUnavailable(exceptions.APIException):
    """503 with Retry-After (DRF's exception handler sends ``wait`` as that header)."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "A service the API depends on is unreachable; retry shortly."
    default_code = "unavailable"

    def __init__(self, detail: str | None = None, *, wait: int = UNAVAILABLE_RETRY_AFTER_SECONDS) -> None:
        super().__init__(detail)
        self.wait = wait


@lru_cache(maxsize=8)
def _networks(spec: tuple[str, ...]) -> tuple[_Network, ...]:
    return tuple(ipaddress.ip_network(item, strict=False) for item in spec)


def _address(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(value.strip())
    except ValueError:
        return None


def _trusted(value: str, networks: tuple[_Network, ...]) -> bool:
    address = _address(value)
    return address is not None and any(address in network for network in networks)


def client_address(request: Any) -> str:
    """The address a request comes from, believing X-Forwarded-For only from a trusted proxy."""
    meta = request.META
    remote = str(meta.get("REMOTE_ADDR") or "")
    networks = _networks(tuple(settings.HINDSIGHT_TRUSTED_PROXIES))
    if not networks or not _trusted(remote, networks):
        return remote
    hops = [hop.strip() for hop in str(meta.get("HTTP_X_FORWARDED_FOR") or "").split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, networks):
            # A trusted proxy wrote this entry; an unparsable one means a misconfigured proxy, and
            # then every client behind it shares the proxy's budget rather than choosing its own.
            return hop if _address(hop) is not None else remote
    return hops[0] if hops else remote


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


@dataclass(frozen=True)
class Window:
    """A fixed counting window: ``seconds`` long, ``limit`` events allowed in it."""

    name: str
    limit: int
    seconds: int

    def _key(self, ident: str, now: float) -> tuple[str, float]:
        index = int(now // self.seconds)
        return f"hindsight:{self.name}:{ident}:{self.seconds}:{index}", (index + 1) * self.seconds - now

    def hit(self, ident: str, *, now: float | None = None) -> float | None:
        """Count one event; None while within the limit, else the seconds until the window ends."""
        if self.limit <= 0:
            return None
        key, remaining = self._key(ident, time.time() if now is None else now)
        return None if _count(key, timeout=self.seconds + 5) <= self.limit else remaining

    def exceeded(self, ident: str, *, now: float | None = None) -> float | None:
        """Like ``hit`` without counting: the seconds left when the limit is already used up."""
        if self.limit <= 0:
            return None
        key, remaining = self._key(ident, time.time() if now is None else now)
        return remaining if int(caches[DEFAULT_CACHE_ALIAS].get(key) or 0) >= self.limit else None

    def forget(self, ident: str) -> None:
        caches[DEFAULT_CACHE_ALIAS].delete(self._key(ident, time.time())[0])


def retry_after(seconds: float) -> int:
    return max(1, math.ceil(seconds))


def cache_down(action: str) -> bool:
    """Log that the cache is unreachable; True when the limiter is set to fail open."""
    fail_open = bool(settings.HINDSIGHT_RATE_LIMIT_FAIL_OPEN)
    logger.warning("cache unreachable while %s; %s", action, "serving uncounted" if fail_open else "answering 503")
    return fail_open


class TokenRateThrottle(BaseThrottle):
    """The API's one budget: per token, per signed-in user, else per client address."""

    def __init__(self) -> None:
        self._wait: float | None = None

    def _ident(self, request: Any, view: Any) -> str:
        user = getattr(request, "user", None)
        if isinstance(user, AgentPrincipal):
            return f"token:{user.token.pk}"
        token = getattr(request, "auth", None)  # another kind of token (a delivery's evidence token)
        token_pk = getattr(token, "pk", None)
        if token_pk is not None:
            return f"{type(token).__name__.lower()}:{token_pk}"
        if user is not None and user.is_authenticated:
            return f"user:{user.pk}"
        return f"addr:{client_address(request)}"

    def allow_request(self, request: Any, view: Any) -> bool:
        window = Window(
            "ratelimit",
            limit=int(settings.HINDSIGHT_RATE_LIMIT_REQUESTS),
            seconds=max(1, int(settings.HINDSIGHT_RATE_LIMIT_WINDOW)),
        )
        try:
            self._wait = window.hit(self._ident(request, view))
        except CACHE_DOWN_ERRORS as exc:
            if cache_down("counting an API request"):
                return True
            raise ServiceUnavailable(
                "The rate limiter's cache is unreachable, so the request was not served; retry shortly."
            ) from exc
        return self._wait is None

    def wait(self) -> float | None:
        return None if self._wait is None else retry_after(self._wait)
