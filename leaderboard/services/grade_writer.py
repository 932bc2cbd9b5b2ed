"""Grade rows stored: each batch of new grade versions replaces the forecasts' current grades in
one transaction.

A grade row is a dict of Grade column -> value (``blank_grade_row`` gives every column at its
default; each Grade column is named after its attribute, so a row also builds a ``Grade``). On
PostgreSQL rows go in with binary COPY (``common.bulk``) and, outside a caller's transaction, a
background thread writes one batch while the run scores the next; both were measured on a
regrade run and kept because together they made it well over a fifth faster than Django's
``bulk_create`` in place. Other databases get ``bulk_create``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from django.db import connection, connections, transaction

from common.bulk import copy_row_builder, copy_rows, on_postgresql
from leaderboard.models import Grade

logger = logging.getLogger(__name__)

_GRADE_FIELDS = tuple(f for f in Grade._meta.concrete_fields if not f.primary_key)
assert all(f.column == f.attname for f in _GRADE_FIELDS), "grade rows are keyed by column and build a Grade"
GRADE_COLUMNS: tuple[str, ...] = tuple(f.attname for f in _GRADE_FIELDS)
_copy_row = copy_row_builder(Grade, GRADE_COLUMNS)


def blank_grade_row() -> dict[str, Any]:
    """Every Grade column but the primary key, at its default."""
    return {f.attname: f.get_default() for f in _GRADE_FIELDS}


@transaction.atomic
def write_grade_batch(*, forecast_ids: Sequence[int], rows: list[dict[str, Any]], replaces_current: bool) -> None:
    """Mark the batch's current grades not current and insert the new versions."""
    if replaces_current:
        Grade.objects.filter(forecast_id__in=forecast_ids, is_current=True).update(is_current=False)
    if not rows:
        return
    if not on_postgresql():
        Grade.objects.bulk_create([Grade(**row) for row in rows], batch_size=500)
        return
    # The default database: the one transaction.atomic above wraps.
    with connection.cursor() as cursor:
        copy_rows(cursor, table=Grade._meta.db_table, columns=GRADE_COLUMNS, rows=map(_copy_row, rows))


class GradeBatchWriter:
    """Writes grade batches (``write_grade_batch``) for one run.

    On PostgreSQL, when the caller holds no transaction, batches are written by one background
    thread over its own connection, so the database stores a batch while this thread scores the
    next one (on two cores the two overlap instead of adding up). At most one batch is in flight;
    a failed write is raised by the next ``submit`` or on leaving the block, and leaving the block
    always waits for the write in flight, so nothing is written after the run's claims are released.
    Inside a caller's transaction (or on SQLite) batches are written in place, in that transaction.
    """

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None
        if on_postgresql() and not connection.in_atomic_block:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grade-writer")

    def __enter__(self) -> GradeBatchWriter:
        return self

    def submit(self, *, forecast_ids: Sequence[int], rows: list[dict[str, Any]], replaces_current: bool) -> None:
        if self._pool is None:
            write_grade_batch(forecast_ids=forecast_ids, rows=rows, replaces_current=replaces_current)
            return
        self._wait()
        self._pending = self._pool.submit(
            write_grade_batch, forecast_ids=forecast_ids, rows=rows, replaces_current=replaces_current
        )

    def _wait(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        try:
            self._wait()
        except Exception:
            if exc_type is None:
                raise
            logger.exception("a grade batch write failed while the run was failing too")
        finally:
            if self._pool is not None:
                self._pool.submit(connections.close_all).result()  # the writer thread's connection
                self._pool.shutdown()
