"""Forecast rows stored: many at once (a batch) or one with its citations (a single submission)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import IntegrityError, transaction

from ingestion.models import Article
from leaderboard.models import Forecast


def link_cited_articles(pairs: Sequence[tuple[Forecast, list[int]]]) -> None:
    through = Forecast.cited_articles.through
    rows = [through(forecast_id=f.pk, article_id=a) for f, ids in pairs for a in ids]
    if rows:
        through.objects.bulk_create(rows)


def insert_forecasts(forecasts: list[Forecast]) -> None:
    Forecast.objects.bulk_create(forecasts)


@transaction.atomic
def insert_forecast(*, forecast: Forecast, article_ids: Sequence[int], urls: Sequence[str]) -> int | None:
    """Store ``forecast`` and its citations (cited URLs resolved, as given and canonical, to archived
    articles); its id, or None if its idempotency key is taken."""
    try:
        with transaction.atomic():
            forecast.save(force_insert=True)
    except IntegrityError:
        return None  # the idempotency key is taken (the only unique constraint a new row can hit)
    cited = set(article_ids)
    if urls:
        cited.update(Article.objects.filter(url__in=list(urls)).values_list("pk", flat=True))
    if cited:
        through = Forecast.cited_articles.through
        through.objects.bulk_create(
            [through(forecast_id=forecast.pk, article_id=article_id) for article_id in sorted(cited)]
        )
    return int(forecast.pk)
