"""Binary COPY (PostgreSQL) writes exactly what the ORM would: JSON given as text, as bytes or
as Django's prepared ``Jsonb`` value, aware datetimes, NULLs and awkward text all read back
equal, as do rows built from values by column (``copy_row_builder``); a staging copy of a table
takes that table's column types; a bad column or value is refused with a message naming it, and
nothing of the batch is kept."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DataError, IntegrityError, connection, transaction
from psycopg.types.json import Jsonb

from common.bulk import copy_row_builder, copy_rows
from ingestion.models import Market
from tests.factories import SourceFactory
from tests.ingestion.conftest import NOW

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="binary COPY is PostgreSQL's"),
]

COLUMNS = (
    "platform",
    "external_id",
    "source_id",
    "title",
    "outcomes",
    "raw",
    "close_at",
    "bettors",
    "url",
    "status",
    "content_hash",
    "updated_at",
)
AWKWARD = 'Tab\t, newline\n, backslash \\, quote ", NUL-free ünïcode ✓'


def _row(external_id: str, *, source_id: int | None, outcomes: object, raw: object) -> tuple[object, ...]:
    close_at = NOW + timedelta(days=3)
    return ("polymarket", external_id, source_id, AWKWARD, outcomes, raw, close_at, None, "", "open", "", NOW)


def test_json_text_bytes_and_prepared_json_round_trip() -> None:
    source = SourceFactory(kind="polymarket")
    prepared = Market._meta.get_field("raw").get_db_prep_save({"k": [1, 2.5, None]}, connection=connection)
    prepared_outcomes = Market._meta.get_field("outcomes").get_db_prep_save(["A", "B", "C"], connection=connection)
    assert isinstance(prepared, Jsonb) and isinstance(prepared_outcomes, Jsonb)
    with connection.cursor() as cursor:
        copy_rows(
            cursor,
            table=Market._meta.db_table,
            columns=COLUMNS,
            rows=[
                _row("a", source_id=source.pk, outcomes=b'["Yes","No"]', raw=b'{"z":1,"a":{"b":"\\u00e9"}}'),
                _row("b", source_id=None, outcomes=prepared_outcomes, raw=prepared),
                _row("c", source_id=None, outcomes='["A","B","C"]', raw='"a JSON string"'),
            ],
        )
    a, b, c = Market.objects.order_by("external_id")
    assert (a.title, a.outcomes, a.raw, a.source_id) == (AWKWARD, ["Yes", "No"], {"z": 1, "a": {"b": "é"}}, source.pk)
    assert (b.outcomes, b.raw, b.source_id, b.bettors) == (["A", "B", "C"], {"k": [1, 2.5, None]}, None, None)
    assert (c.outcomes, c.raw) == (["A", "B", "C"], "a JSON string")
    assert a.close_at == NOW + timedelta(days=3) and a.close_at.utcoffset() == timedelta(0)


def test_rows_built_from_values_by_column_read_back_equal() -> None:
    source = SourceFactory(kind="polymarket")
    build = copy_row_builder(Market, COLUMNS)
    given = [
        dict(zip(COLUMNS, _row("a", source_id=source.pk, outcomes=["Yes", "No"], raw="a JSON string"), strict=True)),
        dict(zip(COLUMNS, _row("b", source_id=None, outcomes=[], raw={"big": 10**30, "é": [None]}), strict=True)),
        # bytes are JSON serialised already.
        dict(zip(COLUMNS, _row("c", source_id=None, outcomes=b'["A"]', raw=b'{"k": 1}'), strict=True)),
    ]
    with connection.cursor() as cursor:
        copy_rows(cursor, table=Market._meta.db_table, columns=COLUMNS, rows=[build(values) for values in given])
    a, b, c = Market.objects.order_by("external_id")
    assert (a.title, a.outcomes, a.raw, a.source_id) == (AWKWARD, ["Yes", "No"], "a JSON string", source.pk)
    assert (b.outcomes, b.raw, b.bettors) == ([], {"big": 10**30, "é": [None]}, None)
    assert (c.outcomes, c.raw) == (["A"], {"k": 1})
    with pytest.raises(ValueError, match="Market has no column nonsense"):
        copy_row_builder(Market, ("title", "nonsense"))


def test_a_staging_table_takes_the_real_tables_types() -> None:
    table = Market._meta.db_table
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMPORARY TABLE staged ON COMMIT DROP AS SELECT {', '.join(COLUMNS)} FROM {table} WITH NO DATA"
        )
        copy_rows(
            cursor,
            table="staged",
            types_of=table,
            columns=COLUMNS,
            rows=[_row("s", source_id=None, outcomes=b'["Yes","No"]', raw=b"{}")],
        )
        cursor.execute("SELECT title, outcomes ->> 1 FROM staged")
        assert cursor.fetchall() == [(AWKWARD, "No")]


def test_an_unknown_column_is_named() -> None:
    with connection.cursor() as cursor, pytest.raises(ValueError, match="has no column nonsense"):
        copy_rows(cursor, table=Market._meta.db_table, columns=("platform", "nonsense"), rows=[])


@pytest.mark.parametrize("raw", [b"{not json", "x" * 10])
def test_bad_json_is_refused_and_nothing_is_kept(raw: object) -> None:
    rows = [_row("ok", source_id=None, outcomes=b"[]", raw=b"{}"), _row("bad", source_id=None, outcomes=b"[]", raw=raw)]
    with pytest.raises(DataError, match="json"), transaction.atomic(), connection.cursor() as cursor:
        copy_rows(cursor, table=Market._meta.db_table, columns=COLUMNS, rows=rows)
    assert not Market.objects.exists()


def test_a_duplicate_key_fails_the_whole_copy() -> None:
    rows = [_row("same", source_id=None, outcomes=b"[]", raw=b"{}")] * 2
    with (
        pytest.raises(IntegrityError, match="market_unique_external"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        copy_rows(cursor, table=Market._meta.db_table, columns=COLUMNS, rows=rows)
    assert not Market.objects.exists()
