"""RSS 2.0, RSS 1.0 (RDF), RSS 0.91 and Atom 1.0 feeds served over HTTP become articles."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ingestion.fetching import USER_AGENT
from ingestion.models import Article
from ingestion.services.sources import source_poll
from tests.ingestion.conftest import NOW

pytestmark = pytest.mark.dual_db  # also run on SQLite by scripts/test.sh


def test_rss20(feed_source, fake_server) -> None:
    source = feed_source("/world/rss.xml", fixture="feeds/rss20_world_news.xml")
    report = source_poll(source_id=source.pk, now=NOW)
    assert report.error == ""
    # 6 items: 1 without a title, 1 the same story under a partner URL.
    assert (report.added, report.skipped) == (4, 2)
    assert report.skip_reasons == {"missing title": 1, "already stored": 1}
    rates = Article.objects.get(title="Central bank holds interest rates at 4.5%")
    # at_medium/at_campaign (newsroom analytics), utm_* and the fragment are gone.
    assert rates.url == "https://www.example-news.org/business/rates-hold-4-5"
    assert rates.published_at == datetime(2026, 3, 3, 9, 15, tzinfo=UTC)
    assert rates.author == "Jane Okafor"
    assert rates.language == "en-gb"
    assert rates.source == source
    assert rates.fetched_at == NOW
    assert rates.summary.startswith("The Monetary Policy Committee voted 7-2")
    assert "Two members preferred a cut" in rates.body
    storm = Article.objects.get(title="Storm warning issued for coastal regions")
    assert storm.url == "https://www.example-news.org/weather/storm-warning?region=south"
    assert storm.published_at == datetime(2026, 3, 3, 7, 40, tzinfo=UTC)  # +0100 converted to UTC
    request = fake_server.requests_to("/world/rss.xml")[0]
    assert request.headers["user-agent"] == USER_AGENT == "Hindsight/1.0 (+forecasting leaderboard)"


def test_rss10_rdf(feed_source) -> None:
    source = feed_source("/releases.rdf", fixture="feeds/rss10_rdf.xml", content_type="application/rdf+xml")
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.error, report.added, report.skipped) == ("", 3, 0)
    gdp = Article.objects.get(url="https://stats.example.gov/releases/gdp-q4-2025")
    assert gdp.published_at == datetime(2026, 2, 12, 6, 0, tzinfo=UTC)
    assert gdp.language == "en"
    labour = Article.objects.get(title__startswith="Labour market overview")
    assert labour.url == "https://stats.example.gov/releases/labour-market-2026-02"
    assert labour.author == "Labour market division"


def test_rss091_with_netscape_entities(feed_source) -> None:
    source = feed_source("/cafe.rss", fixture="feeds/rss091_userland.xml", content_type="text/xml")
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.error, report.added) == ("", 3)
    titles = set(Article.objects.values_list("title", flat=True))
    assert titles == {"Réouverture du café de la Paix", "Prix du café : hausse de 12 %", "Marché de printemps"}
    # RSS 0.91 items have no date: stored, but never usable as dated evidence.
    assert not Article.objects.exclude(published_at=None).exists()
    assert Article.objects.filter(url="http://www.example-weekly.com/2026/03/marche.html").exists()


def test_atom10(feed_source) -> None:
    source = feed_source("/atom.xml", fixture="feeds/atom10_research_blog.xml", content_type="application/atom+xml")
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.error, report.added) == ("", 3)
    scaling = Article.objects.get(url="https://research.example.ai/blog/posts/scaling-forecasting-agents")
    assert scaling.title == "Scaling laws for forecasting agents"
    assert scaling.published_at == datetime(2026, 3, 4, 15, 30, tzinfo=UTC)
    assert scaling.author == "A. Researcher"
    assert scaling.body.startswith("Setup\nWe evaluate 12 agents")
    assert "Retrieval & reasoning both matter." in scaling.body
    german = Article.objects.get(title="Kalibrierung von Sprachmodellen")
    assert german.language == "de"
    assert german.url == "https://research.example.ai/blog/posts/kalibrierung"
    assert german.summary == "Wie gut sind Wahrscheinlichkeiten kalibriert?"
    # Only <updated>: used as the publication time.
    assert german.published_at == datetime(2026, 2, 20, 8, 0, tzinfo=UTC)
    harness = Article.objects.get(title__startswith="Release notes")
    assert harness.url == "https://research.example.ai/blog/posts/harness-v2"


@pytest.mark.parametrize(
    "fixture",
    [
        "feeds/rss20_world_news.xml",
        "feeds/rss10_rdf.xml",
        "feeds/rss091_userland.xml",
        "feeds/atom10_research_blog.xml",
    ],
)
def test_every_stored_time_is_aware_utc(feed_source, fixture) -> None:
    source = feed_source("/f", fixture=fixture)
    source_poll(source_id=source.pk, now=NOW)
    for published_at in Article.objects.exclude(published_at=None).values_list("published_at", flat=True):
        assert published_at.utcoffset().total_seconds() == 0
