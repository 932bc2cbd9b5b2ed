"""A poll writes only the markets whose content changed: an unchanged market (same payload, in
any key order) is neither rewritten nor given a new snapshot price, a changed one is, and a row
stored before content hashes existed is rewritten once."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ingestion.models import Market, PricePoint, Source
from tests.ingestion.conftest import NOW
from tests.ingestion.market_fakes import FakePolymarket, market_source, poll

pytestmark = pytest.mark.django_db

BRAZIL = "512388"


@pytest.fixture
def gamma(fake_server) -> FakePolymarket:
    return FakePolymarket.install(fake_server)


@pytest.fixture
def source(gamma, fake_server) -> Source:
    # Snapshot prices only, so every price point comes from the listing itself.
    return market_source(fake_server, Source.Kind.POLYMARKET, price_history=False)


def _stamps() -> dict[str, tuple[object, str]]:
    return {m.external_id: (m.updated_at, m.content_hash) for m in Market.objects.all()}


def test_unchanged_markets_are_not_rewritten(gamma, source) -> None:
    first = poll(source, NOW)
    assert first.error == ""
    stamps, prices = _stamps(), PricePoint.objects.count()
    assert stamps and all(len(digest) == 40 for _, digest in stamps.values())

    # Key order is not content: jsonb does not keep it either.
    for market_id, market in list(gamma.markets.items()):
        gamma.markets[market_id] = dict(reversed(list(market.items())))
    second = poll(source, NOW + timedelta(minutes=11))
    assert second.error == "" and second.added == 0
    assert second.skip_reasons["unchanged market"] == len(stamps)
    assert _stamps() == stamps
    assert PricePoint.objects.count() == prices


def test_a_changed_market_is_rewritten_with_its_new_price(gamma, source) -> None:
    poll(source, NOW)
    stamps = _stamps()
    gamma.set(BRAZIL, outcomePrices='["0.67", "0.33"]', liquidityNum=12345.5)

    report = poll(source, NOW + timedelta(minutes=11))
    assert report.error == ""
    # One new snapshot price; every other market is skipped as unchanged.
    assert report.added == 1
    assert report.skip_reasons["unchanged market"] == len(stamps) - 1
    after = _stamps()
    assert after[BRAZIL] != stamps[BRAZIL]
    assert {k: v for k, v in after.items() if k != BRAZIL} == {k: v for k, v in stamps.items() if k != BRAZIL}
    brazil = Market.objects.get(external_id=BRAZIL)
    assert brazil.liquidity == pytest.approx(12345.5)
    assert brazil.raw["outcomePrices"] == '["0.67", "0.33"]'
    assert list(brazil.prices.order_by("time").values_list("probability", flat=True)) == [
        pytest.approx(0.61),
        pytest.approx(0.67),
    ]


def test_a_row_without_a_hash_is_rewritten_once(gamma, source) -> None:
    poll(source, NOW)
    Market.objects.filter(external_id=BRAZIL).update(content_hash="")
    prices = PricePoint.objects.count()

    report = poll(source, NOW + timedelta(minutes=11))
    assert report.error == "" and report.added == 0
    assert Market.objects.get(external_id=BRAZIL).content_hash != ""
    # Same prices as stored: the rewrite adds no price point.
    assert PricePoint.objects.count() == prices
    again = poll(source, NOW + timedelta(minutes=22))
    assert again.skip_reasons["unchanged market"] == Market.objects.count()
