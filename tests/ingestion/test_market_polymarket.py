"""Polymarket Gamma listings (keyset and offset paging, explicit ``closed``) and CLOB price
history become markets, price points and questions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ingestion.models import Market, PricePoint, Question, Source
from tests.ingestion.conftest import NOW
from tests.ingestion.market_fakes import FakePolymarket, load, market_source, poll, row_counts

pytestmark = pytest.mark.django_db

FED = "512340"
FED_YES_TOKEN = "71321045679252212594626385532706912750332728571942532289631379312455583992563"


@pytest.fixture
def gamma(fake_server) -> FakePolymarket:
    fake = FakePolymarket.install(fake_server)
    fake.history[FED_YES_TOKEN] = load("polymarket/prices_history_fed.json")
    return fake


def test_keyset_listing_over_several_pages(gamma, fake_server) -> None:
    source = market_source(fake_server, Source.Kind.POLYMARKET, page_size=2, min_liquidity=5000)
    report = poll(source, NOW)
    assert report.error == ""
    pages = fake_server.requests_to("/markets/keyset")
    assert [r.query.get("cursor") for r in pages] == [None, ["2"], ["4"]]
    # Omitting ``closed`` hides resolved markets on Gamma: it is always sent.
    assert all(r.query["closed"] == ["false"] for r in pages)
    assert set(Market.objects.values_list("external_id", flat=True)) == {"512340", "512388", "512402", "512410"}
    # Two markets with broken fields are skipped and named, the rest stored.
    assert report.skip_reasons["invalid market"] == 2
    assert any("512433" in p and "'outcomePrices' is missing" in p for p in report.problems)
    assert any("512440" in p and "'outcomes' is not a JSON-encoded list" in p for p in report.problems)

    fed = Market.objects.get(external_id=FED)
    assert fed.platform == Market.Platform.POLYMARKET
    assert fed.outcomes == ["Yes", "No"]
    assert fed.close_at == datetime(2026, 4, 29, 18, tzinfo=UTC)
    assert fed.liquidity == pytest.approx(95210.33)
    assert fed.url == "https://polymarket.com/market/will-the-fed-cut-rates-at-the-april-2026-meeting"
    assert fed.source == source
    # The selected market's price path comes from the CLOB history of its Yes token.
    history = list(PricePoint.objects.filter(market=fed).values_list("time", "probability"))
    assert len(history) == 8
    assert history[0] == (datetime.fromtimestamp(1768060800, tz=UTC), pytest.approx(0.41))
    request = fake_server.requests_to("/prices-history")[0]
    assert request.query["market"] == [FED_YES_TOKEN]
    assert request.query["interval"] == ["max"] and request.query["fidelity"] == ["60"]
    # A market not selected keeps the listing's price as a snapshot.
    brazil = Market.objects.get(external_id="512388")
    assert list(brazil.prices.values_list("outcome", "probability")) == [("Yes", pytest.approx(0.61))]

    # Selection: liquidity >= 5000, closing within 90 days; drafts by default.
    questions = {q.market.external_id: q for q in Question.objects.select_related("market")}
    assert set(questions) == {FED, "512402"}
    question = questions[FED]
    assert question.status == Question.Status.DRAFT
    assert question.origin == Question.Origin.MARKET
    assert question.type == Question.Type.BINARY
    assert question.external_id == "polymarket:512340"
    assert question.provenance_url == fed.url
    assert question.close_at == fed.close_at
    eurovision = questions["512402"]
    assert eurovision.type == Question.Type.MULTIPLE_CHOICE
    assert eurovision.options == ["Sweden", "Ukraine", "Italy", "Other"]


def test_polling_twice_adds_no_rows(gamma, fake_server) -> None:
    source = market_source(fake_server, Source.Kind.POLYMARKET, page_size=2, open_questions=True)
    first = poll(source, NOW)
    counts = row_counts()
    assert first.added == counts["markets"] + counts["prices"] + counts["questions"]
    second = poll(source, NOW + timedelta(minutes=11))
    assert second.error == "" and second.added == 0
    assert row_counts() == counts
    # The second history request asks only for what came after the stored path.
    latest = [r for r in fake_server.requests_to("/prices-history") if r.query["market"] == [FED_YES_TOKEN]][-1]
    assert "interval" not in latest.query and latest.query["startTs"] == ["1772294400"]


def test_offset_paging(gamma, fake_server) -> None:
    source = market_source(fake_server, Source.Kind.POLYMARKET, paging="offset", page_size=4, price_history=False)
    report = poll(source, NOW)
    assert report.error == ""
    pages = fake_server.requests_to("/markets")
    assert [(r.query["offset"], r.query["limit"], r.query["closed"]) for r in pages] == [
        (["0"], ["4"], ["false"]),
        (["4"], ["4"], ["false"]),
    ]
    assert Market.objects.count() == 4
    assert fake_server.requests_to("/prices-history") == []


def test_closed_both_lists_resolved_markets_too(gamma, fake_server) -> None:
    gamma.set("512388", closed=True, outcomePrices='["1", "0"]', closedTime="2026-03-01 14:00:00+00")
    source = market_source(fake_server, Source.Kind.POLYMARKET, closed="both")
    assert poll(source, NOW).error == ""
    closed_values = [r.query["closed"] for r in fake_server.requests_to("/markets/keyset")]
    assert closed_values == [["false"], ["true"]]
    brazil = Market.objects.get(external_id="512388")
    assert brazil.status == "closed"
    # Already closed: stored as a market but never offered as a new question.
    assert not Question.objects.filter(market=brazil).exists()


def test_open_questions_option_opens_them(gamma, fake_server) -> None:
    source = market_source(fake_server, Source.Kind.POLYMARKET, open_questions="true", min_volume=100000)
    assert poll(source, NOW).error == ""
    statuses = dict(Question.objects.values_list("market__external_id", "status"))
    assert statuses == {FED: Question.Status.OPEN, "512402": Question.Status.OPEN}
