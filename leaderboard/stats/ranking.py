"""Ranks of one view's rows, and the order the table lists them in.

The rank metric is the first of ``RANK_METRICS`` that any agent of the view has (Brier, lower is
better; in views without Brier questions the first of MIRAI second-level F1, open-ended F1, KER,
SrcP that is present, higher is better). Equal values share a rank (1, 2, 2, 4). Agents with fewer
than ``min_n`` questions carrying the rank metric are *provisional*: listed, not ranked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

import numpy as np
import numpy.typing as npt

from leaderboard.stats.metrics import LOWER_IS_BETTER, RANK_METRICS

TIE_TOLERANCE: Final = 1e-12


def rank_columns(
    *,
    is_agent: npt.NDArray[np.bool_],
    agent_ids: npt.NDArray[np.int64],
    means: Mapping[str, npt.NDArray[np.float64]],
    counts: Mapping[str, npt.NDArray[np.int64]],
    min_n: int,
) -> tuple[str | None, npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """(rank metric, rank per row with 0 for unranked, provisional per row) of one view's rows.

    ``means`` (NaN where missing) and ``counts`` need the RANK_METRICS. Baselines are never ranked
    nor provisional. Equal values (within ``TIE_TOLERANCE`` of the first of a run) share a rank.
    """
    size = is_agent.shape[0]
    rank = np.zeros(size, dtype=np.int64)
    metric = next((m for m in RANK_METRICS if bool((counts[m][is_agent] > 0).any())), None)
    if metric is None:
        return None, rank, is_agent.copy()
    provisional = is_agent & (counts[metric] < min_n)
    sign = 1.0 if metric in LOWER_IS_BETTER else -1.0
    values = means[metric]
    eligible = np.flatnonzero(is_agent & ~provisional & ~np.isnan(values))
    keyed = sign * values[eligible]
    order = np.lexsort((agent_ids[eligible], keyed))
    previous: float | None = None
    current = 0
    ranks: list[int] = []
    for position, value in enumerate(keyed[order].tolist(), start=1):
        if previous is None or value > previous + TIE_TOLERANCE:
            current = position
            previous = value
        ranks.append(current)
    rank[eligible[order]] = ranks
    return metric, rank, provisional


def display_order(
    *,
    rank: npt.NDArray[np.int64],
    agent_ids: npt.NDArray[np.int64],
    values: npt.NDArray[np.float64] | None,
    rank_metric: str | None,
) -> npt.NDArray[np.intp]:
    """Display order: ranked agents by rank, then the rest by the rank metric's value, then agent id."""
    size = rank.shape[0]
    v = np.full(size, math.nan) if values is None else values
    missing = np.isnan(v)
    sign = 1.0 if rank_metric in LOWER_IS_BETTER else -1.0
    keyed = sign * np.where(missing, 0.0, v)
    return np.lexsort((agent_ids, keyed, missing, rank, rank == 0))
