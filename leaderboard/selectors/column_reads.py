"""Columns of many rows as numpy arrays: how the standings read grades and forecasts.

On PostgreSQL each row is sent as one fixed-width binary record (NULL numbers as NaN), the records
of up to ``_CHUNK_IDS`` rows concatenated by string_agg into one bytea: a handful of values cross the
wire instead of 10^6 rows, and numpy reads the records with one np.frombuffer. Elsewhere the plain
columns are fetched and converted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from django.core.exceptions import EmptyResultSet
from django.db import connection, transaction
from django.db.models import F, Max, Min

from common.bulk import on_postgresql

# (name, field path, SQL of its binary send with {} for the column, numpy dtype of that send)
Field = tuple[str, str, str, str]
# Rows per bytea (by id): at most ~170 MB each, far below PostgreSQL's 1 GB limit.
_CHUNK_IDS = 1 << 21
_WORK_MEM = "64MB"


def int_field(name: str, path: str) -> Field:
    return (name, path, "int8send({}::int8)", ">i8")


def bool_field(name: str, path: str) -> Field:
    return (name, path, "boolsend({})", "u1")


def float_field(name: str, path: str) -> Field:
    """A number column; NULL reads as NaN."""
    return (name, path, "float8send(COALESCE({}::float8, 'NaN'::float8))", ">f8")


def flag_field(name: str, path: str) -> Field:
    """A nullable boolean read as a number: true 1, false 0, NULL NaN."""
    return (name, path, "float8send(COALESCE({}::int4::float8, 'NaN'::float8))", ">f8")


def epoch_field(name: str, path: str) -> Field:
    """A timestamp read as seconds since the epoch."""
    return (name, path, "float8send(extract(epoch from {})::float8)", ">f8")


def _float(value: Any) -> float:
    if value is None:
        return math.nan
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if isinstance(value, datetime):
        # SQLite hands back naive UTC datetimes
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    return float(value)


def columns_sql(
    fields: Sequence[Field], queryset: Any, *, ids: tuple[int, int] | None = None
) -> tuple[str, tuple[Any, ...]]:
    """SQL reading ``fields`` of the rows of ``queryset`` (with primary keys in ``ids``, [lo, hi)).

    On PostgreSQL: one bytea, the concatenated fixed-width records of the rows. Elsewhere: the
    plain columns.
    """
    if ids is not None:
        queryset = queryset.filter(pk__gte=ids[0], pk__lt=ids[1])
    paths = {f"c{i}": F(path) for i, (_, path, _, _) in enumerate(fields)}
    sql, params = queryset.order_by().values(**paths).query.sql_with_params()
    if not on_postgresql():
        return sql, tuple(params)
    record = " || ".join(send.format(f'rows."c{i}"') for i, (_, _, send, _) in enumerate(fields))
    return f"SELECT string_agg({record}, ''::bytea) FROM ({sql}) AS rows", tuple(params)


def read_columns(fields: Sequence[Field], queryset: Any) -> dict[str, npt.NDArray[Any]]:
    """The ``fields`` of the rows of ``queryset`` as native numpy arrays (row order unspecified)."""
    out: dict[str, npt.NDArray[Any]] = {}
    try:
        columns_sql(fields, queryset)
    except EmptyResultSet:  # the queryset can hold no row (an empty IN list, say)
        return {name: np.zeros(0, dtype=np.dtype(dtype).newbyteorder("=")) for name, _, _, dtype in fields}
    if not on_postgresql():
        sql, params = columns_sql(fields, queryset)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        cols = list(zip(*rows, strict=True)) if rows else [()] * len(fields)
        for (name, _, _, dtype), col in zip(fields, cols, strict=True):
            kind = np.dtype(dtype)
            values = [_float(v) for v in col] if kind.kind == "f" else list(col)
            out[name] = np.asarray(values, dtype=kind.newbyteorder("="))
        return out
    record = np.dtype([(f"v{i}", dtype) for i, (_, _, _, dtype) in enumerate(fields)])
    # Bounds of every id (an index lookup each) rather than of the filtered rows (a scan).
    bounds = queryset.model.objects.order_by().aggregate(lo=Min("pk"), hi=Max("pk"))
    chunks: list[bytes] = []
    if bounds["lo"] is not None:
        with transaction.atomic():
            connection.ensure_connection()
            # Django's cursors bind client-side, which rules out binary results: a plain psycopg
            # cursor on the same connection (so inside the same transaction) fetches raw bytes.
            with psycopg.Cursor(connection.connection) as cursor:
                # The grade/forecast hash join spills to disk in batches at the default 4 MB.
                cursor.execute(f"SET LOCAL work_mem = '{_WORK_MEM}'")
                for lo in range(bounds["lo"], bounds["hi"] + 1, _CHUNK_IDS):
                    sql, params = columns_sql(fields, queryset, ids=(lo, lo + _CHUNK_IDS))
                    cursor.execute(sql, params or None, binary=True)
                    row = cursor.fetchone()
                    if row is not None and row[0] is not None:
                        chunks.append(bytes(row[0]))
    data = b"".join(chunks)
    del chunks
    if len(data) % record.itemsize:
        raise RuntimeError("records are not fixed-width: a NULL or variable-width value slipped in")
    records = np.frombuffer(data, dtype=record)
    for i, (name, _, _, dtype) in enumerate(fields):
        out[name] = records[f"v{i}"].astype(np.dtype(dtype).newbyteorder("="))
    return out
