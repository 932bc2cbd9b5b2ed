"""The same story is stored once: fetched twice, listed twice, or reachable by two URLs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ingestion.models import Article
from ingestion.services.articles import article_store_many
from ingestion.services.sources import source_poll
from tests.factories import SourceFactory
from tests.ingestion.conftest import NOW

pytestmark = pytest.mark.dual_db  # also run on SQLite by scripts/test.sh

STORY = {
    "title": "Parliament passes the budget",
    "summary": "The budget passed by 320 votes to 280.",
    "body": "The budget passed by 320 votes to 280 after a long debate.",
    "published_at": datetime(2026, 3, 1, 9, 0, tzinfo=UTC),
}


def test_same_story_twice_in_one_batch(db) -> None:
    result = article_store_many(
        source=None,
        entries=[
            {**STORY, "url": "https://news.example.org/budget?utm_source=rss"},
            {**STORY, "url": "https://NEWS.example.org/budget#top"},
        ],
        fetched_at=NOW,
    )
    assert (result.added, result.skipped) == (1, 1)
    assert Article.objects.get().url == "https://news.example.org/budget"


def test_two_urls_same_content_stored_once(db) -> None:
    first = article_store_many(
        source=None, entries=[{**STORY, "url": "https://news.example.org/budget"}], fetched_at=NOW
    )
    # Syndicated copy: different host and path, same text (modulo case and whitespace).
    second = article_store_many(
        source=None,
        entries=[
            {
                **STORY,
                "url": "https://partner.example.com/wire/88123",
                "title": "PARLIAMENT passes   the budget",
                "body": STORY["body"] + "\n",
            }
        ],
        fetched_at=NOW + timedelta(hours=1),
    )
    assert (first.added, second.added, second.skipped) == (1, 0, 1)
    assert second.skip_reasons == {"already stored": 1}
    assert Article.objects.count() == 1


def test_different_stories_with_same_title_but_no_text_are_kept_apart(db) -> None:
    result = article_store_many(
        source=None,
        entries=[
            {"title": "Daily briefing", "url": "https://news.example.org/briefing/2026-03-01"},
            {"title": "Daily briefing", "url": "https://news.example.org/briefing/2026-03-02"},
        ],
        fetched_at=NOW,
    )
    assert result.added == 2


def test_same_feed_from_two_sources_is_stored_once(feed_source, fake_server) -> None:
    first = feed_source("/a.xml", fixture="feeds/rss10_spec_example.rdf")
    fake_server.add_fixture("/b.xml", "feeds/rss10_spec_example.rdf")
    second = SourceFactory(url=fake_server.url("/b.xml"))
    assert source_poll(source_id=first.pk, now=NOW).added == 2
    report = source_poll(source_id=second.pk, now=NOW)
    assert (report.error, report.added, report.skipped) == ("", 0, 2)
    assert set(Article.objects.values_list("source", flat=True)) == {first.pk}
