"""Bulk writes with PostgreSQL's binary COPY.

Text COPY makes Python format every value as text and PostgreSQL parse it back; binary COPY
with the columns' types known up front lets psycopg's C dumpers pack each value directly, which
costs a fifth of the client time on wide rows (measured on the market rows of a poll). The types
come from the catalog, once per table and column list.

jsonb columns take JSON text (``bytes`` or ``str``, e.g. already serialised for a content
digest) or the ``Json``/``Jsonb`` wrappers Django's ``get_db_prep_save`` returns; the text is
sent as is, so a caller that serialised a value once does not pay for it twice.

``staging_table`` holds copied rows that may clash with stored ones, for an INSERT ... ON
CONFLICT; ``copy_rows_skipping_clashes`` uses it to leave such rows out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection
from django.db.models import Model
from psycopg.adapt import Dumper
from psycopg.postgres import types as postgres_types
from psycopg.pq import Format
from psycopg.types.json import Json, Jsonb

JSONB_OID = postgres_types["jsonb"].oid
_JSONB_VERSION = b"\x01"

# (database name, table, columns) -> type oids of the columns, in order.
_column_types: dict[tuple[str, str, tuple[str, ...]], list[int]] = {}


def _json_text(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (Json, Jsonb)):
        text = (value.dumps or json.dumps)(value.obj)
        return text.encode() if isinstance(text, str) else bytes(text)
    raise TypeError(f"a jsonb column takes JSON text or a Json wrapper, got {type(value).__name__}")


class _JsonbTextDumper(Dumper):
    """jsonb's binary format: a version byte, then the JSON text."""

    format = Format.BINARY
    oid = JSONB_OID

    def dump(self, obj: Any) -> bytes:
        return _JSONB_VERSION + _json_text(obj)


def column_types(cursor: Any, *, table: str, columns: Sequence[str]) -> list[int]:
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


def copy_rows(
    cursor: Any, *, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], types_of: str | None = None
) -> None:
    """COPY ``rows`` (values in ``columns`` order) into ``table`` in binary format.

    ``types_of`` names the table whose column types to use when ``table`` is a temporary copy of
    it (a staging table). Values must suit their column's type: ``int`` for integer columns,
    ``float`` for double precision, aware ``datetime`` for timestamptz, JSON text for jsonb.
    """
    types = column_types(cursor, table=types_of or table, columns=columns)
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
def staging_table(cursor: Any, *, model: type[Model], columns: Iterable[str]) -> Iterator[str]:
    """A session-private, empty table with ``columns`` of ``model``'s table (same types, no
    constraints), filled by COPY and dropped after use (or with the transaction). Rows copied
    into it reach the real table through one INSERT ... SELECT, which can say ON CONFLICT."""
    name = f"hindsight_staging_{model._meta.model_name}"
    table = connection.ops.quote_name(model._meta.db_table)
    cursor.execute(f"DROP TABLE IF EXISTS {name}")
    cursor.execute(
        f"CREATE TEMPORARY TABLE {name} ON COMMIT DROP AS SELECT {', '.join(columns)} FROM {table} WITH NO DATA"
    )
    yield name
    cursor.execute(f"DROP TABLE {name}")


def copy_rows_skipping_clashes(
    cursor: Any, *, model: type[Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    """COPY ``rows`` into ``model``'s table, leaving out those that clash with a stored row on a
    unique constraint, and return how many were inserted: through a staging table and one
    INSERT ... ON CONFLICT DO NOTHING, whose row count is exactly the number of new rows."""
    table = model._meta.db_table
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    with staging_table(cursor, model=model, columns=columns) as staging:
        copy_rows(cursor, table=staging, types_of=table, columns=columns, rows=rows)
        cursor.execute(
            f"INSERT INTO {connection.ops.quote_name(table)} ({names}) SELECT {names} FROM {staging} "
            "ON CONFLICT DO NOTHING"
        )
        return int(cursor.rowcount)
