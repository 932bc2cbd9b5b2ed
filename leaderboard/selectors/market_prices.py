"""A question's market price history: the points, and 'price at or before t' lookups for grading."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from datetime import datetime

from django.db.models import QuerySet

from ingestion.models import PricePoint, Question


def market_price_points(*, market_id: int) -> QuerySet[PricePoint, tuple[str, datetime, float]]:
    """(outcome, time, probability) of every price point of the market, oldest first."""
    return PricePoint.objects.filter(market_id=market_id).order_by("time").values_list("outcome", "time", "probability")


class MarketSeries:
    """Price history of the question's market, per outcome, for 'price at or before t' lookups."""

    def __init__(self, question: Question) -> None:
        self.series: dict[str, tuple[list[datetime], list[float]]] = {}
        if question.market_id is None:
            return
        for outcome, time, probability in market_price_points(market_id=question.market_id):
            times, probs = self.series.setdefault(outcome, ([], []))
            times.append(time)
            probs.append(probability)
        lowered = {o.strip().lower(): o for o in self.series}
        self.yes = lowered.get("yes") or (sorted(self.series)[0] if self.series else None)
        self._lowered = lowered

    def price(self, outcome: str | None, at: datetime) -> float | None:
        if outcome is None:
            return None
        found = self.series.get(outcome) or self.series.get(self._lowered.get(outcome.strip().lower(), ""))
        if not found:
            return None
        times, probs = found
        i = bisect_right(times, at) - 1
        return probs[i] if i >= 0 else None

    def binary(self, at: datetime) -> float | None:
        return self.price(getattr(self, "yes", None), at) if self.series else None

    def vector(self, options: Sequence[str], at: datetime) -> dict[str, float] | None:
        if not self.series:
            return None
        prices = {o: self.price(o, at) for o in options}
        if any(p is None for p in prices.values()):
            return None
        return {o: float(p) for o, p in prices.items() if p is not None}
