"""Real Manifold API v0 responses recorded in 2022 by the PyManifold project (see
fixtures/markets/README.md) go through the real poller from 127.0.0.1: a recorded listing of 500
markets is walked page by page with the ``before`` cursor, a multiple-choice market becomes a
multiple-choice question whose options are its answers, and a pseudo-numeric market is stored
without a question."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ingestion.markets import NO, YES
from ingestion.models import Market, PricePoint, Question, Source
from tests.ingestion.market_fakes import FakeManifold, load, market_source, poll

pytestmark = pytest.mark.django_db

CHOICE = "TEW8dlA3pxk3GalxeQkI"
PSEUDO_NUMERIC = "MIVgHSvQ1s9MRGpm9QUb"
# The Date header of each recorded response.
CHOICE_RECORDED_AT = datetime(2022, 10, 11, 22, 30, 18, tzinfo=UTC)
PSEUDO_NUMERIC_RECORDED_AT = datetime(2022, 10, 11, 22, 37, 14, tzinfo=UTC)
LISTING_RECORDED_AT = datetime(2022, 10, 10, 19, 32, 38, tzinfo=UTC)
# Fields GET /v0/market/{id} adds to the LiteMarket that GET /v0/markets lists.
FULL_MARKET_ONLY = ("answers", "comments", "bets", "description", "textDescription")


def as_listed(full: dict) -> dict:
    """The recorded FullMarket as the listing shows it: the full-market-only fields taken
    away; nothing else changes."""
    return {name: value for name, value in full.items() if name not in FULL_MARKET_ONLY}


def test_recorded_multiple_choice_market_becomes_a_choice_question(fake_server) -> None:
    full = load("manifold/pymanifold_v0_market_multiple_choice.json")
    manifold = FakeManifold.install(fake_server, markets=[as_listed(full)])
    manifold.full[CHOICE] = full
    source = market_source(fake_server, Source.Kind.MANIFOLD, open_questions=True)

    report = poll(source, CHOICE_RECORDED_AT)

    assert (report.error, report.skip_reasons) == ("", {})
    # The listing has no answers: they come from /v0/market/{id}.
    assert len(fake_server.requests_to(f"/v0/market/{CHOICE}")) == 1
    market = Market.objects.get(external_id=CHOICE)
    assert market.outcomes == ["Harry Potter", "Cthulu", "Ririsu/Ririto Ibusuki"]
    assert market.url == "https://manifold.markets/LivInTheLookingGlass/which-character-is-best"
    assert market.close_at == datetime.fromtimestamp(1670950799, tz=UTC)
    assert market.volume == 0
    # No bets listed: each answer's recorded probability is its price.
    assert dict(PricePoint.objects.filter(market=market).values_list("outcome", "probability")) == {
        "Harry Potter": pytest.approx(1 / 3),
        "Cthulu": pytest.approx(1 / 3),
        "Ririsu/Ririto Ibusuki": pytest.approx(1 / 3),
    }
    question = Question.objects.get(market=market)
    assert (question.type, question.status) == (Question.Type.MULTIPLE_CHOICE, Question.Status.OPEN)
    assert question.title == "Which character is best?"
    assert question.options == market.outcomes


def test_recorded_pseudo_numeric_market_is_stored_without_a_question(fake_server) -> None:
    recorded = load("manifold/pymanifold_v0_market_pseudo_numeric.json")
    FakeManifold.install(fake_server, markets=[recorded])
    source = market_source(fake_server, Source.Kind.MANIFOLD, open_questions=True)

    report = poll(source, PSEUDO_NUMERIC_RECORDED_AT)

    assert report.error == ""
    market = Market.objects.get(external_id=PSEUDO_NUMERIC)
    assert market.title == "Example, please ignore"
    assert market.liquidity == 100
    # A number between min and max (2023..2100, log scale) is neither yes/no nor a closed
    # list of choices: no outcomes, no prices, no question.
    assert market.outcomes == []
    assert not PricePoint.objects.filter(market=market).exists()
    assert not Question.objects.filter(market=market).exists()


def test_recorded_listing_is_walked_page_by_page_with_before(fake_server) -> None:
    listed = load("manifold/pymanifold_v0_markets_500.json")
    FakeManifold.install(fake_server, markets=listed)
    source = market_source(fake_server, Source.Kind.MANIFOLD, page_size=200)

    report = poll(source, LISTING_RECORDED_AT)

    assert (report.error, report.skip_reasons, report.problems) == ("", {}, [])
    # 200 + 200 + 100: each next page starts before the last id of the one before it, and the
    # short third page ends the walk.
    pages = fake_server.requests_to("/v0/markets")
    assert [r.query.get("before") for r in pages] == [None, [listed[199]["id"]], [listed[399]["id"]]]
    assert all(r.query["limit"] == ["200"] for r in pages)
    markets = {m.external_id: m for m in Market.objects.all()}
    assert set(markets) == {m["id"] for m in listed}
    # Every recorded outcome type is kept: yes/no markets with their two outcomes, the
    # free-response, pseudo-numeric and (cancelled, answers not listed) multiple-choice ones
    # without outcomes; resolved markets say how they resolved.
    for recorded in listed:
        market = markets[recorded["id"]]
        binary = recorded["outcomeType"] == "BINARY"
        assert market.outcomes == ([YES, NO] if binary else []), recorded["id"]
        assert market.status == ("resolved:" + recorded["resolution"] if recorded["isResolved"] else "open")
    assert set(Question.objects.values_list("type", flat=True)) == {Question.Type.BINARY}
    codenames = markets["OxHMC9gyZOd8Q9QZIXAP"]
    assert codenames.title == "Will a game of codenames happen tonight at the EA summit?"
    assert codenames.status == "resolved:YES"
    assert codenames.volume == pytest.approx(161.33587396946712)
