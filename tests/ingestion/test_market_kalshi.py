"""Kalshi trade API v2 listings (``cursor`` and ``status``) become markets, prices in cents
become probabilities, and questions follow the source's selection."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ingestion.models import Market, PricePoint, Question, Source
from ingestion.selectors.markets import market_price_at, market_prices_before
from tests.ingestion.conftest import NOW
from tests.ingestion.market_fakes import FakeKalshi, market_source, poll, row_counts

pytestmark = pytest.mark.django_db

FED = "KXFEDDECISION-26APR-C25"


@pytest.fixture
def kalshi(fake_server) -> FakeKalshi:
    return FakeKalshi.install(fake_server)


def test_listing_pages_with_cursor(kalshi, fake_server) -> None:
    source = market_source(fake_server, Source.Kind.KALSHI, page_size=2, min_volume=1000)
    report = poll(source, NOW)
    assert report.error == ""
    pages = fake_server.requests_to("/trade-api/v2/markets")
    assert [r.query.get("cursor") for r in pages] == [None, ["2"]]
    assert all(r.query["status"] == ["open"] and r.query["limit"] == ["2"] for r in pages)
    assert Market.objects.count() == 4

    fed = Market.objects.get(external_id=FED)
    assert fed.status == "active"
    assert fed.close_at == datetime(2026, 4, 29, 17, 55, tzinfo=UTC)
    assert fed.open_at == datetime(2026, 1, 15, 15, tzinfo=UTC)
    assert fed.liquidity == 184500.0  # cents -> dollars
    assert fed.url == "https://kalshi.com/markets/kxfeddecision-26apr"
    prices = dict(PricePoint.objects.values_list("market__external_id", "probability"))
    assert prices[FED] == pytest.approx(0.23)  # last_price 23 cents
    assert prices["KXHIGHNY-26MAR20-B58.5"] == pytest.approx(0.155)  # no trade yet: mid of 14/17
    assert prices["KXCPI-26APR-T0.3"] == pytest.approx(0.32)  # *_dollars strings
    assert Market.objects.get(external_id="KXCPI-26APR-T0.3").liquidity == pytest.approx(5120.5)
    assert PricePoint.objects.get(market=fed).time == NOW

    # volume >= 1000: the NYC temperature market (no volume) stays out.
    assert set(Question.objects.values_list("market__external_id", flat=True)) == {
        FED,
        "KXGDP-26APR30-T2.0",
        "KXCPI-26APR-T0.3",
    }
    question = Question.objects.get(market=fed)
    assert question.type == Question.Type.BINARY and question.status == Question.Status.DRAFT
    assert question.background.startswith("If the Federal Reserve cuts")


def test_polling_twice_adds_no_rows(kalshi, fake_server) -> None:
    source = market_source(fake_server, Source.Kind.KALSHI, open_questions=True)
    assert poll(source, NOW).error == ""
    counts = row_counts()
    second = poll(source, NOW + timedelta(minutes=10))
    assert second.error == "" and second.added == 0
    assert row_counts() == counts


def test_a_price_move_adds_one_point(kalshi, fake_server) -> None:
    source = market_source(fake_server, Source.Kind.KALSHI)
    assert poll(source, NOW).error == ""
    kalshi.set(FED, last_price=31)
    later = NOW + timedelta(minutes=10)
    report = poll(source, later)
    assert report.error == "" and report.added == 1
    assert list(PricePoint.objects.filter(market__external_id=FED).values_list("time", "probability")) == [
        (NOW, pytest.approx(0.23)),
        (later, pytest.approx(0.31)),
    ]
    # As-of reads see only prices strictly before the date.
    fed = Market.objects.get(external_id=FED)
    assert market_price_at(market=fed, at=later).probability == pytest.approx(0.23)
    assert market_price_at(market=fed, at=NOW) is None
    assert market_prices_before(market=fed, before=later + timedelta(seconds=1)).count() == 2


def test_source_url_with_version_prefix(kalshi, fake_server) -> None:
    source = market_source(fake_server, Source.Kind.KALSHI, status="all")
    source.url = fake_server.url("/trade-api/v2")
    source.save()
    assert poll(source, NOW).error == ""
    assert "status" not in fake_server.requests_to("/trade-api/v2/markets")[0].query
    assert Market.objects.count() == 4
