"""A market's raw payload is kept as the platform's JSON document: whatever JSON value was
stored reads back equal through the ORM (a JSON string stays a string, never decoded twice)."""

from __future__ import annotations

from typing import Any

import pytest

from ingestion.models import Market

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
