"""Redirects are followed up to a limit; a loop fails the poll with a clear message."""

from __future__ import annotations

import pytest

from ingestion.fetching import TooManyRedirects, fetch
from ingestion.models import Article
from ingestion.services.sources import source_poll
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response


def test_redirect_loop(feed_source, fake_server) -> None:
    fake_server.add("/a", Response(status=302, headers={"Location": "/b"}))
    source = feed_source("/b", response=Response(status=301, headers={"Location": "/a"}))
    report = source_poll(source_id=source.pk, now=NOW)
    assert report.error.startswith("too many redirects (redirect loop?) fetching")
    source.refresh_from_db()
    assert "too many redirects" in source.last_error
    # The limit (5 by default) bounds the requests made.
    assert len(fake_server.requests) == 6


def test_redirect_limit_setting(fake_server, settings) -> None:
    settings.HINDSIGHT_FETCH_MAX_REDIRECTS = 1
    fake_server.add("/one", Response(status=302, headers={"Location": "/two"}))
    fake_server.add("/two", Response(status=302, headers={"Location": "/three"}))
    fake_server.add("/three", Response(body=b"ok"))
    with pytest.raises(TooManyRedirects):
        fetch(fake_server.url("/one"))
    assert fetch(fake_server.url("/one"), max_redirects=2).content == b"ok"


def test_moved_feed_is_followed(feed_source, fake_server) -> None:
    fake_server.add_fixture("/new/atom.xml", "feeds/youtube_google_atom.xml")
    source = feed_source("/old", response=Response(status=301, headers={"Location": "/new/atom.xml"}))
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.error, report.added) == ("", 3)
    assert Article.objects.count() == 3
