"""Storing a large market listing in bulk (COPY on PostgreSQL, Django's bulk upsert on SQLite)
keeps the semantics of the row-by-row ORM: every value round-trips, a second identical store
writes nothing, a market stored meanwhile by another source is updated rather than duplicated,
price points already stored are neither duplicated nor counted, one store of new and changed
markets keeps the new prices of both, and questions get the same fields the ORM would give
them."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection

from ingestion.markets import MarketRecord, PriceRecord
from ingestion.markets.polymarket import parse_market
from ingestion.models import Market, PricePoint, Question
from ingestion.services import market_store as market_services
from ingestion.services.market_poll import market_poll_records
from ingestion.services.market_store import canonical_json, market_upsert_many
from tests.factories import SourceFactory
from tests.ingestion.conftest import NOW

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


def gamma_market(i: int, **changes: Any) -> dict[str, Any]:
    multiple = i % 5 == 0
    outcomes = ["Alpha", "Beta", "Gamma"] if multiple else ["Yes", "No"]
    prices = ["0.5", "0.3", "0.2"] if multiple else [f"{0.1 + i / 100:.2f}", f"{0.9 - i / 100:.2f}"]
    market = {
        "id": str(700000 + i),
        "question": f"Will indicator {i} exceed its threshold?\tTab, newline\n, backslash \\ and ünïcode",
        "slug": f"indicator-{i}",
        "description": f"Resolves Yes if indicator {i} is above threshold.",
        "startDate": "2026-02-01T00:00:00Z",
        "endDate": (NOW + timedelta(days=5 + i)).isoformat().replace("+00:00", "Z"),
        "outcomes": json.dumps(outcomes),
        "outcomePrices": json.dumps(prices),
        "clobTokenIds": json.dumps([f"{i}{k}" for k in range(len(outcomes))]),
        "volumeNum": 1000 + i * 37.5,
        "liquidityNum": 100.0 + i * 1000,
        "active": True,
        "closed": False,
        "nested": {"b": [1, 2.5, None, True], "a": 'quote " and \\u escape'},
    }
    market.update(changes)
    return market


def records(count: int, **changes: Any) -> list[MarketRecord]:
    return [parse_market(gamma_market(i, **changes), now=NOW) for i in range(count)]


@pytest.fixture
def source():
    return SourceFactory(kind="polymarket", url="https://gamma.example.org", options={"min_liquidity": 5000})


def test_every_value_round_trips_and_a_second_store_writes_nothing(source) -> None:
    listing = records(40)
    report = market_poll_records(source=source, records=listing, now=NOW)
    questions = Question.objects.count()
    prices = sum(len(r.prices) for r in listing)
    assert report.error == ""
    assert report.added == 40 + prices + questions
    assert Market.objects.count() == 40 and PricePoint.objects.count() == prices
    # Liquidity 100 + i * 1000 >= 5000 from i = 5 on: 35 markets, all within the horizon.
    assert questions == 35

    for record in listing:
        market = Market.objects.get(platform="polymarket", external_id=record.external_id)
        assert (market.title, market.outcomes, market.url, market.status) == (
            record.title,
            record.outcomes,
            record.url,
            record.status,
        )
        assert (market.open_at, market.close_at, market.liquidity, market.volume, market.bettors) == (
            record.open_at,
            record.close_at,
            record.liquidity,
            record.volume,
            None,
        )
        assert market.raw == record.raw and market.source_id == source.pk
        assert len(market.content_hash) == 40 and market.updated_at is not None
        stored = {(p.outcome, p.time, p.probability) for p in market.prices.all()}
        assert stored == {(p.outcome, p.time, p.probability) for p in record.prices}

    again = market_poll_records(source=source, records=records(40), now=NOW + timedelta(minutes=15))
    assert again.added == 0 and again.skip_reasons == {"unchanged market": 40}
    assert (Market.objects.count(), PricePoint.objects.count(), Question.objects.count()) == (40, prices, questions)


def test_questions_get_the_fields_the_orm_gives_them(source) -> None:
    market_poll_records(source=source, records=records(11), now=NOW)
    question = Question.objects.get(external_id="polymarket:700010")
    market = Market.objects.get(external_id="700010")
    assert question.market_id == market.pk
    assert question.type == Question.Type.MULTIPLE_CHOICE and question.options == ["Alpha", "Beta", "Gamma"]
    assert question.status == Question.Status.DRAFT and question.origin == Question.Origin.MARKET
    assert question.attribution == {"source": "Polymarket", "market_id": "700010", "url": market.url}
    assert question.provenance_url == market.url
    assert question.open_at == NOW and question.close_at == market.close_at
    assert question.created_at is not None and question.updated_at is not None
    assert question.title == market.title.strip()
    # Model defaults the services never set are filled as the ORM would.
    assert question.rejection_reason == "" and question.background_events == []


def test_a_market_stored_meanwhile_by_another_source_is_updated_not_duplicated(source, monkeypatch) -> None:
    other = SourceFactory(kind="polymarket", url="https://other.example.org")
    market_upsert_many(source=other, records=records(1), now=NOW)
    before = Market.objects.get(external_id="700000")
    # As if this poll had looked the markets up just before the other source committed.
    monkeypatch.setattr(market_services, "_stored_markets", lambda keys: {})

    later = NOW + timedelta(minutes=5)
    result = market_upsert_many(source=source, records=[*records(3, question="Renamed?")], now=later)

    assert Market.objects.count() == 3
    after = Market.objects.get(external_id="700000")
    assert after.pk == before.pk and after.title == "Renamed?"
    assert set(result.market_ids) == {"700000", "700001", "700002"}
    assert result.market_ids["700000"] == before.pk
    assert PricePoint.objects.filter(market_id=before.pk).count() == 3


def test_points_of_a_market_stored_meanwhile_are_counted_exactly(source, monkeypatch) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises writers: a transaction whose reads are stale cannot write at all")
    other = SourceFactory(kind="polymarket", url="https://other.example.org")
    market_upsert_many(source=other, records=records(1), now=NOW)
    monkeypatch.setattr(market_services, "_stored_markets", lambda keys: {})

    result = market_upsert_many(source=source, records=records(3), now=NOW)

    # The three snapshot points of 700000 (same time, same prices) were already stored.
    assert PricePoint.objects.count() == 3 + 1 + 1
    assert result.prices_added == 2


def test_price_points_already_stored_are_neither_duplicated_nor_counted(source) -> None:
    (record,) = records(1)
    history = [PriceRecord(outcome="Yes", time=NOW - timedelta(hours=h), probability=0.5) for h in range(6)]
    first = market_upsert_many(source=source, records=[_with_prices(record, history[:4], title="A")], now=NOW)
    assert first.prices_added == 4
    # The market changes (so it is written) and its history overlaps what is stored.
    second = market_upsert_many(source=source, records=[_with_prices(record, history[2:], title="B")], now=NOW)
    assert second.prices_added == 2
    assert PricePoint.objects.count() == 6


def test_one_store_of_new_and_changed_markets_keeps_the_prices_of_both(source) -> None:
    stored = records(3)
    market_upsert_many(source=source, records=stored, now=NOW)
    before = PricePoint.objects.count()
    later = NOW + timedelta(hours=1)
    # Two stored markets move (a new snapshot price each); the third is unchanged; two are new.
    moved = [parse_market(gamma_market(i, outcomePrices=json.dumps(["0.61", "0.39"])), now=later) for i in (1, 2)]
    new = [parse_market(gamma_market(i), now=later) for i in (3, 4)]
    result = market_upsert_many(source=source, records=[stored[0], *moved, *new], now=later)
    assert (result.created, result.updated, result.unchanged) == (2, 2, 1)
    moved_ids = [result.market_ids[r.external_id] for r in moved]
    assert PricePoint.objects.filter(market_id__in=moved_ids, time=later).count() == 2
    new_ids = [result.market_ids[r.external_id] for r in new]
    assert PricePoint.objects.filter(market_id__in=new_ids).count() == 2
    assert result.prices_added == 4 == PricePoint.objects.count() - before


def _with_prices(record: MarketRecord, prices: list[PriceRecord], *, title: str) -> MarketRecord:
    from dataclasses import replace

    return replace(record, title=title, prices=prices, prices_are_snapshot=False)


def test_payloads_json_cannot_serialise_natively_still_store_and_hash_stably(source) -> None:
    # Integers beyond 64 bits are valid JSON that json.loads keeps exact.
    huge = 10**30
    listing = records(2, extra={"supply": huge, "z": 1, "a": [huge]})
    assert market_poll_records(source=source, records=listing, now=NOW).error == ""
    assert Market.objects.get(external_id="700000").raw["extra"] == {"supply": huge, "z": 1, "a": [huge]}
    again = market_poll_records(source=source, records=records(2, extra={"a": [huge], "z": 1, "supply": huge}), now=NOW)
    assert again.skip_reasons == {"unchanged market": 2}


def test_canonical_json_ignores_key_order() -> None:
    assert canonical_json({"b": 1, "a": {"d": 2, "c": 3}}) == canonical_json({"a": {"c": 3, "d": 2}, "b": 1})
    assert canonical_json({"b": 10**30, "a": 1}) == canonical_json({"a": 1, "b": 10**30})


def test_markets_whose_ids_hold_json_and_sql_special_characters_are_found_again(source) -> None:
    # Stored markets and their questions are looked up by id in bulk (one JSON parameter on
    # PostgreSQL): ids with quotes, backslashes, commas, braces and non-BMP characters must
    # match exactly, or the second poll would rewrite them or insert their questions twice.
    ids = ['q"uote', "back\\slash", "comma,{brace}", "ünï \U0001f600 code", "[1, 2]", "NULL"]
    listing = [parse_market(gamma_market(6 + i, id=external_id), now=NOW) for i, external_id in enumerate(ids)]
    first = market_poll_records(source=source, records=listing, now=NOW)
    assert first.error == "" and Market.objects.count() == len(ids)
    assert Question.objects.count() == len(ids)

    again = market_poll_records(source=source, records=listing, now=NOW + timedelta(minutes=15))
    assert again.error == "" and again.added == 0
    assert again.skip_reasons == {"unchanged market": len(ids)}
    assert sorted(Market.objects.values_list("external_id", flat=True)) == sorted(ids)
    assert sorted(Question.objects.values_list("external_id", flat=True)) == sorted(f"polymarket:{i}" for i in ids)


def test_content_hashes_stored_by_earlier_releases_still_match(source) -> None:
    # Digests stored before the payload column became json: an unchanged market must still be
    # recognised, or the first poll after an upgrade would rewrite every market.
    earlier = {
        "700000": "4297970dabb7cb3f183a30307c80fc82f899bb52",
        "700001": "800ab176334e7f76b8b8e9dca960b5e67e05c634",
    }
    listing = records(2, extra={"supply": 10**30})
    market_poll_records(source=source, records=listing, now=NOW)
    assert dict(Market.objects.values_list("external_id", "content_hash")) == earlier
    assert market_poll_records(source=source, records=listing, now=NOW).skip_reasons == {"unchanged market": 2}
