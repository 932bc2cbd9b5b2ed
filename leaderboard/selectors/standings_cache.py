"""The standings version and the cache of rendered leaderboard tables keyed by it.

Standings change only when they are written; every write bumps a version number, which makes every
cached table, page and export stale at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache

_VERSION_KEY = "standings:version"
_T = TypeVar("_T")


def standings_version() -> int:
    """A number that changes whenever standings are written (cache keys of rendered tables use it).

    One cache GET per call (an ADD only the first time ever).
    """
    return int(cache.get_or_set(_VERSION_KEY, 1, None) or 1)


def leaderboard_cache_seconds() -> int:
    """How long a rendered leaderboard table is kept. A shared cache (Redis) sees every version
    bump, so entries live long; a per-process cache does not, so there they expire quickly."""
    backend = str(settings.CACHES.get("default", {}).get("BACKEND", ""))
    return 3600 if backend.endswith("RedisCache") else 30


def cached_for_version(key: str, build: Callable[[], _T]) -> _T:
    """``build()`` cached under ``key`` for the current standings version.

    One cache round trip on a hit: the version and the entry (stored with the version it was
    built under) are read together, so a standings write makes every entry stale at once.
    """
    found = cache.get_many([_VERSION_KEY, key])
    version = found.get(_VERSION_KEY)
    if version is None:
        version = standings_version()
    entry = found.get(key)
    if entry is not None and entry[0] == version:
        return entry[1]  # type: ignore[no-any-return]
    value = build()
    cache.set(key, (version, value), leaderboard_cache_seconds())
    return value


def bump_standings_version() -> None:
    """Make every cached leaderboard table stale (called after standings are written)."""
    try:
        cache.incr(_VERSION_KEY)
    except ValueError:
        cache.set(_VERSION_KEY, 2, None)
