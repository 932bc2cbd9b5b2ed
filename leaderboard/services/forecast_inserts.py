"""Forecast rows stored: many at once (a batch) or one with its citations (a single submission).

On PostgreSQL both take a shorter path than Django's generic one (see each function); other
databases get the plain ORM writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from django.db import IntegrityError, connections, router, transaction
from django.db.models import Model, sql
from django.db.models.constants import OnConflict

from common.bulk import on_postgresql
from ingestion.models import Article
from leaderboard.models import Forecast


def link_cited_articles(pairs: Sequence[tuple[Forecast, list[int]]]) -> None:
    through = Forecast.cited_articles.through
    rows = [through(forecast_id=f.pk, article_id=a) for f, ids in pairs for a in ids]
    if rows:
        through.objects.bulk_create(rows)


def insert_forecasts(forecasts: list[Forecast]) -> None:
    """``bulk_create`` for many rows, with the parameters bound by the server on PostgreSQL.

    Django's PostgreSQL bulk insert sends each column as one array; through Django's client-side
    binding cursor psycopg quotes every array element in Python, which costs as much CPU as
    validating the forecast. A server-binding cursor on the same connection (and transaction)
    sends the same arrays without that.
    """
    connection = connections[router.db_for_write(Forecast)]
    if len(forecasts) < 2 or not on_postgresql(connection.alias):
        Forecast.objects.bulk_create(forecasts)
        return
    query = sql.InsertQuery(Forecast)
    rows: list[Model] = list(forecasts)
    query.insert_values([f for f in Forecast._meta.concrete_fields if not f.primary_key], rows)
    compiler = query.get_compiler(connection=connection)
    compiler.returning_fields = [Forecast._meta.pk]
    [(statement, params)] = compiler.as_sql()
    connection.ensure_connection()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(statement, params)
        ids = [row[0] for row in cursor.fetchall()]
    for forecast, pk in zip(forecasts, ids, strict=True):
        forecast.pk = pk
        forecast._state.adding = False
        forecast._state.db = connection.alias


def insert_forecast(*, forecast: Forecast, article_ids: Sequence[int], urls: Sequence[str]) -> int | None:
    """Store ``forecast`` and its citations in one statement; its id, or None if its key is taken.

    One statement needs neither a transaction nor a savepoint: ``ON CONFLICT DO NOTHING`` turns a
    taken idempotency key (the only unique constraint a new row can hit) into "no row returned"
    instead of an error, and a data-modifying CTE adds the cited-article rows in the same
    statement, resolving cited URLs (as given and canonical) to archived articles on the way.
    """
    connection = connections[router.db_for_write(Forecast)]
    if not on_postgresql(connection.alias):
        return _insert_forecast_portable(forecast=forecast, article_ids=article_ids, urls=urls)
    query = sql.InsertQuery(Forecast, on_conflict=OnConflict.IGNORE)
    query.insert_values([f for f in Forecast._meta.concrete_fields if not f.primary_key], [forecast])
    compiler = query.get_compiler(connection=connection)
    compiler.returning_fields = [Forecast._meta.pk]
    [(statement, params)] = compiler.as_sql()
    links: list[str] = []
    link_params: list[Any] = []
    if article_ids:
        links.append("SELECT f.id, a.id FROM f JOIN {article} a ON a.id = ANY(%s::bigint[])")
        link_params.append(list(article_ids))
    if urls:
        links.append("SELECT f.id, a.id FROM f JOIN {article} a ON a.url = ANY(%s::text[])")
        link_params.append(list(urls))
    if links:
        qn = connection.ops.quote_name
        through = Forecast.cited_articles.through._meta
        names = {
            "article": qn(Article._meta.db_table),
            "through": qn(through.db_table),
            "forecast_col": qn(through.get_field("forecast").column),
            "article_col": qn(through.get_field("article").column),
        }
        link_rows = " UNION ".join(links).format(**names)
        statement = (
            "WITH f AS ({insert}), l AS (INSERT INTO {through} ({forecast_col}, {article_col}) {rows}) ".format(
                insert=statement, rows=link_rows, **names
            )
            + "SELECT id FROM f"
        )
        params = (*params, *link_params)
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        row = cursor.fetchone()
    return None if row is None else int(row[0])


@transaction.atomic
def _insert_forecast_portable(*, forecast: Forecast, article_ids: Sequence[int], urls: Sequence[str]) -> int | None:
    """The same as ``insert_forecast`` with plain ORM writes, for databases other than PostgreSQL."""
    try:
        with transaction.atomic():
            forecast.save(force_insert=True)
    except IntegrityError:
        return None  # the idempotency key is taken
    cited = set(article_ids)
    if urls:
        cited.update(Article.objects.filter(url__in=list(urls)).values_list("pk", flat=True))
    if cited:
        through = Forecast.cited_articles.through
        through.objects.bulk_create(
            [through(forecast_id=forecast.pk, article_id=article_id) for article_id in sorted(cited)]
        )
    return int(forecast.pk)
