"""Nothing partial is stored: a poll that fails while storing rolls back every row of that
poll, records the error, and the next poll stores everything."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ingestion.models import Article
from ingestion.services import articles as articles_service
from ingestion.services.sources import source_poll
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response

pytestmark = pytest.mark.dual_db  # also run on SQLite by scripts/test.sh


def big_feed(n: int) -> bytes:
    items = "".join(
        f"<item><title>Story {i}</title><link>https://bulk.example/{i}</link>"
        f"<description>Body of story {i}</description></item>"
        for i in range(n)
    )
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Bulk</title>'
        f"<link>https://bulk.example/</link><description>d</description>{items}</channel></rss>"
    ).encode()


def test_failure_midway_stores_nothing(feed_source, monkeypatch: pytest.MonkeyPatch) -> None:
    source = feed_source("/bulk", response=Response(body=big_feed(1200)))
    real_insert = articles_service._insert_articles

    def insert_then_fail(values):
        real_insert(values[:400])  # some rows reach the database...
        raise RuntimeError("disk full")  # ...then the store dies

    monkeypatch.setattr(articles_service, "_insert_articles", insert_then_fail)
    report = source_poll(source_id=source.pk, now=NOW)
    assert report.error == "unexpected RuntimeError: disk full"
    assert (report.added, report.failed) == (0, 1200)
    assert Article.objects.count() == 0
    source.refresh_from_db()
    assert source.last_error == "unexpected RuntimeError: disk full" and source.consecutive_failures == 1

    monkeypatch.setattr(articles_service, "_insert_articles", real_insert)
    report = source_poll(source_id=source.pk, now=NOW + timedelta(minutes=5))
    assert (report.error, report.added) == ("", 1200)
    assert Article.objects.count() == 1200
