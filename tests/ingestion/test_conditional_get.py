"""Conditional GET: the validators of the last success are sent; a 304 stores nothing and
counts as a success."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ingestion.models import Article
from ingestion.services.sources import source_poll
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response, fixture_bytes

pytestmark = pytest.mark.dual_db  # also run on SQLite by scripts/test.sh

ETAG = '"feed-v1"'
LAST_MODIFIED = "Wed, 04 Mar 2026 10:00:00 GMT"


def test_304_costs_nothing(feed_source, fake_server) -> None:
    body = fixture_bytes("feeds/youtube_google_atom.xml")
    source = feed_source("/atom.xml", response=Response(body=body, etag=ETAG, last_modified=LAST_MODIFIED))
    first = source_poll(source_id=source.pk, now=NOW)
    assert (first.added, first.not_modified) == (3, False)
    source.refresh_from_db()
    assert (source.etag, source.last_modified) == (ETAG, LAST_MODIFIED)
    rows = list(Article.objects.values_list("id", "fetched_at"))

    later = NOW + timedelta(minutes=20)
    second = source_poll(source_id=source.pk, now=later)
    assert (second.error, second.added, second.skipped, second.not_modified) == ("", 0, 0, True)
    assert "not modified (304)" in second.summary()
    requests = fake_server.requests_to("/atom.xml")
    assert "if-none-match" not in requests[0].headers
    assert requests[1].headers["if-none-match"] == ETAG
    assert requests[1].headers["if-modified-since"] == LAST_MODIFIED
    assert list(Article.objects.values_list("id", "fetched_at")) == rows
    source.refresh_from_db()
    assert source.last_success_at == later
    assert source.next_attempt_at == later + source.poll_interval
    assert (source.consecutive_failures, source.etag) == (0, ETAG)


def test_last_modified_alone_is_honoured(feed_source, fake_server) -> None:
    body = fixture_bytes("feeds/rss10_spec_example.rdf")
    source = feed_source("/rdf", response=Response(body=body, last_modified=LAST_MODIFIED))
    assert source_poll(source_id=source.pk, now=NOW).added == 2
    assert source_poll(source_id=source.pk, now=NOW + timedelta(minutes=20)).not_modified
    assert fake_server.requests_to("/rdf")[1].headers["if-modified-since"] == LAST_MODIFIED


def test_validators_of_a_failed_poll_are_not_kept(feed_source, fake_server) -> None:
    # A 200 whose body cannot be parsed must not leave its ETag behind, or the next poll would
    # get a 304 and never see the entries.
    bad = Response(body=fixture_bytes("feeds/feedparser/aaa_illformed.xml"), etag='"broken"')
    source = feed_source("/f", response=bad)
    assert source_poll(source_id=source.pk, now=NOW).error
    source.refresh_from_db()
    assert source.etag == ""
