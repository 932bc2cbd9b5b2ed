"""A market's raw payload is kept as the platform's JSON document: whatever JSON value was
stored reads back equal through the ORM (a JSON string stays a string, never decoded twice),
and on PostgreSQL the column is ``json``, so storing a payload does not build jsonb's tree."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from ingestion.markets.polymarket import parse_market
from ingestion.models import Market
from ingestion.services.markets import canonical_json, market_upsert_many
from tests.factories import SourceFactory
from tests.ingestion.conftest import NOW
from tests.ingestion.test_market_bulk_store import gamma_market

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]

PAYLOADS: list[Any] = [
    {"id": "1", "nested": {"é": [1, 2.5, None, True]}, "big": 10**30},
    ["a", {"b": None}],
    "123",
    '{"looks": "like an object"}',
    42,
]


@pytest.mark.parametrize("payload", PAYLOADS, ids=["object", "array", "numeric-string", "json-string", "number"])
def test_any_json_payload_reads_back_equal_through_the_orm(payload: Any) -> None:
    market = Market.objects.create(platform=Market.Platform.POLYMARKET, external_id="m", title="Will it?", raw=payload)
    stored = Market.objects.get(pk=market.pk)
    assert stored.raw == payload and type(stored.raw) is type(payload)
    assert Market.objects.filter(pk=market.pk).values_list("raw", flat=True).get() == payload

    stored.raw = {"changed": payload}
    stored.save(update_fields=["raw"])
    assert Market.objects.get(pk=market.pk).raw == {"changed": payload}


def test_a_polled_payload_is_stored_as_canonical_json() -> None:
    record = parse_market(gamma_market(7), now=NOW)
    market_upsert_many(source=SourceFactory(kind="polymarket"), records=[record], now=NOW)
    market = Market.objects.get(external_id=record.external_id)
    assert market.raw == record.raw
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT raw::text FROM ingestion_market WHERE id = %s", [market.pk])
            (text,) = cursor.fetchone()
        assert text.encode() == canonical_json(record.raw)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL column types")
def test_the_payload_column_is_json_and_the_outcomes_stay_jsonb() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'ingestion_market' AND column_name IN ('raw', 'outcomes') ORDER BY column_name"
        )
        assert cursor.fetchall() == [("outcomes", "jsonb"), ("raw", "json")]
