"""Property: no as-of selector ever returns, counts, ranks, snippets or pages over an item at or
after the cut-off, nor an undated one, whatever the corpus and the cut-off (PostgreSQL and SQLite)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingestion.models import Article, Market, PricePoint, StructuredEvent
from ingestion.selectors.evidence import article_get, articles_search, prices_history
from ingestion.selectors.structured_events import (
    events_count,
    events_distribution_by_entity,
    events_distribution_by_relation,
    events_query,
)

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]

CUT = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)
PROPERTY = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
ZONES = [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]

# Offsets around the cut-off: exactly at it, a microsecond either side, and anywhere within days.
offsets = st.one_of(
    st.just(timedelta(0)),
    st.integers(-2, 2).map(lambda us: timedelta(microseconds=us)),
    st.integers(-3 * 86400, 3 * 86400).map(lambda s: timedelta(seconds=s)),
)
instants = st.tuples(offsets, st.sampled_from(ZONES)).map(lambda t: (CUT + t[0]).astimezone(t[1]))
article_times = st.one_of(st.none(), instants)


class Rollback(Exception):
    pass


def in_savepoint(fn: Any) -> None:
    """Run one example inside a savepoint that is always rolled back, so examples never mix."""
    try:
        with transaction.atomic():
            fn()
            raise Rollback
    except Rollback:
        pass


def make_articles(times: list[datetime | None]) -> list[Article]:
    now = CUT + timedelta(days=30)
    Article.objects.bulk_create(
        Article(
            url=f"https://news.example.org/p/{i}",
            title=f"Zebra crossing report {i}" if i % 3 == 0 else f"Local report {i}",
            summary=f"The zebra herd moved. Marker token qq{i}x.",
            body=f"Long text about the zebra herd and <b>markup</b> number qq{i}x. " * (1 + i % 4),
            published_at=t,
            fetched_at=now,
            content_hash=f"{i:064x}",
        )
        for i, t in enumerate(times)
    )
    return list(Article.objects.filter(url__startswith="https://news.example.org/p/").order_by("id"))


@PROPERTY
@given(times=st.lists(article_times, min_size=0, max_size=14), as_of=instants, limit=st.integers(1, 6))
def test_article_search_never_sees_at_or_after_as_of(
    db: Any, times: list[datetime | None], as_of: datetime, limit: int
) -> None:
    def example() -> None:
        articles = make_articles(times)
        visible = {a.pk for a in articles if a.published_at is not None and a.published_at < as_of}
        hidden = [a for a in articles if a.pk not in visible]
        token = {a.pk: "qq" + a.url.rsplit("/", 1)[1] + "x" for a in articles}
        hidden_tokens = {token[a.pk] for a in hidden}

        first = articles_search(query="zebra", as_of=as_of, limit=limit, offset=0)
        assert first.total == len(visible)
        seen: list[int] = []
        offset = 0
        while True:
            page = articles_search(query="zebra", as_of=as_of, limit=limit, offset=offset)
            assert page.total == len(visible)
            if not page.results:
                break
            for result in page.results:
                assert result.published_at is not None and result.published_at < as_of
                assert not any(t in result.snippet for t in hidden_tokens)
                assert "<b>" not in result.snippet  # article markup is escaped, only <mark> is ours
            seen.extend(r.id for r in page.results)
            offset += limit
        assert len(seen) == len(set(seen))
        assert set(seen) == visible

        for article in hidden:
            assert articles_search(query=token[article.pk], as_of=as_of).total == 0
            assert article_get(article_id=article.pk, as_of=as_of) is None
        for pk in visible:
            assert article_get(article_id=pk, as_of=as_of) is not None

    in_savepoint(example)


countries = st.sampled_from(["USA", "CHN", "RUS", "FRA"])
relations = st.sampled_from(["010", "011", "036", "042", "043", "190", "193"])
event_days = st.integers(-4, 3).map(lambda d: CUT.date() + timedelta(days=d))


@PROPERTY
@given(
    events=st.lists(st.tuples(event_days, countries, countries, relations), max_size=16),
    as_of=instants,
    subject=st.one_of(st.none(), countries),
    relation=st.one_of(st.none(), st.sampled_from(["01", "04", "19", "042"])),
)
def test_events_never_include_days_not_over_before_as_of(
    db: Any,
    events: list[tuple[date, str, str, str]],
    as_of: datetime,
    subject: str | None,
    relation: str | None,
) -> None:
    def example() -> None:
        StructuredEvent.objects.bulk_create(
            StructuredEvent(date=d, subject=s, object=o, relation=r, relation_root=r[:2], dedupe_key=f"k{i}")
            for i, (d, s, o, r) in enumerate(events)
        )
        last_day = as_of.astimezone(UTC).date() - timedelta(days=1)

        def wanted(d: date, s: str, r: str) -> bool:
            if d > last_day or (subject and s != subject):
                return False
            return not relation or (r.startswith(relation) if len(relation) == 2 else r == relation)

        expected = [e for e in events if wanted(e[0], e[1], e[3])]
        filters: dict[str, Any] = {"as_of": as_of, "subject": subject, "relation": relation}
        listed = list(events_query(**filters))
        assert len(listed) == len(expected)
        assert all(e.date <= last_day for e in listed)
        assert events_count(**filters) == len(expected)
        assert events_distribution_by_relation(**filters) == dict(Counter(e[3] for e in expected))
        by_entity = Counter(e[1] for e in expected) + Counter(e[2] for e in expected)
        assert events_distribution_by_entity(**filters) == dict(by_entity)

    in_savepoint(example)


@PROPERTY
@given(times=st.lists(instants, max_size=12, unique_by=lambda t: t.astimezone(UTC)), as_of=instants)
def test_prices_never_include_points_at_or_after_as_of(db: Any, times: list[datetime], as_of: datetime) -> None:
    def example() -> None:
        market = Market.objects.create(platform=Market.Platform.SAMPLE, external_id="m1", title="M")
        PricePoint.objects.bulk_create(
            PricePoint(market=market, outcome="Yes", time=t, probability=(i % 10) / 10) for i, t in enumerate(times)
        )
        # A settlement price long after the cut-off must never show.
        PricePoint.objects.create(market=market, outcome="Yes", time=CUT + timedelta(days=90), probability=1.0)
        history = list(prices_history(market=market, as_of=as_of))
        assert len(history) == sum(1 for t in times if t < as_of)
        assert all(p.time < as_of for p in history)
        assert [p.time for p in history] == sorted(p.time for p in history)

    in_savepoint(example)


def test_naive_as_of_is_refused_everywhere(db: Any) -> None:
    naive = datetime(2025, 6, 1, 12, 0)
    calls = [
        lambda: articles_search(query="zebra", as_of=naive),  # type: ignore[arg-type]
        lambda: article_get(article_id=1, as_of=naive),
        lambda: list(events_query(as_of=naive)),
        lambda: events_count(as_of=naive),
        lambda: prices_history(market=1, as_of=naive),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="timezone-aware"):
            call()
