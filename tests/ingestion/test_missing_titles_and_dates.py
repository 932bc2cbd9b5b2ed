"""Entries without a title are skipped and counted; entries without a usable date are stored
with published_at None; neither fails the feed."""

from __future__ import annotations

import pytest

from ingestion.models import Article
from ingestion.services.sources import source_poll
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response

pytestmark = pytest.mark.dual_db  # also run on SQLite by scripts/test.sh

FEED = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Wire</title><link>https://wire.example/</link><description>d</description>
<item><title>Dated story</title><link>https://wire.example/1</link><description>one</description>
  <pubDate>Wed, 04 Mar 2026 08:00:00 GMT</pubDate></item>
<item><link>https://wire.example/2</link><description>no title at all</description></item>
<item><title>   </title><link>https://wire.example/3</link><description>blank title</description></item>
<item><title>Undated story</title><link>https://wire.example/4</link><description>four</description></item>
<item><title>Garbage date</title><link>https://wire.example/5</link><description>five</description>
  <pubDate>the 32nd of Smarch</pubDate></item>
<item><title>No link anywhere</title><description>six</description></item>
</channel></rss>"""


def test_missing_titles_and_dates(feed_source) -> None:
    source = feed_source("/wire.xml", response=Response(body=FEED, content_type="application/rss+xml"))
    report = source_poll(source_id=source.pk, now=NOW)
    assert report.error == ""
    assert report.added == 3
    assert report.skipped == 3
    assert report.skip_reasons == {"missing title": 2, "missing link": 1}
    assert report.problems == ["entry 2: missing title", "entry 3: missing title", "entry 6: missing link"]
    assert "2 missing title" in report.summary()
    dates = dict(Article.objects.values_list("title", "published_at"))
    assert dates["Dated story"] is not None
    assert dates["Undated story"] is None
    assert dates["Garbage date"] is None
    source.refresh_from_db()
    assert (source.consecutive_failures, source.last_error, source.last_success_at) == (0, "", NOW)
