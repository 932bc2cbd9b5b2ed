"""A backing service that is down: the errors that mean it, and what the client is told.

Redis (the cache and the task broker) and the database can each be unreachable for a while (a
restart, a failover). Requests that need them are answered 503 with ``Retry-After`` rather than 500:
the API and MCP with the API's JSON error (``code`` ``unavailable``), the site with a page saying so.
Nothing is stored by a request that failed this way (each request is one transaction, or fails
before writing).
"""

from __future__ import annotations

import sys

from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as KombuOperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

# The cache is unreachable: the errors Django's Redis backend lets through.
CACHE_DOWN_ERRORS: tuple[type[BaseException], ...] = (RedisConnectionError, RedisTimeoutError)
# Redis as the cache or as the task broker.
REDIS_DOWN_ERRORS: tuple[type[BaseException], ...] = (*CACHE_DOWN_ERRORS, KombuOperationalError)
# The database refused or lost the connection (server stopped or restarting, too many connections,
# a connection cut mid-query), as Django wraps the driver's errors. Integrity and data errors are
# the request's own fault and stay what they are.
DATABASE_DOWN_ERRORS: tuple[type[BaseException], ...] = (OperationalError, InterfaceError)
# What a client is told to wait.
UNAVAILABLE_RETRY_AFTER_SECONDS = 30

REDIS_DOWN_MESSAGE = "The server's cache or task queue is unreachable; retry shortly."
DATABASE_DOWN_MESSAGE = "The database is unreachable; nothing was stored. Retry shortly."


def outage_message(exc: BaseException | None) -> str | None:
    """What to tell the client when ``exc`` means a backing service is down; None otherwise."""
    if isinstance(exc, DATABASE_DOWN_ERRORS):
        return DATABASE_DOWN_MESSAGE
    if isinstance(exc, REDIS_DOWN_ERRORS):
        return REDIS_DOWN_MESSAGE
    return None


def handled_exception() -> BaseException | None:
    """The exception being handled (Django calls its 500 handler inside the ``except`` block)."""
    return sys.exc_info()[1]
