"""New keys for copied rows come from the table's own sequence while Python prepares the rows
(``sequence_values_meanwhile``): they are distinct, fresh, never handed to a later ORM insert,
the block's Python work and queries run as usual, and an error in the block loses nothing else
of the transaction."""

from __future__ import annotations

import pytest
from django.db import ProgrammingError, connection, transaction

from ingestion.models import Market
from ingestion.pgcopy import sequence_values_meanwhile
from tests.factories import MarketFactory

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="pipelined queries are PostgreSQL's"),
]


def test_keys_are_new_distinct_and_never_given_to_a_later_insert() -> None:
    earlier = MarketFactory(external_id="earlier")
    with transaction.atomic():
        with sequence_values_meanwhile(table=Market._meta.db_table, count=500) as values:
            prepared = [f"market {n}" for n in range(500)]
            keys = values()
        later = MarketFactory(external_id="later")
        Market.objects.bulk_create(
            [
                Market(pk=key, platform="polymarket", external_id=name, title=name)
                for key, name in zip(keys, prepared, strict=True)
            ]
        )
    assert len(set(keys)) == 500
    assert min(keys) > earlier.pk
    assert later.pk not in keys
    assert Market.objects.count() == 502


def test_a_query_inside_the_block_still_answers() -> None:
    MarketFactory(external_id="stored")
    with transaction.atomic(), sequence_values_meanwhile(table=Market._meta.db_table, count=3) as values:
        assert Market.objects.filter(external_id="stored").count() == 1
        assert len(values()) == 3


def test_an_error_in_the_block_propagates_and_the_transaction_rolls_back() -> None:
    with pytest.raises(ZeroDivisionError), transaction.atomic():
        MarketFactory(external_id="rolled back")
        with sequence_values_meanwhile(table=Market._meta.db_table, count=3):
            _ = 1 / 0
    assert not Market.objects.exists()
    assert MarketFactory(external_id="afterwards").pk > 0


def test_an_unknown_table_is_named() -> None:
    with (
        pytest.raises(ProgrammingError, match="no_such_table"),
        transaction.atomic(),
        sequence_values_meanwhile(table="no_such_table", count=1) as values,
    ):
        values()
