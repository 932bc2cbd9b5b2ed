"""Market polls that meet HTTP errors, rate limits, malformed JSON, missing or mistyped fields
or bad source options record a clear error on the source, store nothing, and retry later."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from ingestion.models import Market, Source
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response
from tests.ingestion.market_fakes import FakeKalshi, FakeManifold, FakePolymarket, market_source, poll, row_counts

pytestmark = pytest.mark.django_db

EMPTY = {"markets": 0, "prices": 0, "questions": 0, "resolutions": 0}


def failed(source: Source) -> Source:
    source.refresh_from_db()
    assert source.consecutive_failures >= 1
    assert row_counts() == EMPTY
    return source


def test_http_error_is_recorded_and_the_next_poll_retries(fake_server) -> None:
    fake = FakeKalshi.install(fake_server)
    fake_server.add("/trade-api/v2/markets", Response(status=502, body=b"bad gateway"), fake._page)
    source = market_source(fake_server, Source.Kind.KALSHI)
    report = poll(source, NOW)
    assert "HTTP 502" in report.error and "/trade-api/v2/markets" in report.error
    source = failed(source)
    assert source.last_error == report.error
    assert source.next_attempt_at > NOW
    retry = poll(source, source.next_attempt_at)
    assert retry.error == ""
    source.refresh_from_db()
    assert source.consecutive_failures == 0 and source.last_error == ""
    assert Market.objects.count() == 4


def test_rate_limit_honours_retry_after(fake_server) -> None:
    fake_server.add("/v0/markets", Response(status=429, headers={"Retry-After": "3600"}, body=b"slow down"))
    source = market_source(fake_server, Source.Kind.MANIFOLD)
    report = poll(source, NOW)
    assert "HTTP 429" in report.error and "retry after 3600s" in report.error
    source = failed(source)
    assert source.next_attempt_at >= NOW + timedelta(seconds=3600)


def test_a_later_page_failing_stores_nothing_from_earlier_pages(fake_server) -> None:
    fake = FakePolymarket.install(fake_server)

    def page(request):
        if request.query.get("cursor") == ["2"]:
            return Response(status=500, body=b"oops")
        return fake._keyset_page(request)

    fake_server.add("/markets/keyset", page)
    source = market_source(fake_server, Source.Kind.POLYMARKET, page_size=2)
    assert "HTTP 500" in poll(source, NOW).error
    failed(source)


def test_malformed_json(fake_server) -> None:
    fake_server.add("/v0/markets", Response(body=b'[{"id": "abc", ', content_type="application/json"))
    source = market_source(fake_server, Source.Kind.MANIFOLD)
    assert "malformed JSON" in poll(source, NOW).error
    failed(source)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"results": []}, "Polymarket /markets/keyset page 1: expected an object with a 'markets' list"),
        ({"markets": [], "next_cursor": 7}, "'next_cursor' is not a string"),
    ],
)
def test_polymarket_page_of_the_wrong_shape(fake_server, body, message) -> None:
    fake_server.add_json("/markets/keyset", body)
    source = market_source(fake_server, Source.Kind.POLYMARKET)
    assert message in poll(source, NOW).error
    failed(source)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"close_time": None}, "Kalshi market KXGDP-26APR30-T2.0: field 'close_time' is missing"),
        ({"yes_bid": "55", "last_price": 0}, "field 'yes_bid' should be a number, got '55'"),
        ({"last_price": 560}, "field 'last_price' should be a price in cents between 0 and 100, got 560"),
        ({"status": "paused_forever"}, "field 'status' has an unknown value 'paused_forever'"),
        (
            {"status": "settled", "result": "scalar"},
            "field 'result' has a value Hindsight cannot map to Yes or No: 'scalar'",
        ),
        ({"title": 42}, "field 'title' should be a string, got int"),
    ],
)
def test_kalshi_bad_market_fails_alone(fake_server, changes, message) -> None:
    fake = FakeKalshi.install(fake_server)
    fake.set("KXGDP-26APR30-T2.0", **changes)
    fake_server.add(
        "/trade-api/v2/markets",
        lambda request: Response(
            body=json.dumps({"markets": list(fake.markets.values()), "cursor": ""}).encode(),
            content_type="application/json",
        ),
    )
    source = market_source(fake_server, Source.Kind.KALSHI)
    report = poll(source, NOW)
    assert report.error == ""
    assert report.skip_reasons["invalid market"] == 1
    assert any(message in problem for problem in report.problems)
    # The other markets of the page are stored; the one that failed is not.
    stored = set(Market.objects.values_list("external_id", flat=True))
    assert stored == set(fake.markets) - {"KXGDP-26APR30-T2.0"}
    source.refresh_from_db()
    assert (source.last_error, source.consecutive_failures) == ("", 0)


def test_polymarket_and_manifold_skip_and_count_bad_markets(fake_server) -> None:
    fake = FakePolymarket.install(fake_server)
    fake.set("512388", outcomePrices='["0.6", "abc"]')
    fake.set("512410", endDate=20271231)
    source = market_source(fake_server, Source.Kind.POLYMARKET, price_history=False)
    report = poll(source, NOW)
    assert report.error == ""
    assert report.skip_reasons["invalid market"] == 4
    assert "Polymarket market 512388: field 'outcomePrices' holds a non-numeric price 'abc'" in report.problems
    assert "Polymarket market 512410: field 'endDate' should be an ISO 8601 time string, got int" in report.problems
    assert Market.objects.count() == 2

    manifold = FakeManifold.install(fake_server)
    manifold.set("sH2jK5lM8n", probability=1.7)
    manifold.set("qZ8rT2mLkP", isResolved=True, resolution="MAYBE")
    source = market_source(fake_server, Source.Kind.MANIFOLD, price_history=False)
    report = poll(source, NOW)
    assert report.error == ""
    assert "Manifold market sH2jK5lM8n: field 'probability' holds a probability outside [0, 1]: 1.7" in report.problems
    assert any("qZ8rT2mLkP: field 'resolution' should be YES, NO, MKT or CANCEL" in p for p in report.problems)


def test_bad_price_history_skips_the_market_an_http_error_fails_the_poll(fake_server) -> None:
    fake = FakePolymarket.install(fake_server)
    fake.history["8801"] = {"history": [{"t": 1768060800, "p": "high"}]}
    source = market_source(fake_server, Source.Kind.POLYMARKET, horizon_days=1000)
    report = poll(source, NOW)
    # One market's history is broken: that market is skipped, the rest stored.
    assert report.error == ""
    assert any("512410 prices-history point 0: field 'p' should be a number" in p for p in report.problems)
    assert not Market.objects.filter(external_id="512410").exists()

    fake_server.add("/prices-history", Response(status=503, body=b"down"))
    assert "HTTP 503" in poll(market_source(fake_server, Source.Kind.POLYMARKET), NOW).error


def test_tracked_market_that_vanished_is_skipped(fake_server) -> None:
    fake = FakeKalshi.install(fake_server)
    source = market_source(fake_server, Source.Kind.KALSHI, open_questions=True)
    assert poll(source, NOW).error == ""
    fake.set("KXGDP-26APR30-T2.0", status="closed")
    fake_server.add("/trade-api/v2/markets/KXGDP-26APR30-T2.0", Response(status=404, body=b"{}"))
    report = poll(source, NOW + timedelta(hours=1))
    assert report.error == ""
    assert "Kalshi market KXGDP-26APR30-T2.0: no longer exists (404)" in report.problems


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"min_liquidity": "lots"}, "source option 'min_liquidity' should be a number, got 'lots'"),
        ({"open_questions": "perhaps"}, "source option 'open_questions' should be true or false"),
        ({"page_size": 0}, "source option 'page_size' should be a whole number >= 1"),
        ({"paging": "pages"}, "source option 'paging' should be one of keyset, offset"),
    ],
)
def test_bad_source_options(fake_server, options, message) -> None:
    FakePolymarket.install(fake_server)
    source = market_source(fake_server, Source.Kind.POLYMARKET, **options)
    assert message in poll(source, NOW).error
    failed(source)
