"""Real Manifold API v0 responses recorded in 2022 by the PyManifold project (see
fixtures/markets/README.md) go through the real poller from 127.0.0.1: a multiple-choice market
becomes a multiple-choice question whose options are its answers, and a pseudo-numeric market
is stored without a question."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ingestion.models import Market, PricePoint, Question, Source
from tests.ingestion.market_fakes import FakeManifold, load, market_source, poll

pytestmark = pytest.mark.django_db

CHOICE = "TEW8dlA3pxk3GalxeQkI"
PSEUDO_NUMERIC = "MIVgHSvQ1s9MRGpm9QUb"
# The Date header of each recorded response.
CHOICE_RECORDED_AT = datetime(2022, 10, 11, 22, 30, 18, tzinfo=UTC)
PSEUDO_NUMERIC_RECORDED_AT = datetime(2022, 10, 11, 22, 37, 14, tzinfo=UTC)
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
