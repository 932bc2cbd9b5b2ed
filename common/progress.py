"""Progress of long background work, shown to whoever waits for it.

A management command that triggers follow-up work (a round import whose resolutions start
hindsight builds and regrades) wraps the call in ``progress_to(write)``. Work that runs in the
command's own process (tasks in-process, the embedded default) then reports to the command's
output; a Celery worker, where no one is listening, logs the same lines instead.

Work done in batches reports each batch with ``report_tally``: a listening command sees one line
for a run of batches of the same kind (their counts added up), written when a line of another kind
comes or the block ends; a worker logs each batch's line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol, Self


class Tally(Protocol):
    """A batch's counts: added to the next batch's of the same kind, written as one line."""

    def __add__(self, other: Self) -> Self: ...

    def summary(self) -> str: ...


class _Listener:
    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write
        self.kind = ""
        self.pending: Tally | None = None

    def line(self, text: str) -> None:
        self.flush()
        self.write(text)

    def tally(self, kind: str, part: Tally) -> None:
        if self.pending is not None and kind == self.kind:
            self.pending = self.pending + part
            return
        self.flush()
        self.kind, self.pending = kind, part

    def flush(self) -> None:
        if self.pending is not None:
            pending, self.pending = self.pending, None
            self.write(pending.summary())


_listener: ContextVar[_Listener | None] = ContextVar("hindsight_progress_listener", default=None)


@contextmanager
def progress_to(listener: Callable[[str], None]) -> Iterator[None]:
    """Send the progress lines reported inside the block to ``listener``."""
    current = _Listener(listener)
    token = _listener.set(current)
    try:
        yield
    finally:
        _listener.reset(token)
        current.flush()


def report_progress(logger: logging.Logger, text: str) -> None:
    """A progress line: to the listening command if there is one, else to ``logger`` at INFO."""
    listener = _listener.get()
    if listener is not None:
        listener.line(text)
    else:
        logger.info("%s", text)


def report_tally(logger: logging.Logger, kind: str, part: Tally) -> None:
    """One batch's counts: added up with the batches of the same ``kind`` reported right before and
    after it for a listening command, else logged at INFO on their own."""
    listener = _listener.get()
    if listener is not None:
        listener.tally(kind, part)
    else:
        logger.info("%s", part.summary())
