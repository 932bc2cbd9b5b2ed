"""Manifold API v0 listings (``before`` cursor), full multiple-choice markets and bets
(``probAfter``) become markets, price paths and questions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ingestion.models import Market, PricePoint, Question, Source
from tests.ingestion.conftest import NOW
from tests.ingestion.market_fakes import FakeManifold, market_source, poll, row_counts

pytestmark = pytest.mark.django_db

GPT6 = "qZ8rT2mLkP"
NBA = "mC4nW9xQe1"


@pytest.fixture
def manifold(fake_server) -> FakeManifold:
    return FakeManifold.install(fake_server)


def test_listing_pages_with_before_cursor(manifold, fake_server) -> None:
    source = market_source(fake_server, Source.Kind.MANIFOLD, page_size=2, min_bettors=10)
    report = poll(source, NOW)
    assert report.error == ""
    pages = fake_server.requests_to("/v0/markets")
    assert [r.query.get("before") for r in pages] == [None, [NBA], ["tY6uI9oP2a"]]
    assert all(r.query["limit"] == ["2"] for r in pages)
    assert set(Market.objects.values_list("external_id", flat=True)) == {GPT6, NBA, "sH2jK5lM8n"}
    assert report.skip_reasons["invalid market"] == 1
    assert "tY6uI9oP2a" in report.problems[0] and "'createdTime' should be a number" in report.problems[0]

    gpt6 = Market.objects.get(external_id=GPT6)
    assert (gpt6.liquidity, gpt6.volume, gpt6.bettors) == (2500, 48210.5, 164)
    assert gpt6.close_at == datetime(2026, 4, 19, tzinfo=UTC)
    assert gpt6.url == "https://manifold.markets/Ridgeline/will-openai-release-gpt6-before-may"
    # The price path is rebuilt from the bets' probAfter.
    path = list(PricePoint.objects.filter(market=gpt6).values_list("time", "probability"))
    assert [p for _, p in path] == [0.3, 0.24, 0.26, 0.2, 0.18]
    assert path[0][0] == datetime.fromtimestamp(1768500000, tz=UTC)

    # The multiple-choice market's answers come from /v0/market/{id}.
    assert len(fake_server.requests_to(f"/v0/market/{NBA}")) == 1
    nba = Market.objects.get(external_id=NBA)
    assert nba.outcomes == ["Oklahoma City Thunder", "Boston Celtics", "Denver Nuggets", "Other"]
    assert dict(PricePoint.objects.filter(market=nba).values_list("outcome", "probability")) == {
        "Boston Celtics": 0.27,
        "Oklahoma City Thunder": 0.38,
        "Denver Nuggets": 0.15,
        # No bet on this answer yet: its listed probability is kept as its first price point.
        "Other": 0.2,
    }
    questions = {q.market.external_id: q for q in Question.objects.select_related("market")}
    # The snow market has 6 bettors (< 10).
    assert set(questions) == {GPT6, NBA}
    assert questions[NBA].type == Question.Type.MULTIPLE_CHOICE
    assert questions[NBA].options == nba.outcomes
    assert questions[GPT6].status == Question.Status.DRAFT
    assert questions[GPT6].background == ""
    assert "Manifold" in questions[GPT6].resolution_criteria


def test_polling_twice_adds_no_rows(manifold, fake_server) -> None:
    source = market_source(fake_server, Source.Kind.MANIFOLD, page_size=2, open_questions=True)
    assert poll(source, NOW).error == ""
    counts = row_counts()
    second = poll(source, NOW + timedelta(minutes=15))
    assert second.error == "" and second.added == 0
    assert row_counts() == counts
    # Bets are asked for only after the latest stored one.
    last = [r for r in fake_server.requests_to("/v0/bets") if r.query["contractId"] == [GPT6]][-1]
    assert last.query["afterTime"] == ["1772600000000"]


def test_new_bets_extend_the_path(manifold, fake_server) -> None:
    source = market_source(fake_server, Source.Kind.MANIFOLD, open_questions=True)
    assert poll(source, NOW).error == ""
    manifold.bets[GPT6].insert(
        0, {"id": "bet006", "contractId": GPT6, "createdTime": 1772700000000, "probBefore": 0.18, "probAfter": 0.22}
    )
    report = poll(source, NOW + timedelta(hours=1))
    assert report.error == "" and report.added == 1
    assert PricePoint.objects.filter(market__external_id=GPT6).latest("time").probability == 0.22


def test_bet_pages_follow_before(manifold, fake_server) -> None:
    source = market_source(fake_server, Source.Kind.MANIFOLD, bets_page_size=2, open_questions=True)
    assert poll(source, NOW).error == ""
    pages = [r for r in fake_server.requests_to("/v0/bets") if r.query["contractId"] == [GPT6]]
    assert [r.query.get("before") for r in pages] == [None, ["bet004"], ["bet002"]]
    assert PricePoint.objects.filter(market__external_id=GPT6).count() == 5
