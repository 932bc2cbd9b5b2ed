"""Reads about prediction markets: price paths as of a date, and what a poll follows."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db.models import Max, Q, QuerySet

from ingestion.models import Market, PricePoint, Question


def market_prices_before(*, market: Market, before: datetime, outcome: str | None = None) -> QuerySet[PricePoint]:
    """The market's price path strictly before ``before`` (the temporal gateway's as-of rule)."""
    prices = PricePoint.objects.filter(market=market, time__lt=before).order_by("time", "outcome")
    if outcome is not None:
        prices = prices.filter(outcome=outcome)
    return prices


def market_price_at(*, market: Market, at: datetime, outcome: str = "Yes") -> PricePoint | None:
    """The latest price of ``outcome`` known strictly before ``at`` (market edge, baselines)."""
    return PricePoint.objects.filter(market=market, outcome=outcome, time__lt=at).order_by("-time").first()


def market_tracked_external_ids(*, platform: str, now: datetime, track_days: int = 30) -> list[str]:
    """Markets whose questions still follow them: drafts, open and closed questions, and those
    whose resolution changed within ``track_days`` (a market can still be amended or
    un-resolved for a while after it settles)."""
    recent = now - timedelta(days=track_days)
    followed = Q(status__in=[Question.Status.DRAFT, Question.Status.OPEN, Question.Status.CLOSED]) | Q(
        resolutions__created_at__gte=recent
    )
    return sorted(
        set(
            Question.objects.filter(market__platform=platform, origin=Question.Origin.MARKET, rejection_reason="")
            .filter(followed)
            .values_list("market__external_id", flat=True)
        )
    )


def market_latest_price_times(*, platform: str, external_ids: Iterable[str]) -> dict[str, datetime]:
    """The time of each market's latest stored price, so history is fetched from there on."""
    ids = list(external_ids)
    if not ids:
        return {}
    rows = (
        PricePoint.objects.filter(market__platform=platform, market__external_id__in=ids)
        .values("market__external_id")
        .annotate(latest=Max("time"))
    )
    return {row["market__external_id"]: row["latest"] for row in rows}
