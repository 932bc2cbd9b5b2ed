"""The fictional clock: which part of the sample world has "happened" so far.

The world's dates all lie in the real past (the generator ends it shortly before the real time it
is generated at), so every article carries its fictional date and the platform's as-of rules apply
to it unchanged. The clock is the world's *present*: the local server publishes only what is dated
at or before it (feed entries, market prices, settlements, structured events), and polls run with
``now`` set to it. Advancing the clock is what makes live questions resolve.
"""

from __future__ import annotations

import threading
from datetime import datetime


class FictionalClock:
    """A monotonic, thread-safe present for the world (the server reads it from its threads)."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("the fictional clock needs an aware datetime")
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, to: datetime) -> datetime:
        """Move the present forward to ``to``; moving it backwards is refused (time only runs on)."""
        if to.tzinfo is None:
            raise ValueError("the fictional clock needs an aware datetime")
        with self._lock:
            if to < self._now:
                raise ValueError(f"the fictional clock cannot go back from {self._now.isoformat()} to {to.isoformat()}")
            self._now = to
            return self._now
