"""Malformed XML or a non-feed document fails the poll as a whole: nothing stored, the error
recorded on the source, and the next poll retries."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ingestion.models import Article
from ingestion.services.sources import source_poll
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response, fixture_bytes


@pytest.mark.parametrize(
    ("fixture", "message"),
    [
        ("feeds/malformed.xml", "malformed XML at line 14: mismatched tag"),
        ("feeds/not_a_feed.html", "not an RSS or Atom feed"),
    ],
)
def test_bad_document_stores_nothing_and_is_recorded(feed_source, fixture, message) -> None:
    source = feed_source("/feed", fixture=fixture)
    report = source_poll(source_id=source.pk, now=NOW)
    assert message in report.error
    assert report.added == 0
    assert Article.objects.count() == 0  # not even the well-formed first item
    source.refresh_from_db()
    assert message in source.last_error
    assert source.consecutive_failures == 1
    assert source.last_attempt_at == NOW
    assert source.last_success_at is None
    assert source.next_attempt_at > NOW


def test_empty_body(feed_source) -> None:
    source = feed_source("/empty", response=Response(body=b""))
    assert source_poll(source_id=source.pk, now=NOW).error == "empty response: not a feed"


def test_next_poll_retries_and_recovers(feed_source) -> None:
    source = feed_source(
        "/flaky",
        responses=[
            Response(body=fixture_bytes("feeds/malformed.xml")),
            Response(body=fixture_bytes("feeds/rss20_world_news.xml")),
        ],
    )
    assert source_poll(source_id=source.pk, now=NOW).error
    report = source_poll(source_id=source.pk, now=NOW + timedelta(minutes=2))
    assert (report.error, report.added) == ("", 4)
    source.refresh_from_db()
    assert (source.consecutive_failures, source.last_error) == (0, "")
