"""RSS 2.0, RSS 1.0 (RDF), Atom 1.0 and JSON Feed 1.0/1.1, served over HTTP, become articles
(recordings: tests/ingestion/fixtures/feeds/README.md)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ingestion.fetching import USER_AGENT
from ingestion.models import Article
from ingestion.services.sources import source_poll
from tests.ingestion.conftest import NOW

pytestmark = pytest.mark.dual_db  # also run on SQLite by scripts/test.sh


def test_rss20_specification_sample(feed_source, fake_server) -> None:
    source = feed_source("/rss.xml", fixture="feeds/rss2sample.xml")
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.error, report.added, report.skipped, report.warnings) == ("", 4, 0, [])
    star = Article.objects.get(title="Star City")
    assert star.url == "http://liftoff.msfc.nasa.gov/news/2003/news-starcity.asp"
    assert star.published_at == datetime(2003, 6, 3, 9, 39, 21, tzinfo=UTC)
    assert star.summary.endswith("They take a crash course in culture, language and protocol at Russia's Star City.")
    assert star.language == "en-us"
    assert (star.source, star.fetched_at) == (source, NOW)
    assert star.guid == "http://liftoff.msfc.nasa.gov/2003/06/03.html#item573"
    # An item may have only a description (RSS 2.0: "at least one of title or description"):
    # its first sentence is its title, its permalink guid its address.
    eclipse = Article.objects.get(guid="http://liftoff.msfc.nasa.gov/2003/05/30.html#item572")
    assert eclipse.title == (
        "Sky watchers in Europe, Asia, and parts of Alaska and Canada will experience a partial eclipse "
        "of the Sun on Saturday, May 31st."
    )
    assert eclipse.url == "http://liftoff.msfc.nasa.gov/2003/05/30.html"
    assert eclipse.published_at == datetime(2003, 5, 30, 11, 6, 42, tzinfo=UTC)
    request = fake_server.requests_to("/rss.xml")[0]
    assert request.headers["user-agent"] == USER_AGENT == "Hindsight/1.0 (+forecasting leaderboard)"


def test_rss10_specification_example(feed_source) -> None:
    source = feed_source("/news.rss", fixture="feeds/rss10_spec_example.rdf", content_type="application/rdf+xml")
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.error, report.added, report.skipped) == ("", 2, 0)
    xslt = Article.objects.get(url="http://xml.com/pub/2000/08/09/xslt/xslt.html")
    assert xslt.title == "Processing Inclusions with XSLT"
    assert xslt.summary.startswith("Processing document inclusions with general XML tools can be\nproblematic.")
    # RSS 1.0 items carry no date: stored, but never visible as dated evidence.
    assert xslt.published_at is None


def test_atom_entry_with_only_updated(feed_source) -> None:
    source = feed_source("/atom.xml", fixture="feeds/mozilla_atom_dates.xml", content_type="application/atom+xml")
    assert source_poll(source_id=source.pk, now=NOW).added == 2
    both = Article.objects.get(url="http://example.com/both")
    assert both.published_at == datetime(2026, 3, 17, 17, 35, 43, tzinfo=UTC)
    # Only <updated>: used as the publication time.
    assert Article.objects.get(title="Only updated").published_at == datetime(2026, 5, 4, 16, 56, 28, tzinfo=UTC)


def test_atom_blog_with_html_content(feed_source) -> None:
    source = feed_source("/aws.xml", fixture="feeds/aws_blog_atom.xml", content_type="application/atom+xml")
    assert source_poll(source_id=source.pk, now=NOW).added == 2
    job = Article.objects.get(
        url="http://aws.typepad.com/aws/2009/01/aws-job-architect-designer-position-in-turkey.html"
    )
    assert job.title == "AWS Job: Architect & Designer Position in Turkey"
    assert job.author == "AWS Editor"
    assert job.published_at == datetime(2009, 1, 16, 18, 21, tzinfo=UTC)  # -08:00 converted to UTC
    assert job.guid == "tag:typepad.com,2003:post-61484736"
    assert "I won't spill any beans" in job.body and "<p>" not in job.body


@pytest.mark.parametrize(
    ("fixture", "content_type"),
    [
        ("feeds/jsonfeed_1_1_spec_example.json", "application/feed+json"),
        ("feeds/jsonfeed_1_0_spec_example.json", "application/json"),
    ],
)
def test_json_feed(feed_source, fixture, content_type) -> None:
    source = feed_source("/feed.json", fixture=fixture, content_type=content_type)
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.error, report.added) == ("", 2)
    # JSON Feed items need no title: the text's first sentence is one.
    second = Article.objects.get(url="https://example.org/second-item")
    assert (second.title, second.guid) == ("This is a second item.", "2")
    hello = Article.objects.get(url="https://example.org/initial-post")
    assert (hello.title, hello.body or hello.summary) == ("Hello, world!", "Hello, world!")


def test_json_feed_without_a_content_type(feed_source) -> None:
    source = feed_source("/feed", fixture="feeds/jsonfeed_1_1_spec_example.json", content_type="text/plain")
    assert source_poll(source_id=source.pk, now=NOW).added == 2


@pytest.mark.parametrize(
    "fixture",
    [
        "feeds/rss2sample.xml",
        "feeds/rss10_spec_example.rdf",
        "feeds/mozilla_atom_dates.xml",
        "feeds/aws_blog_atom.xml",
        "feeds/youtube_google_atom.xml",
        "feeds/techcrunch_feedburner_rss.xml",
    ],
)
def test_every_stored_time_is_aware_utc(feed_source, fixture) -> None:
    source = feed_source("/f", fixture=fixture)
    source_poll(source_id=source.pk, now=NOW)
    for published_at in Article.objects.exclude(published_at=None).values_list("published_at", flat=True):
        assert published_at.utcoffset().total_seconds() == 0
