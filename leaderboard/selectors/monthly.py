"""An agent's scores by month: the agent page's table of outcome, evidence and reasoning over time.

The table reads the grades the standings read (:func:`~leaderboard.selectors.grade_tables.eligible_grades`:
current, non-void grades of the forecasts that count, on questions whose outcome is public) with the
same values, so its months add up to the agent's "All tracks" standing with the contamination
filter off. A forecast is filed under the month of its as-of time: the simulated date of its replay
session, or when the server received a live one.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Final

from leaderboard.models import Agent
from leaderboard.selectors.grade_tables import eligible_grades

# (metric, grade field): the scores the table shows, one per axis.
MONTHLY_METRICS: Final = (
    ("brier", "brier"),
    ("source_precision", "source_precision"),
    ("key_event_recall", "key_event_recall"),
)


@dataclass(frozen=True)
class MonthScore:
    mean: float
    n: int


@dataclass(frozen=True)
class MonthRow:
    month: str  # YYYY-MM of the forecasts' as-of time
    scores: dict[str, MonthScore]  # metric -> mean and n, only where the month has the score


def agent_monthly_scores(*, agent: Agent) -> list[MonthRow]:
    """The agent's mean of each score per month of the forecasts' as-of time, oldest first."""
    rows = (
        eligible_grades()
        .filter(forecast__agent=agent)
        .order_by()
        .values_list("forecast__session__simulated_at", "forecast__received_at", *(f for _, f in MONTHLY_METRICS))
    )
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for simulated_at, received_at, *scores in rows.iterator(chunk_size=2000):
        month = (simulated_at or received_at).strftime("%Y-%m")
        for (metric, _), value in zip(MONTHLY_METRICS, scores, strict=True):
            if value is not None:
                values[month][metric].append(float(value))
    return [
        MonthRow(
            month=month,
            scores={m: MonthScore(mean=math.fsum(v) / len(v), n=len(v)) for m, v in by_metric.items()},
        )
        for month, by_metric in sorted(values.items())
    ]
