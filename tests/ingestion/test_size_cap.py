"""A feed over the size limit (5 MB by default) is rejected without reading all of it."""

from __future__ import annotations

import pytest

from ingestion.fetching import ResponseTooLarge, fetch
from ingestion.models import Article
from ingestion.services.sources import source_poll
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response

TEN_MB = 10 * 1024 * 1024
FIVE_MB = 5 * 1024 * 1024


def test_declared_10mb_is_refused_before_reading(fake_server) -> None:
    url = fake_server.add("/huge", Response(body=b"x" * TEN_MB, content_type="application/rss+xml"))
    with pytest.raises(ResponseTooLarge, match="is 10485760 bytes, over the 5242880-byte limit") as caught:
        fetch(url)
    assert caught.value.bytes_read == 0


def test_undeclared_10mb_stream_is_cut_off_at_the_limit(fake_server) -> None:
    url = fake_server.add("/stream", Response(stream_bytes=TEN_MB, content_type="application/rss+xml"))
    with pytest.raises(ResponseTooLarge, match="exceeds the 5242880-byte limit") as caught:
        fetch(url)
    # Reading stopped within one network chunk of the limit, far short of 10 MB.
    assert FIVE_MB < caught.value.bytes_read < FIVE_MB + 1024 * 1024


def test_oversized_feed_fails_the_source(feed_source, settings) -> None:
    settings.HINDSIGHT_FETCH_MAX_BYTES = 1000
    source = feed_source("/big", response=Response(stream_bytes=TEN_MB))
    report = source_poll(source_id=source.pk, now=NOW)
    assert "exceeds the 1000-byte limit" in report.error
    source.refresh_from_db()
    assert source.consecutive_failures == 1
    assert Article.objects.count() == 0


def test_per_source_max_bytes_option(feed_source) -> None:
    source = feed_source("/small", fixture="feeds/rss10_spec_example.rdf", options={"max_bytes": 100})
    assert "100-byte limit" in source_poll(source_id=source.pk, now=NOW).error
