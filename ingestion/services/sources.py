"""Sources and their polling: creation, the poller registry, claiming, backoff and health.

A poller is registered per ``Source.Kind`` with :func:`register_poller` and has two halves:

* ``fetch(*, source, now) -> payload`` talks to the network (through ``ingestion.fetching``)
  and may read the database, but never writes. Raise a ``FetchError`` (or any ``PollError``)
  to fail the poll; an exception's ``retry_after`` (a timedelta) is honoured by the backoff.
* ``store(*, source, payload, now) -> PollReport`` writes. It runs inside one transaction
  together with the source's health update, so a poll that fails midway stores nothing and
  the next poll retries. It may set ``source.etag`` / ``source.last_modified``: they are
  saved only when the whole poll succeeds.

Splitting the halves keeps network waits out of database transactions.
"""

from __future__ import annotations

import difflib
import logging
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ingestion.memory import cyclic_gc_paused
from ingestion.models import Source

logger = logging.getLogger(__name__)


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


@dataclass(frozen=True)
class Poller:
    fetch: FetchFn
    store: StoreFn
    # The source options this kind's poller reads; any other name is refused when a source is
    # added or edited, so that a misspelt option is not silently ignored.
    options: frozenset[str] = frozenset()


POLLERS: dict[str, Poller] = {}

# Marks the sources the demo's sample world created (ingestion.sampleworld.publish), whatever
# their kind; read by the sample world, not by a poller.
SAMPLE_WORLD_OPTION = "sample_world"


def register_poller(kind: str, *, fetch: FetchFn, store: StoreFn, options: Iterable[str] = ()) -> None:
    """Make ``source_poll`` use ``fetch``/``store`` for sources of ``kind`` (a Source.Kind value).

    Call it at import time of the module that defines the poller, and import that module from
    ``IngestionConfig.ready`` so workers and commands always have it.
    """
    if kind not in Source.Kind.values:
        raise ValueError(f"unknown source kind {kind!r}; expected one of {', '.join(Source.Kind.values)}")
    POLLERS[kind] = Poller(fetch=fetch, store=store, options=frozenset(options))


def _url_problem(url: str) -> str:
    try:
        URLValidator(schemes=["http", "https"])(url)
    except ValidationError:
        return f"invalid URL {url!r}: expected an absolute http(s) URL"
    return ""


def _unknown_options_problem(*, kind: str, options: Mapping[str, Any]) -> str:
    poller = POLLERS.get(kind)
    if poller is None:
        return ""
    unknown = sorted(str(name) for name in options if name not in poller.options and name != SAMPLE_WORLD_OPTION)
    if not unknown:
        return ""
    named = ", ".join(repr(name) for name in unknown)
    text = f"unknown source option{'s' if len(unknown) > 1 else ''} {named} for a {kind} source"
    close = difflib.get_close_matches(unknown[0], sorted(poller.options), n=1)
    if close:
        text += f" (did you mean {close[0]!r}?)"
    known = ", ".join(sorted(poller.options)) or "none"
    return f"{text}; {kind} sources take: {known}"


def _options_problem(*, kind: str, url: str, options: Mapping[str, Any]) -> str:
    """What the poller would refuse in these options, found now rather than at the first poll."""
    unknown = _unknown_options_problem(kind=kind, options=options)
    if unknown:
        return unknown
    if kind == Source.Kind.RSS:
        max_bytes = options.get("max_bytes")
        if max_bytes is not None and (
            isinstance(max_bytes, bool) or not isinstance(max_bytes, int | float) or max_bytes <= 0
        ):
            return f"source option 'max_bytes' should be a positive number of bytes, got {max_bytes!r}"
        return ""
    # Imported here: the market services import this module to register their pollers.
    from ingestion.markets import MarketFormatError
    from ingestion.services.markets import Selection, market_client

    try:
        Selection.from_options(options)
        market_client(source=Source(kind=kind, url=url, options=dict(options)), get=_never_called)
    except MarketFormatError as exc:
        return str(exc)
    return ""


def _never_called(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("validating options must not fetch anything")


def source_validate(*, kind: str, url: str, options: Any = None, poll_interval: timedelta | None = None) -> None:
    """Raise ValidationError naming the field for a bad kind, URL, options or interval."""
    errors: dict[str, str] = {}
    if kind not in Source.Kind.values:
        errors["kind"] = f"unknown kind {kind!r}; choose one of {', '.join(Source.Kind.values)}"
    problem = _url_problem(url)
    if problem:
        errors["url"] = problem
    if options is not None and not isinstance(options, Mapping):
        errors["options"] = "options must be a JSON object (KEY=VALUE pairs)"
    elif options and kind in Source.Kind.values and "kind" not in errors:
        problem = _options_problem(kind=kind, url=url, options=options)
        if problem:
            errors["options"] = problem
    if poll_interval is not None and poll_interval <= timedelta(0):
        errors["poll_interval"] = "poll interval must be positive"
    if errors:
        raise ValidationError(errors)


@transaction.atomic
def source_create(
    *,
    kind: str,
    url: str,
    name: str = "",
    options: Mapping[str, Any] | None = None,
    poll_interval: timedelta | None = None,
    enabled: bool = True,
) -> Source:
    """A new source, due for its first poll at once."""
    url = url.strip()
    source_validate(kind=kind, url=url, options=options, poll_interval=poll_interval)
    source = Source(
        kind=kind,
        url=url,
        name=(name.strip() or f"{urlsplit(url).hostname} ({kind})")[:200],
        options=dict(options or {}),
        poll_interval=poll_interval or timedelta(minutes=15),
        enabled=enabled,
    )
    source.full_clean()
    source.save()
    return source


def backoff_delay(
    *,
    failures: int,
    retry_after: timedelta | None = None,
    rng: random.Random | None = None,
) -> timedelta:
    """Wait after the ``failures``-th consecutive failure: min(max, base * 2**(failures-1)) plus
    up to 20% jitter (so sources that failed together do not retry together), and never less
    than the server's Retry-After (itself capped, so a hostile header cannot park a source)."""
    base = float(settings.HINDSIGHT_SOURCE_BACKOFF_BASE_SECONDS)
    cap = float(settings.HINDSIGHT_SOURCE_BACKOFF_MAX_SECONDS)
    exponent = min(max(failures - 1, 0), 32)
    seconds = min(cap, base * 2**exponent)
    seconds *= 1.0 + (rng or random).uniform(0.0, 0.2)
    if retry_after is not None:
        honoured = min(retry_after.total_seconds(), float(settings.HINDSIGHT_SOURCE_RETRY_AFTER_MAX_SECONDS))
        seconds = max(seconds, honoured)
    return timedelta(seconds=seconds)


def _claim(*, source_id: int, now: datetime, due_only: bool) -> bool:
    stale_before = now - timedelta(seconds=settings.HINDSIGHT_SOURCE_CLAIM_STALE_SECONDS)
    claimable = Source.objects.filter(pk=source_id).filter(Q(claimed_at=None) | Q(claimed_at__lt=stale_before))
    if due_only:
        claimable = claimable.filter(Q(next_attempt_at=None) | Q(next_attempt_at__lte=now))
    return claimable.update(claimed_at=now) == 1


def source_poll(
    *, source_id: int, now: datetime | None = None, include_disabled: bool = False, due_only: bool = False
) -> PollReport:
    """Poll one source now: fetch, store, and record health. Never raises for a failing source:
    the failure is recorded on it (last_error, backoff) and returned in the report.

    A concurrent call for the same source does nothing (``report.busy``); with ``due_only`` (the
    periodic task) neither does a duplicate delivery arriving after the source was just polled.
    """
    now = now or timezone.now()
    report = PollReport(source_id=source_id)
    source = Source.objects.filter(pk=source_id).first()
    if source is None:
        report.error = f"no source with id {source_id}"
        return report
    if not source.enabled and not include_disabled:
        report.error = "source is disabled"
        return report
    if not _claim(source_id=source_id, now=now, due_only=due_only):
        report.busy = True
        return report
    source.claimed_at = now
    try:
        with cyclic_gc_paused():
            return _poll_claimed(source=source, now=now, report=report)
    finally:
        # Release only our own claim: a stale claim taken over by another worker stays theirs.
        Source.objects.filter(pk=source_id, claimed_at=now).update(claimed_at=None)


def source_poll_enqueue(*, source_ids: Iterable[int]) -> list[str]:
    """Queue an immediate poll of each source on the ``ingest`` queue, due or not and enabled or
    not (staff asked for it), once the current transaction commits. Returns the names of the
    sources queued; ids that name no source are left out."""
    from ingestion.tasks import poll_source

    sources = list(Source.objects.filter(pk__in=list(source_ids)).order_by("name", "pk").values_list("pk", "name"))
    for source_id, _ in sources:
        transaction.on_commit(partial(poll_source.delay, source_id, force=True))
    return [name for _, name in sources]


def _poll_claimed(*, source: Source, now: datetime, report: PollReport) -> PollReport:
    payload: Any = None
    try:
        poller = POLLERS.get(source.kind)
        if poller is None:
            raise PollError(f"no poller is registered for sources of kind {source.kind!r}")
        payload = poller.fetch(source=source, now=now)
        with transaction.atomic():
            stored = poller.store(source=source, payload=payload, now=now)
            report.next_attempt_at = now + source.poll_interval
            Source.objects.filter(pk=source.pk).update(
                last_attempt_at=now,
                last_success_at=now,
                consecutive_failures=0,
                next_attempt_at=report.next_attempt_at,
                last_error="",
                last_warning="\n".join(stored.warnings)[:5000],
                etag=(source.etag or "")[:500],
                last_modified=(source.last_modified or "")[:100],
            )
        report.added, report.skipped = stored.added, stored.skipped
        report.skip_reasons, report.problems = stored.skip_reasons, stored.problems
        report.warnings = stored.warnings
        report.not_modified = stored.not_modified
        return report
    except Exception as exc:
        expected = isinstance(exc, (PollError, *_expected_errors()))
        if not expected:
            logger.exception("unexpected error polling source %s", source.pk)
        report.error = _error_message(exc, expected=expected)
        # Items fetched but rolled back; a payload says how many through ``item_count``.
        report.failed = int(getattr(payload, "item_count", 0) or 0)
        retry_after = getattr(exc, "retry_after", None)
    failures = source.consecutive_failures + 1
    report.next_attempt_at = now + backoff_delay(
        failures=failures, retry_after=retry_after if isinstance(retry_after, timedelta) else None
    )
    Source.objects.filter(pk=source.pk).update(
        last_attempt_at=now,
        consecutive_failures=failures,
        next_attempt_at=report.next_attempt_at,
        last_error=report.error[:5000],
    )
    logger.warning("source %s failed (%d in a row): %s", source.pk, failures, report.error)
    return report


def _expected_errors() -> tuple[type[Exception], ...]:
    from ingestion.feeds import FeedParseError
    from ingestion.fetching import FetchError

    return (FetchError, FeedParseError)


def _error_message(exc: Exception, *, expected: bool) -> str:
    text = str(exc).strip()
    if expected:
        return text or type(exc).__name__
    return f"unexpected {type(exc).__name__}: {text}" if text else f"unexpected {type(exc).__name__}"
