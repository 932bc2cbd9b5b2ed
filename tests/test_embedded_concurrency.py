"""The embedded default under concurrent use: the run command's server (SQLite, in-process tasks and
periodic tasks) answers agents, people creating teams, page readers and a source poll from another
process, all at once, without a single error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.embedded_load import EmbeddedSite, drive, report
from tests.ingestion.fakeserver import FakeServer
from tests.ingestion.market_fakes import FakePolymarket

pytestmark = pytest.mark.slow


@pytest.fixture
def payloads() -> Iterator[FakeServer]:
    """Recorded feed and market payloads on 127.0.0.1 (the sources the site polls)."""
    server = FakeServer()
    server.add_fixture("/feed.xml", "feeds/techcrunch_feedburner_rss.xml", content_type="application/rss+xml")
    FakePolymarket.install(server)
    yield server
    server.close()


def test_concurrent_writers_readers_and_polls_get_no_error(tmp_path: Path, payloads: FakeServer) -> None:
    site = EmbeddedSite(var=tmp_path)
    tokens = site.prepare(feed_url=payloads.url("/feed.xml"), market_url=payloads.base_url, agents=3)
    site.start()
    try:
        result = drive(site, tokens, seconds=20)
    finally:
        result_lines = site.stop()
    result.server_errors = result_lines
    summary = report(result)
    print("embedded concurrency:", summary)
    assert summary["requests"] > 200 and result.polls >= 2, summary
    assert result.requests["create team"] >= 2 and result.requests["forecast"] >= 20, summary
    assert summary["errors"] == 0, summary
