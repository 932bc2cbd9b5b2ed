"""What a poller is and what a poll reports (no Django import: the pollers and the poll framework
in ``ingestion.services.sources`` both build on it, so neither has to import the other).

A poller has two halves:

* ``fetch(*, source, now) -> payload`` talks to the network (through ``ingestion.fetching``)
  and may read the database, but never writes. Raise a ``FetchError`` (or any ``PollError``)
  to fail the poll; an exception's ``retry_after`` (a timedelta) is honoured by the backoff.
* ``store(*, source, payload, now) -> PollReport`` writes. It runs inside one transaction
  together with the source's health update, so a poll that fails midway stores nothing and
  the next poll retries. It may set ``source.etag`` / ``source.last_modified``: they are
  saved only when the whole poll succeeds.

Splitting the halves keeps network waits out of database transactions. The table of pollers,
one per source kind, is ``ingestion.services.pollers.POLLERS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any


class PollError(Exception):
    """A poll failed for a reason worth showing on the status page (bad payload, missing field)."""

    retry_after: timedelta | None = None


@dataclass
class PollReport:
    source_id: int
    added: int = 0  # new rows (articles, markets, price points, ...)
    skipped: int = 0  # items seen and deliberately not stored: already stored, or invalid
    failed: int = 0  # items read but lost because the poll failed (rolled back)
    error: str = ""  # why the poll failed; empty on success
    skip_reasons: dict[str, int] = field(default_factory=dict)  # e.g. {"already stored": 9, "missing title": 1}
    problems: list[str] = field(default_factory=list)  # per-item details, e.g. "entry 4: missing title"
    # Read, but only with a warning worth showing staff (kept on the source until the next poll):
    # e.g. a feed recovered by feedparser's loose parser, a market on hold.
    warnings: list[str] = field(default_factory=list)
    not_modified: bool = False  # the server answered 304: nothing to do, counted as a success
    busy: bool = False  # another worker holds the claim (or, due_only, not due): this call did nothing
    next_attempt_at: datetime | None = None

    @property
    def ok(self) -> bool:
        return not self.error and not self.busy

    def summary(self) -> str:
        if self.busy:
            return "nothing done: another worker is polling this source, or it is not due yet"
        text = f"added {self.added}, skipped {self.skipped}, failed {self.failed}"
        if self.skip_reasons:
            text += " (" + ", ".join(f"{n} {reason}" for reason, n in sorted(self.skip_reasons.items())) + ")"
        if self.not_modified:
            text += ", not modified (304)"
        if self.warnings:
            text += f", {len(self.warnings)} warning{'s' if len(self.warnings) > 1 else ''}: " + "; ".join(
                self.warnings
            )
        if self.error:
            text += f"; error: {self.error}"
        return text


FetchFn = Callable[..., Any]
StoreFn = Callable[..., PollReport]
# (kind, url, options) -> what the poller would refuse in these options, or "" when nothing.
OptionsCheckFn = Callable[[str, str, Mapping[str, Any]], str]


def _no_problem(kind: str, url: str, options: Mapping[str, Any]) -> str:
    return ""


@dataclass(frozen=True)
class Poller:
    fetch: FetchFn
    store: StoreFn
    # The source options this kind's poller reads; any other name is refused when a source is
    # added or edited, so that a misspelt option is not silently ignored.
    options: frozenset[str] = frozenset()
    # Checks the values of those options when a source is added or edited, rather than at its
    # first poll.
    options_problem: OptionsCheckFn = _no_problem
