"""429 (or 503) with Retry-After: the source waits at least as long as the server asked."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ingestion.fetching import parse_retry_after
from ingestion.services.sources import source_poll
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response


def test_429_retry_after_seconds(feed_source, settings) -> None:
    settings.HINDSIGHT_SOURCE_BACKOFF_BASE_SECONDS = 60
    source = feed_source("/busy", response=Response(status=429, headers={"Retry-After": "3600"}))
    report = source_poll(source_id=source.pk, now=NOW)
    assert report.error.endswith("retry after 3600s")
    assert "HTTP 429" in report.error
    source.refresh_from_db()
    assert source.next_attempt_at >= NOW + timedelta(seconds=3600)
    assert source.next_attempt_at <= NOW + timedelta(seconds=3600 * 1.2)
    assert "HTTP 429" in source.last_error


def test_503_retry_after_http_date(feed_source) -> None:
    when = "Thu, 05 Mar 2026 14:00:00 GMT"  # two hours after NOW
    source = feed_source("/maint", response=Response(status=503, headers={"Retry-After": when}))
    source_poll(source_id=source.pk, now=NOW)
    source.refresh_from_db()
    assert source.next_attempt_at >= datetime(2026, 3, 5, 14, 0, tzinfo=UTC)


def test_short_retry_after_does_not_shorten_the_backoff(feed_source, settings) -> None:
    settings.HINDSIGHT_SOURCE_BACKOFF_BASE_SECONDS = 300
    source = feed_source("/busy", response=Response(status=429, headers={"Retry-After": "1"}))
    report = source_poll(source_id=source.pk, now=NOW)
    assert report.next_attempt_at >= NOW + timedelta(seconds=300)


def test_absurd_retry_after_is_capped(feed_source, settings) -> None:
    settings.HINDSIGHT_SOURCE_RETRY_AFTER_MAX_SECONDS = 86400
    settings.HINDSIGHT_SOURCE_BACKOFF_BASE_SECONDS = 60
    source = feed_source("/busy", response=Response(status=429, headers={"Retry-After": "999999999"}))
    report = source_poll(source_id=source.pk, now=NOW)
    assert report.next_attempt_at == NOW + timedelta(seconds=86400)


def test_parse_retry_after() -> None:
    assert parse_retry_after("120") == timedelta(seconds=120)
    assert parse_retry_after("Thu, 05 Mar 2026 12:01:00 GMT", now=NOW) == timedelta(seconds=60)
    assert parse_retry_after("Wed, 04 Mar 2026 12:00:00 GMT", now=NOW) == timedelta(0)  # in the past
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    assert parse_retry_after("") is None
