"""HTTP 4xx/5xx and unreachable hosts are recorded on the source, which backs off exponentially."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from ingestion.models import Article
from ingestion.services.sources import backoff_delay, source_poll
from tests.factories import SourceFactory
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response, fixture_bytes


@pytest.mark.parametrize(
    ("status", "message"),
    [(404, "HTTP 404 Not Found"), (410, "HTTP 410 Gone"), (500, "HTTP 500 Internal Server Error"), (503, "HTTP 503")],
)
def test_error_status_is_recorded(feed_source, status, message) -> None:
    source = feed_source("/feed", response=Response(status=status, body=b"<html>oops</html>"))
    report = source_poll(source_id=source.pk, now=NOW)
    assert message in report.error
    assert "/feed" in report.error
    source.refresh_from_db()
    assert message in source.last_error
    assert source.consecutive_failures == 1
    assert Article.objects.count() == 0


def test_connection_refused(db) -> None:
    source = SourceFactory(url="http://127.0.0.1:9/feed.xml")  # discard port: nothing listens
    report = source_poll(source_id=source.pk, now=NOW)
    assert report.error.startswith("could not fetch http://127.0.0.1:9/feed.xml")


def test_backoff_grows_exponentially_up_to_the_cap(feed_source, settings) -> None:
    settings.HINDSIGHT_SOURCE_BACKOFF_BASE_SECONDS = 60
    settings.HINDSIGHT_SOURCE_BACKOFF_MAX_SECONDS = 600
    source = feed_source("/down", response=Response(status=500))
    waits = []
    now = NOW
    for _ in range(6):
        report = source_poll(source_id=source.pk, now=now)
        waits.append((report.next_attempt_at - now).total_seconds())
        now = report.next_attempt_at
    # base * 2**(n-1), capped at 600 s, plus up to 20 % jitter.
    for wait, expected in zip(waits, [60, 120, 240, 480, 600, 600], strict=True):
        assert expected <= wait <= expected * 1.2
    source.refresh_from_db()
    assert source.consecutive_failures == 6


def test_backoff_delay_jitter_is_bounded(settings) -> None:
    settings.HINDSIGHT_SOURCE_BACKOFF_BASE_SECONDS = 100
    rng = random.Random(7)
    delays = {backoff_delay(failures=1, rng=rng) for _ in range(50)}
    assert len(delays) > 1
    assert all(timedelta(seconds=100) <= d <= timedelta(seconds=120) for d in delays)


def test_success_resets_failures(feed_source) -> None:
    feed = Response(body=fixture_bytes("feeds/rss10_spec_example.rdf"))
    source = feed_source("/f", responses=[Response(status=502), Response(status=502), feed])
    source_poll(source_id=source.pk, now=NOW)
    source_poll(source_id=source.pk, now=NOW + timedelta(minutes=5))
    source.refresh_from_db()
    assert source.consecutive_failures == 2
    later = NOW + timedelta(minutes=10)
    assert source_poll(source_id=source.pk, now=later).added == 2
    source.refresh_from_db()
    assert (source.consecutive_failures, source.last_error) == (0, "")
    assert source.next_attempt_at == later + source.poll_interval
