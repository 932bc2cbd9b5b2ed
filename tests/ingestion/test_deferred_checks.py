"""A bulk write's foreign-key checks run on PostgreSQL while Python prepares the next rows
(``deferred_checks_meanwhile``), not at commit: a dangling reference still fails the write
with a clear IntegrityError and keeps nothing, later writes are checked at commit again, and
outside a transaction nothing changes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction

from ingestion.models import Market, PricePoint
from ingestion.pgcopy import deferred_checks_meanwhile
from tests.factories import MarketFactory, SourceFactory
from tests.ingestion.conftest import NOW

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="pipelined constraint checks are PostgreSQL's"),
]


def test_rows_written_around_the_block_are_kept() -> None:
    source = SourceFactory(kind="polymarket")
    with transaction.atomic():
        market = Market.objects.create(platform="polymarket", external_id="m", title="m", source=source)
        PricePoint.objects.create(market=market, outcome="YES", time=NOW, probability=0.4)
        with deferred_checks_meanwhile():
            prepared = [("YES", NOW + timedelta(hours=h), 0.5) for h in range(1, 4)]
        PricePoint.objects.bulk_create(
            [PricePoint(market=market, outcome=o, time=t, probability=p) for o, t, p in prepared]
        )
    assert PricePoint.objects.filter(market=market).count() == 4


def test_a_dangling_reference_fails_as_the_block_ends_and_nothing_is_kept() -> None:
    after_block = False
    with pytest.raises(IntegrityError, match="ingestion_market"), transaction.atomic():
        MarketFactory(external_id="kept only if the transaction commits")
        PricePoint.objects.create(market_id=987654321, outcome="YES", time=NOW, probability=0.5)
        with deferred_checks_meanwhile():
            pass
        after_block = True
    # Checked as the block ended, not left for the commit.
    assert not after_block
    assert not Market.objects.exists() and not PricePoint.objects.exists()


def test_writes_after_the_block_are_deferred_to_commit_again() -> None:
    # A price may be written before its market within the transaction, as Django's deferred
    # foreign keys allow; the block must not leave the constraints immediate.
    with transaction.atomic():
        with deferred_checks_meanwhile():
            pass
        with connection.cursor() as cursor:
            cursor.execute("SELECT nextval(pg_get_serial_sequence('ingestion_market', 'id'))")
            (market_id,) = cursor.fetchone()
        PricePoint.objects.create(market_id=market_id, outcome="YES", time=NOW, probability=0.5)
        Market.objects.create(id=market_id, platform="polymarket", external_id="late", title="late")
    assert PricePoint.objects.get().market.external_id == "late"


def test_a_query_inside_the_block_still_answers() -> None:
    with transaction.atomic():
        MarketFactory(external_id="counted")
        with deferred_checks_meanwhile():
            assert Market.objects.filter(external_id="counted").count() == 1
        MarketFactory(external_id="after")
    assert Market.objects.count() == 2


def test_an_error_in_the_block_propagates_and_rolls_back() -> None:
    with pytest.raises(ZeroDivisionError), transaction.atomic():
        MarketFactory(external_id="rolled back")
        with deferred_checks_meanwhile():
            _ = 1 / 0
    assert not Market.objects.exists()


def test_outside_a_transaction_it_changes_nothing() -> None:
    with deferred_checks_meanwhile():
        market = MarketFactory(external_id="autocommit")
    assert Market.objects.filter(pk=market.pk).exists()
