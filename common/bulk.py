"""Bulk jobs (polls, grading runs): rows written with PostgreSQL's binary COPY, and Python's
cyclic garbage collector paused while a job runs. Each was measured on the job a user waits for
(a market poll, a feed poll, a regrade) and kept because it made that job at least a fifth
faster; the other bulk-write tricks that once lived beside them did not, and went.

Binary COPY: psycopg packs each value with its C dumpers for column types read from the catalog
once per table and column list, where an INSERT has Django prepare values field by field and
PostgreSQL parse them back. Rows reach a table directly (``copy_rows``) or through a staging
table and one INSERT ... SELECT that can say ON CONFLICT (``copy_rows_skipping_clashes``,
``copy_rows_upserting``). ``copy_row_builder`` turns a row's values by column into a COPY row,
one conversion per field type; a JSON value given as ``bytes`` is taken as serialised already
(e.g. for a content digest), so it is not serialised twice.

Every function here is PostgreSQL's; callers keep the ORM path for other databases and ask
``on_postgresql`` which path applies (the one place that decides it).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import orjson
from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from psycopg.adapt import Dumper
from psycopg.postgres import types as postgres_types
from psycopg.pq import Format
from psycopg.types.json import Json, Jsonb

_JSONB_VERSION = b"\x01"

# (database name, table, columns) -> type oids of the columns, in order.
_column_types: dict[tuple[str, str, tuple[str, ...]], list[int]] = {}


def on_postgresql(using: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether the database ``using`` is PostgreSQL, where the bulk paths apply."""
    return connections[using].vendor == "postgresql"


def _dumps(value: Any) -> bytes:
    try:
        # NumPy scalars (a grade's scores come out of NumPy) are written as the numbers they hold.
        return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY)
    except orjson.JSONEncodeError:
        # orjson refuses what json.loads can produce: integers beyond 64 bits, lone surrogates.
        return json.dumps(value).encode()


def _json_text(value: Any) -> bytes:
    """What a jsonb column is given, as JSON text: text (``bytes``/``str``) is taken as JSON
    already, a ``Json``/``Jsonb`` wrapper or any other value is serialised."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, Json | Jsonb):
        text = (value.dumps or json.dumps)(value.obj)
        return text.encode() if isinstance(text, str) else bytes(text)
    return _dumps(value)


def _json_value(value: Any) -> bytes:
    """A JSONField's value as JSON text; ``bytes`` are taken as serialised already (a string is
    a JSON string)."""
    return value if isinstance(value, bytes) else _dumps(value)


class _JsonbTextDumper(Dumper):
    """jsonb's binary format: a version byte, then the JSON text."""

    format = Format.BINARY
    oid = postgres_types["jsonb"].oid

    def dump(self, obj: Any) -> bytes:
        return _JSONB_VERSION + _json_text(obj)


def _column_types_of(cursor: Any, *, table: str, columns: Sequence[str]) -> list[int]:
    """The type oids of ``columns`` of ``table`` (unquoted names), read from the catalog once."""
    key = (str(connection.settings_dict["NAME"]), table, tuple(columns))
    found = _column_types.get(key)
    if found is None:
        cursor.execute(
            "SELECT attname, atttypid FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
            [connection.ops.quote_name(table)],
        )
        by_name = dict(cursor.fetchall())
        unknown = [c for c in columns if c not in by_name]
        if unknown:
            raise ValueError(f"table {table} has no column {', '.join(unknown)}")
        found = _column_types[key] = [int(by_name[c]) for c in columns]
    return found


def _nullable(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else convert(value)


def _identity(value: Any) -> Any:
    return value


def _converter(field: models.Field[Any, Any]) -> Callable[[Any], Any]:
    """The COPY value of a field's Python value, as ``get_db_prep_save`` would prepare it."""
    if isinstance(field, models.JSONField):
        return _nullable(_json_value)
    if isinstance(field, models.FloatField):
        return _nullable(float)
    if isinstance(field, models.BooleanField):
        return _nullable(bool)
    if isinstance(field, models.IntegerField | models.ForeignKey):
        return _nullable(int)
    if isinstance(field, models.CharField | models.TextField):
        return _nullable(str)
    if isinstance(field, models.DateTimeField):
        return _identity  # aware datetimes go to timestamptz as they are
    return lambda value: field.get_db_prep_save(value, connection=connection)


def copy_row_builder(
    model: type[models.Model], columns: Sequence[str]
) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """A function turning a row's values by column name into a COPY row of ``columns``."""
    by_column = {field.column: field for field in model._meta.concrete_fields}
    unknown = [c for c in columns if c not in by_column]
    if unknown:
        raise ValueError(f"{model.__name__} has no column {', '.join(unknown)}")
    plan = [(column, _converter(by_column[column])) for column in columns]
    return lambda values: tuple([convert(values[column]) for column, convert in plan])


def copy_rows(
    cursor: Any, *, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], types_of: str | None = None
) -> None:
    """COPY ``rows`` (values in ``columns`` order) into ``table`` in binary format.

    ``types_of`` names the table whose column types to use when ``table`` is a temporary copy of
    it (a staging table). Values must suit their column's type: ``int`` for integer columns,
    ``float`` for double precision, aware ``datetime`` for timestamptz, JSON for jsonb.
    """
    types = _column_types_of(cursor, table=types_of or table, columns=columns)
    raw_cursor = getattr(cursor, "cursor", cursor)
    raw_cursor.adapters.register_dumper(None, _JsonbTextDumper)
    quote = connection.ops.quote_name
    statement = f"COPY {quote(table)} ({', '.join(quote(c) for c in columns)}) FROM STDIN (FORMAT BINARY)"
    # Django's exception classes (IntegrityError, DataError), as for any other query.
    with connection.wrap_database_errors, raw_cursor.copy(statement) as copy:
        copy.set_types(types)
        write = copy.write_row
        for row in rows:
            write(row)


@contextmanager
def _staging_table(cursor: Any, *, model: type[models.Model], columns: Sequence[str]) -> Iterator[str]:
    """A session-private, empty table with ``columns`` of ``model``'s table (same types, no
    constraints), filled by COPY and dropped after use (or with the transaction)."""
    name = f"hindsight_staging_{model._meta.model_name}"
    table = connection.ops.quote_name(model._meta.db_table)
    cursor.execute(f"DROP TABLE IF EXISTS {name}")
    cursor.execute(
        f"CREATE TEMPORARY TABLE {name} ON COMMIT DROP AS SELECT {', '.join(columns)} FROM {table} WITH NO DATA"
    )
    yield name
    cursor.execute(f"DROP TABLE {name}")


def _copy_through_staging(
    cursor: Any, *, model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]], conflict: str
) -> tuple[int, list[tuple[Any, ...]]]:
    """The row count of the INSERT ... SELECT from the staging table, and what it returned."""
    table = model._meta.db_table
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    with _staging_table(cursor, model=model, columns=columns) as staging:
        copy_rows(cursor, table=staging, types_of=table, columns=columns, rows=rows)
        cursor.execute(
            f"INSERT INTO {connection.ops.quote_name(table)} ({names}) SELECT {names} FROM {staging} {conflict}"
        )
        return int(cursor.rowcount), (list(cursor.fetchall()) if "RETURNING" in conflict else [])


def copy_rows_skipping_clashes(
    cursor: Any, *, model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    """COPY ``rows`` into ``model``'s table, leaving out those that clash with a stored row on a
    unique constraint, and return how many were inserted (exactly: the INSERT's row count)."""
    inserted, _ = _copy_through_staging(
        cursor, model=model, columns=columns, rows=rows, conflict="ON CONFLICT DO NOTHING"
    )
    return inserted


def copy_rows_upserting(
    cursor: Any,
    *,
    model: type[models.Model],
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    unique: Sequence[str],
    returning: Sequence[str],
) -> list[tuple[Any, ...]]:
    """COPY ``rows`` into ``model``'s table, updating the stored row where one clashes on the
    ``unique`` columns (as ``bulk_create(update_conflicts=True)`` does); returns the
    ``returning`` columns of every row written."""
    quote = connection.ops.quote_name
    updates = ", ".join(f"{quote(c)} = EXCLUDED.{quote(c)}" for c in columns if c not in unique)
    conflict = (
        f"ON CONFLICT ({', '.join(quote(c) for c in unique)}) DO UPDATE SET {updates} "
        f"RETURNING {', '.join(quote(c) for c in returning)}"
    )
    _, written = _copy_through_staging(cursor, model=model, columns=columns, rows=rows, conflict=conflict)
    return written


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for one bulk job.

    A poll or a grading run allocates tens of thousands of small objects (decoded payloads,
    records, rows, event dicts); each allocation burst triggers collections that re-scan
    everything still alive, while these jobs create no reference cycles worth collecting early.
    Reference counting still frees everything as usual, and the collector resumes afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
