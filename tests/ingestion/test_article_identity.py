"""What makes two feed entries one post or two: a permalink that differs only by its fragment is the
same page, unless the entries have their own, different guids and different text (a live blog's
updates, a link blog's posts); an entry whose only link is an enclosure is still addressable."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ingestion.feeds import entry_link
from ingestion.models import Article
from ingestion.services.articles import article_store_many
from tests.ingestion.conftest import NOW

pytestmark = pytest.mark.dual_db

LIVE = "https://www.example.org/live/2026/03/05/budget-day"


def update(anchor: str, guid: str, text: str) -> dict:
    return {
        "url": f"{LIVE}#{anchor}",
        "guid": guid,
        "title": f"Budget day: {text}",
        "summary": text,
        "published_at": datetime(2026, 3, 5, 11, 0, tzinfo=UTC),
    }


def test_fragment_permalinks_with_their_own_guids_are_different_posts(db) -> None:
    result = article_store_many(
        source=None,
        entries=[
            update("post-1", "urn:live:1", "The chancellor rises at 12:30."),
            update("post-2", "urn:live:2", "Fuel duty frozen for another year."),
        ],
        fetched_at=NOW,
    )
    assert (result.added, result.skipped) == (2, 0)
    assert set(Article.objects.values_list("url", "guid")) == {
        (LIVE, "urn:live:1"),
        (f"{LIVE}#post-2", "urn:live:2"),
    }


def test_a_later_post_under_the_same_page_is_kept_too(db) -> None:
    article_store_many(source=None, entries=[update("post-1", "urn:live:1", "The chancellor rises.")], fetched_at=NOW)
    later = article_store_many(
        source=None,
        entries=[
            update("post-1", "urn:live:1", "The chancellor rises."),
            update("post-3", "urn:live:3", "Markets fall after the speech."),
        ],
        fetched_at=NOW,
    )
    assert (later.added, later.skip_reasons) == (1, {"already stored": 1})
    assert Article.objects.filter(url=f"{LIVE}#post-3").exists()
    # A third poll adds nothing.
    again = article_store_many(
        source=None,
        entries=[
            update("post-1", "urn:live:1", "The chancellor rises."),
            update("post-3", "urn:live:3", "Markets fall after the speech."),
        ],
        fetched_at=NOW,
    )
    assert (again.added, again.skipped) == (0, 2)


def test_same_guid_or_no_guid_stays_one_page(db) -> None:
    result = article_store_many(
        source=None,
        entries=[
            update("comments", "", "The chancellor rises."),
            update("top", "", "The chancellor rises at last."),
            update("post-9", "urn:live:9", "Edited text."),
            update("post-9b", "urn:live:9", "Edited text, again."),
        ],
        fetched_at=NOW,
    )
    assert result.added == 1
    assert list(Article.objects.values_list("url", flat=True)) == [LIVE]


def test_an_entry_whose_only_link_is_an_enclosure_has_an_identity() -> None:
    # feedparser's reading of an Atom entry with only <link rel="enclosure">: its ``link`` falls
    # back to the entry id, which is no web address.
    entry = {
        "id": "tag:podcast.example.org,2026:episode-12",
        "link": "tag:podcast.example.org,2026:episode-12",
        "links": [{"rel": "enclosure", "type": "audio/mpeg", "href": "https://cdn.example.org/ep12.mp3"}],
    }
    assert entry_link(entry) == "https://cdn.example.org/ep12.mp3"
    # An alternate link, when there is one, comes first; FeedBurner's original link before both.
    entry["links"].append({"rel": "alternate", "href": "https://podcast.example.org/12"})
    assert entry_link(entry) == "https://podcast.example.org/12"
    entry["feedburner_origlink"] = "https://podcast.example.org/episodes/12"
    assert entry_link(entry) == "https://podcast.example.org/episodes/12"
