"""The Redis broker transport, made to outlive a broker crash.

With celery 5.7.0 and kombu 5.7.0 (the newest releases), a worker that loses Redis while a
late-acknowledged task runs exits with ``Unrecoverable error: AttributeError("'NoneType' object
has no attribute 'hostname'")`` and stays down. On the connection error Celery ``collect()``s the
broken connection, which detaches its transport (``transport.client = None``) while the channel
that delivered the running task lives on; the next use of that channel (closing it, which puts the
unacknowledged messages back, or acknowledging the task when it finishes) builds a new Redis
connection pool from the detached transport's parameters, which are gone. Celery tolerates
*connection* errors at exactly those places (it logs them and carries on), but not the
AttributeError, which escapes the event loop and stops the worker.

Here a channel of a detached transport raises the connection error it stands for. The messages
it could not acknowledge or put back stay in Redis's unacknowledged set and are delivered again
after the visibility timeout; the work they carry is idempotent (grading, source and delivery
claims), so running it again changes nothing.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError


class Channel(kombu_redis.Channel):  # type: ignore[misc]
    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection.client is None:
            raise RedisConnectionError("this broker connection was lost and has been closed")
        params: dict[str, Any] = super()._connparams(asynchronous=asynchronous)  # type: ignore[misc]
        return params


class Transport(kombu_redis.Transport):  # type: ignore[misc]
    Channel = Channel
