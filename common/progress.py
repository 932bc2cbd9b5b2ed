"""Progress of long background work, shown to whoever waits for it.

A management command that triggers follow-up work (a round import whose resolutions start
hindsight builds and regrades) wraps the call in ``progress_to(write)``. Work that runs in the
command's own process (tasks in-process, the embedded default) then reports to the command's
output; a Celery worker, where no one is listening, logs the same lines instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Listener = Callable[[str], None]

_listener: ContextVar[Listener | None] = ContextVar("hindsight_progress_listener", default=None)


@contextmanager
def progress_to(listener: Listener) -> Iterator[None]:
    """Send the progress lines reported inside the block to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def report_progress(logger: logging.Logger, text: str) -> None:
    """A progress line: to the listening command if there is one, else to ``logger`` at INFO."""
    listener = _listener.get()
    if listener is not None:
        listener(text)
    else:
        logger.info("%s", text)
