"""The as-of evidence selectors: ranking, snippets, query syntax, MIRAI event queries, prices."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from django.db import connection

from ingestion.models import Article, Market, PricePoint, StructuredEvent
from ingestion.selectors.evidence import (
    FTS_TRIGGERS,
    SEARCH_MAX_LIMIT,
    InvalidEvidenceQuery,
    article_get,
    articles_search,
    fts5_query,
    prices_history,
)
from ingestion.selectors.structured_events import (
    events_count,
    events_distribution_by_entity,
    events_distribution_by_relation,
    events_query,
)
from tests.factories import ArticleFactory

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]

AS_OF = datetime(2025, 3, 1, tzinfo=UTC)
BEFORE = AS_OF - timedelta(days=2)


def article(title: str, summary: str = "", body: str = "", published_at: datetime | None = BEFORE) -> Article:
    return ArticleFactory(title=title, summary=summary, body=body, published_at=published_at)


def test_title_match_outranks_body_match() -> None:
    in_body = article("Weather report", body="Farmers expect drought and wheat prices to rise.")
    in_title = article("Wheat prices surge", body="Markets moved.")
    in_summary = article("Markets", summary="Wheat exports stall.")
    page = articles_search(query="wheat", as_of=AS_OF)
    assert page.total == 3
    assert [r.id for r in page.results] == [in_title.pk, in_summary.pk, in_body.pk]
    assert page.results[0].score > page.results[-1].score


def test_result_carries_metadata_and_an_escaped_highlighted_snippet() -> None:
    a = article("Drought", summary="Wheat <script>alert(1)</script> harvest fails in the south.")
    (result,) = articles_search(query="harvest", as_of=AS_OF).results
    assert (result.id, result.title, result.url, result.published_at) == (a.pk, a.title, a.url, a.published_at)
    assert "<mark>harvest</mark>" in result.snippet
    # PostgreSQL's headline drops tags, SQLite's snippet keeps them as text: escaped either way.
    assert "<script>" not in result.snippet and "alert(1)" in result.snippet


def test_web_search_syntax_on_both_engines() -> None:
    a = article("Iran oil sanctions tighten")
    b = article("Iran gas deal signed")
    c = article("Oil tankers seized near Iran")
    ids = lambda q: {r.id for r in articles_search(query=q, as_of=AS_OF).results}  # noqa: E731
    assert ids("iran oil") == {a.pk, c.pk}
    assert ids('"oil sanctions"') == {a.pk}
    assert ids("iran oil or gas") == {a.pk, b.pk, c.pk}
    assert ids("iran -tankers") == {a.pk, b.pk}
    assert ids("-iran") == set()
    assert ids("   ") == set()
    # Operators and punctuation of either engine are taken as plain text, never as syntax errors.
    assert ids('title:iran NEAR( "unbalanced * ^') == set()


def test_limit_is_capped_and_negative_offset_refused() -> None:
    for i in range(SEARCH_MAX_LIMIT + 5):
        article(f"Zebra {i}")
    page = articles_search(query="zebra", as_of=AS_OF, limit=500)
    assert page.total == SEARCH_MAX_LIMIT + 5 and len(page.results) == SEARCH_MAX_LIMIT
    with pytest.raises(InvalidEvidenceQuery) as excinfo:
        articles_search(query="zebra", as_of=AS_OF, offset=-1)
    assert excinfo.value.field == "offset"
    beyond = articles_search(query="zebra", as_of=AS_OF, offset=1000)
    assert beyond.total == SEARCH_MAX_LIMIT + 5 and beyond.results == []


def test_article_get_hides_late_and_undated_articles_like_missing_ones() -> None:
    early = article("Early")
    at_cut = article("At the cut-off", published_at=AS_OF)
    undated = article("Undated", published_at=None)
    assert article_get(article_id=early.pk, as_of=AS_OF) == early
    assert article_get(article_id=at_cut.pk, as_of=AS_OF) is None
    assert article_get(article_id=undated.pk, as_of=AS_OF) is None
    assert article_get(article_id=999_999, as_of=AS_OF) is None


def test_search_index_follows_edits_and_deletes() -> None:
    a = article("Volcano erupts")
    Article.objects.filter(pk=a.pk).update(title="Earthquake strikes")
    assert articles_search(query="volcano", as_of=AS_OF).total == 0
    assert articles_search(query="earthquake", as_of=AS_OF).total == 1
    Article.objects.filter(pk=a.pk).delete()
    assert articles_search(query="earthquake", as_of=AS_OF).total == 0


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite FTS5 triggers only")
def test_sqlite_search_heals_triggers_dropped_by_a_table_remake() -> None:
    with connection.cursor() as cursor:
        for trigger in FTS_TRIGGERS:
            cursor.execute(f"DROP TRIGGER {trigger}")
    missed = article("Glacier retreats")
    assert articles_search(query="glacier", as_of=AS_OF).total == 1
    article("Glacier advances")
    assert articles_search(query="glacier", as_of=AS_OF).total == 2
    assert missed.pk in {r.id for r in articles_search(query="retreats", as_of=AS_OF).results}


def test_fts5_query_translation() -> None:
    assert fts5_query("a b or c -d") == '"a" AND ("b" OR "c") NOT "d"'
    assert fts5_query('"x y" z') == '"x y" AND "z"'
    assert fts5_query('say "hi') == '"say" AND "hi"'
    assert fts5_query("-only") is None
    assert fts5_query("or") is None


def event(d: date, s: str, o: str, r: str, key: str) -> StructuredEvent:
    return StructuredEvent.objects.create(date=d, subject=s, object=o, relation=r, relation_root=r[:2], dedupe_key=key)


@pytest.fixture
def events() -> list[StructuredEvent]:
    day = AS_OF.date()
    return [
        event(day - timedelta(days=5), "USA", "CHN", "042", "a"),
        event(day - timedelta(days=4), "USA", "CHN", "043", "b"),
        event(day - timedelta(days=3), "CHN", "USA", "036", "c"),
        event(day - timedelta(days=2), "USA", "RUS", "190", "d"),
        event(day - timedelta(days=1), "USA", "CHN", "040", "e"),
        event(day, "USA", "CHN", "042", "same-day"),  # the as-of day has not ended: hidden
        event(day + timedelta(days=1), "USA", "CHN", "042", "later"),
    ]


def test_first_level_relation_includes_its_children(events: list[StructuredEvent]) -> None:
    got = list(events_query(as_of=AS_OF, relation="04"))
    assert [e.dedupe_key for e in got] == ["e", "b", "a"]  # most recent first
    assert [e.dedupe_key for e in events_query(as_of=AS_OF, relation="042")] == ["a"]


def test_event_filters_count_and_distributions(events: list[StructuredEvent]) -> None:
    assert events_count(as_of=AS_OF) == 5
    assert events_count(as_of=AS_OF, subject="usa", object="CHN") == 3
    day = AS_OF.date()
    assert events_count(as_of=AS_OF, start=day - timedelta(days=4), end=day - timedelta(days=2)) == 3
    assert events_count(as_of=AS_OF, start=day - timedelta(days=1), end=day + timedelta(days=5)) == 1
    assert events_distribution_by_relation(as_of=AS_OF, subject="USA") == {"040": 1, "042": 1, "043": 1, "190": 1}
    assert events_distribution_by_entity(as_of=AS_OF) == {"USA": 5, "CHN": 4, "RUS": 1}
    assert events_distribution_by_entity(as_of=AS_OF, role="tail") == {"CHN": 3, "RUS": 1, "USA": 1}
    assert events_distribution_by_entity(as_of=AS_OF, role="head", relation="04") == {"USA": 3}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"relation": "99"}, "relation"), ({"relation": "0421"}, "relation"), ({"subject": "U1"}, "subject")],
)
def test_bad_event_filters_name_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidEvidenceQuery) as excinfo:
        events_count(as_of=AS_OF, **kwargs)
    assert excinfo.value.field == field


def test_prices_history_stops_before_as_of() -> None:
    market = Market.objects.create(platform=Market.Platform.SAMPLE, external_id="x", title="X")
    for hours, p in [(-48, 0.4), (-1, 0.55), (0, 0.6), (24 * 30, 1.0)]:
        PricePoint.objects.create(market=market, outcome="Yes", time=AS_OF + timedelta(hours=hours), probability=p)
    assert [p.probability for p in prices_history(market=market, as_of=AS_OF)] == [0.4, 0.55]
    assert prices_history(market=market.pk, as_of=AS_OF).count() == 2
