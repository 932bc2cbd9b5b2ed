"""Ranks of one view's rows, and the order the table lists them in.

The rank metric is the difficulty-adjusted Brier once enough agents share questions
(:func:`enough_shared`: at least ``MIN_SHARING_AGENTS`` agents of the largest connected group each
with ``min_n`` shared questions in the view); otherwise the first of ``RANK_METRICS`` that any agent
of the view has (Brier, lower is better; in views without Brier questions the first of MIRAI
second-level F1, open-ended F1, KER, SrcP that is present, higher is better). Equal values share a
rank (1, 2, 2, 4). Agents with fewer than ``min_n`` questions carrying the rank metric are
*provisional*: listed, not ranked. Baselines are never ranked, neither the rows the platform computes
nor its baseline agents (which forecast through the API like any team): they are shown for
reference, and :func:`places` says where each would stand among the ranked agents.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

import numpy as np
import numpy.typing as npt

from leaderboard.stats.metrics import LOWER_IS_BETTER, RANK_METRICS

TIE_TOLERANCE: Final = 1e-12
ADJUSTED: Final = "brier_adjusted"
MIN_SHARING_AGENTS: Final = 2


def enough_shared(counts: npt.NDArray[np.int64], *, min_n: int) -> bool:
    """Whether enough agents share questions for the difficulty-adjusted Brier to rank: at least
    MIN_SHARING_AGENTS agents with ``min_n`` questions each that other agents answered too (the
    counts of the adjusted Brier count only such questions, in the largest connected group)."""
    return int(np.count_nonzero(counts >= min_n)) >= MIN_SHARING_AGENTS


def rank_metric_of(
    *, is_agent: npt.NDArray[np.bool_], counts: Mapping[str, npt.NDArray[np.int64]], min_n: int
) -> str | None:
    """The metric a view ranks on (see the module's docstring)."""
    for metric in RANK_METRICS:
        agent_counts = counts[metric][is_agent]
        if metric == ADJUSTED:
            if enough_shared(agent_counts, min_n=min_n):
                return metric
        elif bool((agent_counts > 0).any()):
            return metric
    return None


def rank_columns(
    *,
    is_agent: npt.NDArray[np.bool_],
    agent_ids: npt.NDArray[np.int64],
    means: Mapping[str, npt.NDArray[np.float64]],
    counts: Mapping[str, npt.NDArray[np.int64]],
    min_n: int,
    rankable: npt.NDArray[np.bool_] | None = None,
) -> tuple[str | None, npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """(rank metric, rank per row with 0 for unranked, provisional per row) of one view's rows.

    ``is_agent`` marks the rows of agents (they decide the rank metric, baseline agents included,
    since their forecasts are real); ``rankable`` the agents that compete for ranks (default: every
    agent; the platform's baseline agents do not). ``means`` (NaN where missing) and ``counts`` need
    the RANK_METRICS. Rows that do not compete are never ranked nor provisional. Equal values
    (within ``TIE_TOLERANCE`` of the first of a run) share a rank.
    """
    size = is_agent.shape[0]
    competing = is_agent if rankable is None else is_agent & rankable
    rank = np.zeros(size, dtype=np.int64)
    metric = rank_metric_of(is_agent=is_agent, counts=counts, min_n=min_n)
    if metric is None:
        return None, rank, competing.copy()
    provisional = competing & (counts[metric] < min_n)
    sign = 1.0 if metric in LOWER_IS_BETTER else -1.0
    values = means[metric]
    eligible = np.flatnonzero(competing & ~provisional & ~np.isnan(values))
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


def places(
    ranked_values: npt.NDArray[np.float64], values: npt.NDArray[np.float64], *, rank_metric: str | None
) -> npt.NDArray[np.int64]:
    """Where each value would stand among the ranked agents' values: 1 + the number of ranked
    agents strictly better (beyond TIE_TOLERANCE); 0 where the value is missing."""
    v = np.asarray(values, dtype=np.float64)
    if rank_metric is None:
        return np.zeros(v.shape, dtype=np.int64)
    sign = 1.0 if rank_metric in LOWER_IS_BETTER else -1.0
    ranked = np.sort(sign * np.asarray(ranked_values, dtype=np.float64))
    keyed = sign * np.where(np.isnan(v), 0.0, v)
    better = np.searchsorted(ranked, keyed - TIE_TOLERANCE, side="left")
    return np.where(np.isnan(v), 0, better + 1).astype(np.int64)
