"""Running ingestion twice yields exactly the same rows."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ingestion.models import Article
from ingestion.services.sources import source_poll
from tests.ingestion.conftest import NOW

pytestmark = pytest.mark.dual_db  # also run on SQLite by scripts/test.sh

FIELDS = ("url", "guid", "title", "summary", "body", "author", "language", "published_at", "fetched_at", "content_hash")


def snapshot() -> list[tuple]:
    return list(Article.objects.order_by("url").values_list("id", *FIELDS))


def test_polling_every_format_twice_changes_nothing(feed_source) -> None:
    sources = [
        feed_source("/rss20", fixture="feeds/rss2sample.xml"),
        feed_source("/rss10", fixture="feeds/rss10_spec_example.rdf"),
        feed_source("/atom", fixture="feeds/youtube_google_atom.xml"),
        feed_source("/feedburner", fixture="feeds/techcrunch_feedburner_rss.xml"),
        feed_source("/json", fixture="feeds/jsonfeed_1_1_spec_example.json", content_type="application/feed+json"),
    ]
    for source in sources:
        assert source_poll(source_id=source.pk, now=NOW).error == ""
    before = snapshot()
    assert len(before) == 4 + 2 + 3 + 1 + 2
    for source in sources:
        report = source_poll(source_id=source.pk, now=NOW + timedelta(hours=1))
        assert (report.error, report.added) == ("", 0)
    assert snapshot() == before
