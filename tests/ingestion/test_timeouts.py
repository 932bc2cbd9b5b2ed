"""A server that does not answer in time fails the poll with a timeout, not a hang."""

from __future__ import annotations

import pytest

from ingestion.fetching import FetchTimeout, fetch
from ingestion.models import Article
from ingestion.services.sources import source_poll
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response, fixture_bytes


def test_fetch_times_out(fake_server) -> None:
    url = fake_server.add("/slow", Response(body=b"late", delay=2.0))
    with pytest.raises(FetchTimeout, match=r"timed out after 0.3s fetching http://127.0.0.1:\d+/slow"):
        fetch(url, timeout=0.3)


def test_timeout_is_recorded_on_the_source(feed_source, settings) -> None:
    settings.HINDSIGHT_FETCH_TIMEOUT_SECONDS = 0.3
    source = feed_source("/slow", response=Response(body=fixture_bytes("feeds/rss10_spec_example.rdf"), delay=2.0))
    report = source_poll(source_id=source.pk, now=NOW)
    assert report.error.startswith("timed out after 0.3s")
    source.refresh_from_db()
    assert source.consecutive_failures == 1 and "timed out" in source.last_error
    assert Article.objects.count() == 0
