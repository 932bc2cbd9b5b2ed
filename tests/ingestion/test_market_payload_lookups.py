"""Someone exploring the data can look inside stored market payloads through the ORM: key,
nested-key, comparison, key-existence, equality and (on PostgreSQL) containment lookups find
the markets whose payload matches, and payload keys can be selected and ordered by."""

from __future__ import annotations

import pytest
from django.db import connection

from ingestion.models import Market
from ingestion.services.market_store import market_upsert_many
from tests.factories import SourceFactory
from tests.ingestion.conftest import NOW
from tests.ingestion.test_market_bulk_store import records

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


@pytest.fixture
def polled() -> list[str]:
    """Four polled Polymarket markets (ids 700000-700003); the first lists three outcomes."""
    stored = market_upsert_many(source=SourceFactory(kind="polymarket"), records=records(4), now=NOW)
    return sorted(stored.market_ids)


def ids(queryset) -> list[str]:
    return sorted(queryset.values_list("external_id", flat=True))


def test_a_key_lookup_finds_the_markets_whose_payload_has_that_value(polled: list[str]) -> None:
    assert ids(Market.objects.filter(raw__slug="indicator-2")) == ["700002"]
    assert ids(Market.objects.filter(raw__slug__startswith="indicator-")) == polled
    assert ids(Market.objects.filter(raw__active=True, raw__closed=False)) == polled
    assert ids(Market.objects.exclude(raw__slug="indicator-2")) == ["700000", "700001", "700003"]


def test_nested_keys_array_positions_and_numeric_comparisons_work(polled: list[str]) -> None:
    assert ids(Market.objects.filter(raw__nested__b__1=2.5)) == polled
    assert ids(Market.objects.filter(raw__volumeNum__gt=1050)) == ["700002", "700003"]
    assert ids(Market.objects.filter(raw__liquidityNum__lte=1100)) == ["700000", "700001"]


def test_key_existence_and_whole_payload_equality(polled: list[str]) -> None:
    assert ids(Market.objects.filter(raw__has_key="clobTokenIds")) == polled
    assert ids(Market.objects.filter(raw__has_keys=["slug", "nested"])) == polled
    assert not Market.objects.filter(raw__has_key="resolvedBy").exists()
    one = Market.objects.get(external_id="700001")
    assert ids(Market.objects.filter(raw=one.raw)) == ["700001"]
    assert ids(Market.objects.filter(raw__isnull=False)) == polled


def test_payload_keys_can_be_selected_and_ordered_by(polled: list[str]) -> None:
    slugs = list(Market.objects.order_by("-raw__volumeNum").values_list("raw__slug", flat=True))
    assert slugs == ["indicator-3", "indicator-2", "indicator-1", "indicator-0"]
    assert Market.objects.filter(external_id="700000").values_list("raw__nested__b", flat=True).get() == [
        1,
        2.5,
        None,
        True,
    ]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="containment is a PostgreSQL lookup")
def test_containment_lookups_on_postgresql(polled: list[str]) -> None:
    assert ids(Market.objects.filter(raw__contains={"slug": "indicator-3", "active": True})) == ["700003"]
    assert ids(Market.objects.filter(raw__nested__contains={"b": [2.5]})) == polled
    assert not Market.objects.filter(raw__contained_by={"slug": "indicator-3"}).exists()
