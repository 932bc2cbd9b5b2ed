"""The worker's broker consumer, made to outlive a broker crash.

With celery 5.7.0 and kombu 5.7.0 (the newest releases) on Redis, a worker that loses its broker
while a late-acknowledged task runs exits with ``Unrecoverable error: AttributeError("'NoneType'
object has no attribute 'hostname'")``: on the connection error Celery first ``collect()``s the
broken connection, which detaches its transport (``transport.client = None``) after the channel
failed to close, then closes the connection again; that second close tries to put the unacknowledged
messages back through the detached transport, whose connection parameters are gone. Celery ignores
only connection errors there, so the AttributeError escapes and stops the worker for good.

Closing a connection that is already broken can only release what is left of it, so any failure of
that close is logged and ignored here; everything else (reconnecting with retries, restoring the
prefetch count) runs as Celery does it. The messages that could not be put back stay in Redis's
unacknowledged set and are delivered again after the visibility timeout, and the work they carry is
idempotent (grading claims, source claims, delivery claims).
"""

from __future__ import annotations

import logging
from typing import Any

from celery.worker.consumer import Consumer

logger = logging.getLogger(__name__)


class BrokerLossTolerantConsumer(Consumer):  # type: ignore[misc]
    def on_connection_error_after_connected(self, exc: Exception) -> None:
        connection = self.connection
        if connection is not None:
            close = connection.close

            def close_broken_connection() -> Any:
                try:
                    return close()
                except Exception:
                    logger.warning("closing the lost broker connection failed; continuing", exc_info=True)
                    return None

            # Celery calls ``connection.close`` once the connection is collected: this is that call.
            connection.close = close_broken_connection
        super().on_connection_error_after_connected(exc)
