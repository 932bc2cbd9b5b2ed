"""Market payloads as the platforms send them today: Kalshi's documented example (fixed-point
string fields beside, or instead of, the older integers), empty price histories that must not wipe
a listing's price, and a closed Polymarket market without a settlement price, held and explained."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from django.test import Client

from ingestion.models import Market, PricePoint, Question, Source
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import RecordedRequest, Response
from tests.ingestion.market_fakes import FakeManifold, FakePolymarket, load, market_source, poll

pytestmark = pytest.mark.django_db

# Integer fields the current Kalshi documents retire in favour of *_dollars / *_fp strings.
RETIRED = (
    "yes_bid",
    "yes_ask",
    "no_bid",
    "no_ask",
    "last_price",
    "previous_yes_bid",
    "previous_yes_ask",
    "previous_price",
    "volume",
    "volume_24h",
    "liquidity",
    "open_interest",
    "notional_value",
    "settlement_value",
)


def serve_kalshi(fake_server: Any, page: dict[str, Any]) -> None:
    def markets(request: RecordedRequest) -> Response:
        # The documented example's cursor is a placeholder: the page after it is empty.
        body = page if not request.query.get("cursor") else {"markets": [], "cursor": ""}
        return Response(body=json.dumps(body).encode(), content_type="application/json")

    fake_server.add("/trade-api/v2/markets", markets)


def test_kalshi_documented_example_parses(fake_server) -> None:
    serve_kalshi(fake_server, load("kalshi/get_markets_docs_example.json"))
    source = market_source(fake_server, Source.Kind.KALSHI)
    report = poll(source, NOW)
    assert (report.error, report.skip_reasons) == ("", {})
    market = Market.objects.get(platform="kalshi")
    assert market.external_id == "<string>"
    # The fixed-point strings win over the integers beside them (123 cents is no price).
    assert market.liquidity == pytest.approx(0.56)
    assert market.volume == 123
    assert PricePoint.objects.get(market=market).probability == pytest.approx(0.56)


def test_kalshi_fixed_point_fields_alone(fake_server) -> None:
    page = load("kalshi/get_markets_docs_example.json")
    market = page["markets"][0]
    for name in RETIRED:
        market.pop(name)
    market.update(
        volume_fp="10.00",
        volume_24h_fp="10.00",
        open_interest_fp="10.00",
        last_price_dollars="0.0000",
        yes_bid_dollars="0.4100",
        yes_ask_dollars="0.4300",
        status="active",
        result="",
    )
    serve_kalshi(fake_server, page)
    report = poll(market_source(fake_server, Source.Kind.KALSHI), NOW)
    assert report.error == ""
    stored = Market.objects.get(platform="kalshi")
    assert (stored.volume, stored.liquidity, stored.status) == (10.0, pytest.approx(0.56), "active")
    # No trade yet (last price 0): the middle of the book.
    assert PricePoint.objects.get(market=stored).probability == pytest.approx(0.42)


def test_empty_clob_history_keeps_the_listing_price(fake_server) -> None:
    gamma = FakePolymarket.install(fake_server)  # no recorded history: the CLOB answers {"history": []}
    source = market_source(fake_server, Source.Kind.POLYMARKET, min_liquidity=5000, open_questions=True)
    assert poll(source, NOW).error == ""
    assert fake_server.requests_to("/prices-history")
    fed = Market.objects.get(external_id="512340")
    assert list(PricePoint.objects.filter(market=fed).values_list("outcome", "time", "probability")) == [
        ("Yes", NOW, pytest.approx(0.235))
    ]
    assert gamma.markets["512340"]["outcomePrices"] == '["0.235", "0.765"]'


def test_empty_manifold_bet_list_keeps_the_listing_price(fake_server) -> None:
    manifold = FakeManifold.install(fake_server)
    manifold.bets.clear()  # the API answers [] for a market nobody has bet on
    source = market_source(fake_server, Source.Kind.MANIFOLD, open_questions=True)
    assert poll(source, NOW).error == ""
    gpt6 = Market.objects.get(external_id="qZ8rT2mLkP")
    assert list(PricePoint.objects.filter(market=gpt6).values_list("time", "probability")) == [
        (NOW, pytest.approx(0.18))
    ]


def test_closed_polymarket_market_priced_zero_zero_is_held_with_its_reason(fake_server, staff) -> None:
    gamma = FakePolymarket.install(fake_server)
    source = market_source(
        fake_server, Source.Kind.POLYMARKET, min_liquidity=5000, open_questions=True, price_history=False
    )
    assert poll(source, NOW).error == ""
    question = Question.objects.get(market__external_id="512340")
    zeroed = copy.deepcopy(gamma.markets["512340"])
    zeroed.update(closed=True, outcomePrices='["0", "0"]', closedTime="2026-03-05 12:00:00+00")
    gamma.markets["512340"] = zeroed
    report = poll(source, NOW.replace(hour=13))
    assert report.error == ""
    question.refresh_from_db()
    assert question.status == Question.Status.OPEN and question.current_resolution is None
    market = Market.objects.get(external_id="512340")
    assert "closed without a settlement price (outcomePrices Yes 0, No 0)" in market.hold_reason
    source.refresh_from_db()
    assert "Polymarket market 512340 on hold: closed without a settlement price" in source.last_warning
    # Staff see the reason in the markets list of the admin.
    client = Client()
    client.force_login(staff)
    page = client.get("/admin/ingestion/market/").content.decode()
    assert "closed without a settlement price" in page
