"""Storing a feed's articles in bulk: every value arrives as given, the articles are searchable
as evidence at once, and a story another poll stored meanwhile is neither duplicated nor
counted as added."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from ingestion.models import Article
from ingestion.selectors.evidence import articles_search
from ingestion.services import articles as article_services
from ingestion.services.articles import article_store_many
from tests.factories import SourceFactory
from tests.ingestion.conftest import NOW

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]

PUBLISHED = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


def story(number: int, **fields: object) -> dict[str, object]:
    return {
        "url": f"https://news.example.org/story-{number}?utm_source=rss",
        "title": f"Harbour strike enters day {number}",
        "summary": f"Dock workers stayed out for a {number}th day.",
        "body": f"Talks resumed on day {number} without a deal on pay.",
        "author": "Ana Ruiz",
        "language": "en-GB",
        "published_at": PUBLISHED + timedelta(hours=number),
        **fields,
    }


def test_every_value_is_stored_as_given() -> None:
    source = SourceFactory()
    result = article_store_many(
        source=source,
        entries=[story(1), story(2, published_at=None, author="", language="")],
        fetched_at=NOW,
    )

    assert (result.added, result.skipped) == (2, 0)
    first, second = Article.objects.order_by("url")
    assert first.source == source and first.url == "https://news.example.org/story-1"
    assert first.title == "Harbour strike enters day 1"
    assert first.summary == "Dock workers stayed out for a 1th day."
    assert first.body == "Talks resumed on day 1 without a deal on pay."
    assert (first.author, first.language) == ("Ana Ruiz", "en-GB")
    assert first.published_at == PUBLISHED + timedelta(hours=1) and first.fetched_at == NOW
    assert len(first.content_hash) == 64 and first.content_hash != second.content_hash
    assert (second.published_at, second.author, second.language) == (None, "", "")


def test_stored_articles_are_found_by_the_evidence_search() -> None:
    article_store_many(source=None, entries=[story(n) for n in range(1, 4)], fetched_at=NOW)

    page = articles_search(query="harbour strike", as_of=PUBLISHED + timedelta(days=1))

    assert page.total == 3
    assert {r.url for r in page.results} == {f"https://news.example.org/story-{n}" for n in range(1, 4)}


def test_a_story_stored_meanwhile_by_another_poll_is_skipped_not_duplicated(monkeypatch) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises writers: a transaction whose reads are stale cannot write at all")
    other = SourceFactory(url="https://other.example.org/feed.xml")
    article_store_many(source=other, entries=[story(2)], fetched_at=NOW)
    # As if this poll had looked its stories up just before the other poll committed.
    monkeypatch.setattr(article_services, "_stored_article_keys", lambda **keys: (set(), set()))

    result = article_store_many(source=SourceFactory(), entries=[story(1), story(2), story(3)], fetched_at=NOW)

    assert (result.added, result.skipped) == (2, 1)
    assert result.skip_reasons == {"already stored": 1}
    assert Article.objects.count() == 3
    assert Article.objects.get(url="https://news.example.org/story-2").source == other
