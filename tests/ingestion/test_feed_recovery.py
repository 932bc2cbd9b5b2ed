"""A feed is read the way feedparser reads it: what its loose parser recovers from a document that is
not well-formed XML is stored, with a warning on the source; only a document with no readable entry
is refused, and one cut short loses just its unfinished last entry. The charset comes from the HTTP
header when the document does not name one; FeedBurner and Google redirect links are unwrapped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ingestion.canonical import canonical_url
from ingestion.feeds import entry_datetime, parse_feed_document
from ingestion.models import Article
from ingestion.services.sources import source_poll
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response, fixture_bytes

pytestmark = pytest.mark.dual_db

AWS = fixture_bytes("feeds/aws_blog_atom.xml")
# The two faults found in real feeds, made from the AWS recording by one substitution each.
BARE_AMPERSAND = AWS.replace(
    b"Architect &amp; Designer Position in Turkey</title>", b"Architect & Designer Position in Turkey</title>"
)
UNDEFINED_ENTITY = AWS.replace("Micro Focus\u2019 innovation has...".encode(), b"Micro Focus&rsquo; innovation has...")


def test_blank_line_before_the_xml_declaration(feed_source) -> None:
    # YouTube served its channel feeds with a newline before <?xml.
    source = feed_source("/videos.xml", fixture="feeds/youtube_google_atom.xml", content_type="text/xml")
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.error, report.added) == ("", 3)
    video = Article.objects.get(url="http://www.youtube.com/watch?v=5shykyfmb28")
    assert video.title == "The Google app: Questions"
    assert video.published_at == datetime(2015, 5, 4, 0, 1, 27, tzinfo=UTC)
    source.refresh_from_db()
    assert (source.last_error, source.consecutive_failures) == ("", 0)
    assert "XML or text declaration not at start of entity" in source.last_warning
    assert "loose parser (3 entries recovered)" in source.last_warning
    assert report.warnings == [source.last_warning]


def test_bare_ampersand(feed_source) -> None:
    source = feed_source("/aws.xml", response=Response(body=BARE_AMPERSAND, content_type="application/atom+xml"))
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.error, report.added) == ("", 2)
    assert Article.objects.filter(title="AWS Job: Architect & Designer Position in Turkey").exists()
    source.refresh_from_db()
    assert "malformed XML at line 12: not well-formed (invalid token)" in source.last_warning


def test_undefined_html_entity(feed_source) -> None:
    source = feed_source("/aws.xml", response=Response(body=UNDEFINED_ENTITY, content_type="application/atom+xml"))
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.error, report.added) == ("", 2)
    mainframes = Article.objects.get(title="Mainframes in the Cloud?")
    assert "Micro Focus\u2019 innovation has..." in mainframes.summary


def test_comment_before_the_declaration_from_feedparser_corpus(feed_source) -> None:
    source = feed_source("/rdf", fixture="feeds/feedparser/rdf_channel_empty_textinput.xml")
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.error, report.added) == ("", 1)
    assert Article.objects.get().title == "crashes here"
    source.refresh_from_db()
    assert "XML or text declaration not at start of entity" in source.last_warning


@pytest.mark.parametrize(
    ("fixture", "message"),
    [
        # Cut short inside its only item: nothing complete to read.
        ("feeds/feedparser/rss_incomplete_cdata.xml", "no entry could be read"),
        ("feeds/feedparser/aaa_illformed.xml", "no entry could be read"),
        # A bare & in the only item's link, and no title or text to store it under.
        ("feeds/feedparser/query_variable_entry.xml", "no entry could be read"),
    ],
)
def test_a_document_with_no_readable_entry_is_refused(feed_source, fixture, message) -> None:
    source = feed_source("/feed", fixture=fixture)
    report = source_poll(source_id=source.pk, now=NOW)
    assert message in report.error
    assert Article.objects.count() == 0
    source.refresh_from_db()
    assert message in source.last_error and source.consecutive_failures == 1


def test_a_document_cut_short_loses_only_its_unfinished_entry(feed_source) -> None:
    cut = AWS[: AWS.index(b"<summary>Almost!") + len(b"<summary>Almost! Micro Focus just dep")]
    source = feed_source("/aws.xml", response=Response(body=cut, content_type="application/atom+xml"))
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.error, report.added) == ("", 1)
    assert report.skip_reasons == {"unfinished entry (document cut short)": 1}
    assert list(Article.objects.values_list("title", flat=True)) == ["AWS Job: Architect & Designer Position in Turkey"]


def test_charset_from_the_http_header(feed_source) -> None:
    # The corpus document names no encoding; its charset is in the header only.
    body = fixture_bytes("feeds/feedparser/http_text_xml_charset_2.xml")
    source = feed_source("/cp1252", response=Response(body=body, content_type="text/xml; charset=windows-1252"))
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.error, report.added, report.warnings) == ("", 1, [])
    assert Article.objects.get().summary == "This is a £“test.”"


def test_header_charset_is_passed_to_feedparser() -> None:
    # KOI8-R with no encoding information: without the header it can only be guessed.
    body = fixture_bytes("feeds/feedparser/koi8r.xml")
    parsed = parse_feed_document(body, headers={"Content-Type": "text/xml; charset=koi8-r"})
    assert parsed.entries[0].title == "Как пережить новогоднюю ночь"
    # Guessed without it: mojibake.
    assert parse_feed_document(body).entries[0].title != "Как пережить новогоднюю ночь"


def test_feedburner_links_are_unwrapped(feed_source) -> None:
    source = feed_source("/techcrunch", fixture="feeds/techcrunch_feedburner_rss.xml")
    assert source_poll(source_id=source.pk, now=NOW).added == 1
    article = Article.objects.get()
    assert (
        article.url
        == "http://techcrunch.com/2011/11/02/angies-list-prices-ipo-at-11-to-13-per-share-valued-at-over-600m/"
    )
    assert article.title.startswith("Angie\u2019s List Sets Price Range IPO")
    assert article.guid == "http://techcrunch.com/?p=446154"


def test_google_redirect_links_are_unwrapped() -> None:
    # The link format of Google Alerts feeds.
    wrapped = (
        "https://www.google.com/url?rct=j&sa=t&url=https://www.example.org/news/2026/03/rates.html%3Fid%3D7"
        "&ct=ga&cd=CAIyGjJlZjZjMDA3MWM1OTliOTM6Y29tOmVuOlVT&usg=AFQjCNE0lVubni9K8wJwuDxdqj_sm55txg"
    )
    assert canonical_url(wrapped) == "https://www.example.org/news/2026/03/rates.html?id=7"
    assert canonical_url("https://www.google.com/search?q=rates") == "https://www.google.com/search?q=rates"


def test_dates_in_other_languages() -> None:
    entry = {"published": "Seg, 24 Set 2018 10:30:00 -0300"}
    assert entry_datetime(entry, language="pt-BR") == datetime(2018, 9, 24, 13, 30, tzinfo=UTC)
    assert entry_datetime({"published": "Mo, 03 Mär 2026 09:15:00 +0100"}) == datetime(2026, 3, 3, 8, 15, tzinfo=UTC)
    # A relative date is no publication time.
    assert entry_datetime({"published": "yesterday"}, language="en") is None


def test_next_poll_after_a_refused_document_recovers(feed_source) -> None:
    source = feed_source(
        "/flaky",
        responses=[
            Response(body=fixture_bytes("feeds/feedparser/aaa_illformed.xml")),
            Response(body=fixture_bytes("feeds/rss2sample.xml")),
        ],
    )
    assert source_poll(source_id=source.pk, now=NOW).error
    report = source_poll(source_id=source.pk, now=NOW + timedelta(minutes=2))
    assert (report.error, report.added) == ("", 4)
    source.refresh_from_db()
    assert (source.consecutive_failures, source.last_error, source.last_warning) == (0, "", "")
