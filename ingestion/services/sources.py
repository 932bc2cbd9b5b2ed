"""Sources and their polling: creation, claiming, backoff and health. Each source kind's poller
(``ingestion.polls`` says what one is) comes from the table in ``ingestion.services.pollers``.
"""

from __future__ import annotations

import difflib
import logging
import random
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from common.bulk import cyclic_gc_paused
from ingestion.feeds import FeedParseError
from ingestion.fetching import FetchError
from ingestion.models import SAMPLE_WORLD_OPTION, Source
from ingestion.polls import PollError, PollReport
from ingestion.services.pollers import POLLERS

logger = logging.getLogger(__name__)


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
    poller = POLLERS.get(kind)
    return poller.options_problem(kind, url, options) if poller is not None else ""


def source_validate(*, kind: str, url: str, options: Any = None, poll_interval: timedelta | None = None) -> None:
    """Raise ValidationError naming the field for a bad kind, URL, options or interval."""
    errors: dict[str, str] = {}
    if kind == Source.Kind.ARCHIVE:
        # Never polled: its articles come from a file (its items, licence and span with them).
        errors["kind"] = "archive sources are created by importing an archive: manage.py import_archive PATH"
    elif kind not in Source.Kind.values:
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
    return (FetchError, FeedParseError)


def _error_message(exc: Exception, *, expected: bool) -> str:
    text = str(exc).strip()
    if expected:
        return text or type(exc).__name__
    return f"unexpected {type(exc).__name__}: {text}" if text else f"unexpected {type(exc).__name__}"
