"""Manifold's own recorded API responses (the examples published in its API documentation, see
fixtures/markets/README.md) go through the real client from 127.0.0.1: a recorded market opens
a question and later resolves it, a recorded free-response market is kept without a question,
and recorded bets (a partly filled limit order among them) rebuild a price path."""

from __future__ import annotations

import copy
import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from ingestion.markets import YES, JsonClient
from ingestion.markets.manifold import ManifoldClient, parse_market
from ingestion.models import Market, PricePoint, Question, Source
from tests.ingestion.market_fakes import FakeManifold, load, market_source, poll

pytestmark = pytest.mark.django_db

# Between the recorded market's creation (18:54 UTC) and its close (06:59 UTC the next day).
RECORDED_AT = datetime(2022, 5, 29, 20, 0, tzinfo=UTC)
BLOG = "EvIhzcJXwhL0HavaszD7"


def recorded_market() -> dict:
    return load("manifold/docs_v0_markets_example.json")[0]


def before_resolution(market: dict) -> dict:
    """The recorded market as it was listed before its creator resolved it: ``resolution``
    and ``resolutionTime`` taken away and ``isResolved`` false; nothing else changes."""
    opened = copy.deepcopy(market)
    for name in ("resolution", "resolutionTime"):
        opened.pop(name)
    opened["isResolved"] = False
    return opened


def test_recorded_market_opens_a_question_then_resolves_it_yes(fake_server) -> None:
    manifold = FakeManifold.install(fake_server, markets=[before_resolution(recorded_market())])
    source = market_source(fake_server, Source.Kind.MANIFOLD, open_questions=True)
    report = poll(source, RECORDED_AT)
    assert (report.error, report.skip_reasons) == ("", {})

    market = Market.objects.get(external_id=BLOG)
    assert market.url == "https://manifold.markets/Austin/will-i-write-a-new-blog-post-today"
    assert market.close_at == datetime.fromtimestamp(1653893940, tz=UTC)
    assert market.liquidity == pytest.approx(102.65696071594805)
    # The recorded LiteMarket carries no uniqueBettorCount: unknown, not zero.
    assert market.bettors is None
    # Nobody has bet yet (the API answers []): the listed probability is the price.
    assert list(PricePoint.objects.filter(market=market).values_list("outcome", "probability")) == [
        (YES, pytest.approx(0.8958175225896258))
    ]
    question = Question.objects.get(market=market)
    assert (question.type, question.status) == (Question.Type.BINARY, Question.Status.OPEN)
    assert question.title == "Will I write a new blog post today?"

    # The recorded payload exactly as the API returned it: resolved YES.
    manifold.markets[BLOG] = recorded_market()
    report = poll(source, RECORDED_AT + timedelta(days=1))
    assert report.error == ""
    question.refresh_from_db()
    assert question.status == Question.Status.RESOLVED
    resolution = question.resolutions.get()
    assert (resolution.outcome, resolution.provisional) == (True, False)
    assert resolution.resolved_at == datetime.fromtimestamp(1653924077.078, tz=UTC)


def test_recorded_free_response_market_is_kept_without_a_question() -> None:
    record = parse_market(load("manifold/docs_v0_market_example.json"), now=RECORDED_AT)
    assert record.external_id == "lEoqtnDgJzft6apSKzYK"
    assert record.status == "resolved:MKT"
    # Free response is neither yes/no nor a closed list of choices: no question type, so
    # the selection never offers it, whatever its answers.
    assert (record.question_type, record.outcomes) == ("", [])
    assert record.bettors is None and record.volume == 112


def test_recorded_bets_rebuild_the_price_path(fake_server) -> None:
    bets = load("manifold/docs_v0_bets_example.json")
    contract = bets[0]["contractId"]
    fake_server.add_json(f"/v0/bets?contractId={contract}&limit=1000", bets)
    # The documentation shows these bets but not their market: the recorded binary market
    # stands in for it, under the bets' contract id.
    record = dataclasses.replace(
        parse_market(before_resolution(recorded_market()), now=RECORDED_AT), external_id=contract
    )
    with JsonClient() as http:
        client = ManifoldClient(base_url=fake_server.base_url, options={}, get=http.get)
        priced = client.with_history(record, since=None, now=RECORDED_AT)
    # Newest first in the response; one point per bet, the limit order's included.
    assert sorted((p.time, p.probability) for p in priced.prices) == [
        (datetime.fromtimestamp(1659482757.271, tz=UTC), pytest.approx(0.5730753474948571)),
        (datetime.fromtimestamp(1659482775.970, tz=UTC), pytest.approx(0.5730753474948571)),
    ]
