"""Time-averaged scores over forecast updates (Metaculus), for live questions.

Only the latest forecast before the deadline counts for the ordinary score, which rewards updating
at the last minute. The time-averaged score instead lets every forecast count for as long as it
stood: a forecast made at t_k stands from max(t_k, open) until the agent's next forecast or the
question's close, whichever is first, and

    time-averaged score = Σ_k score_k x duration_k / Σ_k duration_k
    coverage            = Σ_k duration_k / (close - open)

Time before the agent's first forecast is not counted in the average (as Metaculus does, no forecast
means not yet counted); coverage says how much of the question's life the agent's forecasts covered.
Forecasts at or after the close do not count. Times are seconds since the epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class TimeAverages:
    """One value per group (an agent and a question), aligned with ``groups``."""

    groups: npt.NDArray[np.int64]
    score: npt.NDArray[np.float64]  # NaN where no forecast stood before the close
    coverage: npt.NDArray[np.float64]  # in [0, 1]


def time_averaged(group: Any, submitted_at: Any, score: Any, *, open_at: Any, close_at: Any) -> TimeAverages:
    """Time-average each group's forecasts.

    Per forecast: its group id (one per agent and question), its submission time and its score;
    ``open_at``/``close_at`` give each forecast's question window (the same for every forecast of a
    group).
    """
    g = np.asarray(group, dtype=np.int64)
    t = np.asarray(submitted_at, dtype=np.float64)
    s = np.asarray(score, dtype=np.float64)
    start_q = np.asarray(open_at, dtype=np.float64)
    end_q = np.asarray(close_at, dtype=np.float64)
    if g.size == 0:
        empty = np.zeros(0)
        return TimeAverages(np.zeros(0, dtype=np.int64), empty, empty)
    order = np.lexsort((t, g))
    g, t, s, start_q, end_q = g[order], t[order], s[order], start_q[order], end_q[order]
    last_of_group = np.ones(g.size, dtype=bool)
    last_of_group[:-1] = g[1:] != g[:-1]
    following = np.empty_like(t)
    following[:-1] = t[1:]
    stands_until = np.where(last_of_group, end_q, np.minimum(following, end_q))
    stands_from = np.maximum(t, start_q)
    duration = np.clip(stands_until - stands_from, 0.0, None)
    duration[np.isnan(s)] = 0.0

    groups, inverse = np.unique(g, return_inverse=True)
    covered = np.bincount(inverse, weights=duration, minlength=groups.size)
    weighted = np.bincount(inverse, weights=np.where(duration > 0, s, 0.0) * duration, minlength=groups.size)
    window = np.zeros(groups.size)
    window[inverse] = end_q - start_q
    with np.errstate(invalid="ignore", divide="ignore"):
        average = np.where(covered > 0, weighted / covered, np.nan)
        coverage = np.where(window > 0, np.clip(covered / window, 0.0, 1.0), np.nan)
    return TimeAverages(groups=groups, score=average, coverage=coverage)
