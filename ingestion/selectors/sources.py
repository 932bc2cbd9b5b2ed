"""Reads about sources: which are due, and their health for the status page."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from ingestion.models import Article, Market, Source


def source_due_list(*, now: datetime) -> QuerySet[Source]:
    """Enabled sources whose next attempt has come (or never polled) and that nobody is polling
    (or whose claim went stale: a worker died mid-poll)."""
    stale_before = now - timedelta(seconds=settings.HINDSIGHT_SOURCE_CLAIM_STALE_SECONDS)
    return (
        Source.objects.filter(enabled=True)
        .filter(Q(next_attempt_at=None) | Q(next_attempt_at__lte=now))
        .filter(Q(claimed_at=None) | Q(claimed_at__lt=stale_before))
        .order_by("next_attempt_at", "id")
    )


def source_list(*, kind: str | None = None, url: str | None = None) -> QuerySet[Source]:
    sources = Source.objects.all()
    if kind is not None:
        sources = sources.filter(kind=kind)
    if url is not None:
        sources = sources.filter(url=url)
    return sources.order_by("id")


def _count_of(model: type[Article] | type[Market]) -> Coalesce:
    # A subquery per source instead of two joined COUNT(DISTINCT)s, which multiply rows.
    counted = (
        model.objects.filter(source=OuterRef("pk")).order_by().values("source").annotate(n=Count("pk")).values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def source_status_list() -> QuerySet[Source]:
    """Every source with its health and how many articles and markets it has brought in."""
    return Source.objects.annotate(article_count=_count_of(Article), market_count=_count_of(Market)).order_by(
        "kind", "name", "id"
    )
