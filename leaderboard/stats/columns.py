"""One view's standing rows, computed as columns: per-agent means, baselines, intervals and ranks.

Every metric is the unweighted mean over the agent's eligible questions in the view that have it,
with its own n (see :mod:`leaderboard.stats.metrics`); the Brier interval comes from
:mod:`leaderboard.stats.bootstrap`, the ranks and display order from :mod:`leaderboard.stats.ranking`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from grading.scoring.outcome import brier_index
from leaderboard.stats.baselines import baseline_columns
from leaderboard.stats.bootstrap import bootstrap_intervals
from leaderboard.stats.difficulty import QuestionStats
from leaderboard.stats.metrics import METRICS, SUMMED
from leaderboard.stats.ranking import display_order, rank_columns
from leaderboard.stats.tables import GradeTable, QuestionTable
from leaderboard.stats.views import View


def brier_index_of(brier: float | None) -> float | None:
    """The Brier Index of a mean Brier, plain or difficulty-adjusted. An adjusted Brier can fall
    below zero (better than perfect on an average question) or rise above one; the index then stays
    at 100 or 0, inside its range."""
    return None if brier is None or math.isnan(brier) else brier_index(min(1.0, max(0.0, brier)))


@dataclass(slots=True)
class MetricValue:
    mean: float | None
    n: int


@dataclass(slots=True)
class StandingRow:
    """One agent's (or baseline's) line in a view."""

    agent_id: int | None
    baseline: str
    n: int
    metrics: dict[str, MetricValue]
    brier_lo: float | None = None
    brier_hi: float | None = None
    rank: int | None = None
    provisional: bool = False

    @property
    def brier_index(self) -> float | None:
        return brier_index_of(self.metrics["brier"].mean)

    @property
    def brier_adjusted_index(self) -> float | None:
        return brier_index_of(self.metrics["brier_adjusted"].mean)

    def value(self, metric: str) -> float | None:
        return self.metrics[metric].mean


@dataclass(slots=True)
class ViewResult:
    view: View
    rank_metric: str | None
    rows: list[StandingRow]


@dataclass
class ViewColumns:
    """One view's rows as columns, in display order (agents and baselines).

    ``agent`` is 0 and ``baseline`` names the baseline on baseline rows; ``rank`` is 0 where
    unranked; means are NaN and intervals NaN where absent.
    """

    view: View
    rank_metric: str | None
    agent: npt.NDArray[np.int64]
    baseline: list[str]
    n: npt.NDArray[np.int64]
    means: dict[str, npt.NDArray[np.float64]]
    counts: dict[str, npt.NDArray[np.int64]]
    brier_lo: npt.NDArray[np.float64]
    brier_hi: npt.NDArray[np.float64]
    rank: npt.NDArray[np.int64]
    provisional: npt.NDArray[np.bool_]

    def __len__(self) -> int:
        return int(self.agent.shape[0])

    def take(self, order: npt.NDArray[np.intp]) -> None:
        self.agent = self.agent[order]
        self.baseline = [self.baseline[i] for i in order.tolist()]
        self.n = self.n[order]
        self.means = {m: v[order] for m, v in self.means.items()}
        self.counts = {m: v[order] for m, v in self.counts.items()}
        self.brier_lo, self.brier_hi = self.brier_lo[order], self.brier_hi[order]
        self.rank, self.provisional = self.rank[order], self.provisional[order]

    def rows(self) -> list[StandingRow]:
        means = {m: [None if math.isnan(x) else x for x in self.means[m].tolist()] for m in METRICS}
        counts = {m: self.counts[m].tolist() for m in METRICS}
        lo = [None if math.isnan(x) else x for x in self.brier_lo.tolist()]
        hi = [None if math.isnan(x) else x for x in self.brier_hi.tolist()]
        return [
            StandingRow(
                agent_id=None if baseline else agent,
                baseline=baseline,
                n=n,
                metrics={m: MetricValue(means[m][k], counts[m][k]) for m in METRICS},
                brier_lo=lo[k],
                brier_hi=hi[k],
                rank=rank or None,
                provisional=bool(provisional),
            )
            for k, (agent, baseline, n, rank, provisional) in enumerate(
                zip(
                    self.agent.tolist(),
                    self.baseline,
                    self.n.tolist(),
                    self.rank.tolist(),
                    self.provisional.tolist(),
                    strict=True,
                )
            )
        ]


def agent_columns(
    table: GradeTable, sel: npt.NDArray[np.intp], *, contamination_filter: bool = True
) -> tuple[
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    dict[str, npt.NDArray[np.float64]],
    dict[str, npt.NDArray[np.int64]],
    list[npt.NDArray[np.float64]],
]:
    """(agent ids, n, means, counts, Brier samples) of the selected records, one entry per agent."""
    agents = table.agent[sel]
    if sel.size == 0:
        size = 0
        starts = np.zeros(0, dtype=np.intp)
        idx = np.zeros(0, dtype=np.intp)
    else:
        starts = np.flatnonzero(np.concatenate([[True], agents[1:] != agents[:-1]]))
        size = starts.size
        idx = np.repeat(np.arange(size), np.diff(np.append(starts, agents.size)))
    count = np.bincount(idx, minlength=size).astype(np.int64)
    means: dict[str, npt.NDArray[np.float64]] = {}
    counts: dict[str, npt.NDArray[np.int64]] = {}
    samples: list[npt.NDArray[np.float64]] = [np.zeros(0)] * size
    for metric in METRICS:
        if size == 0 or not table.has_metric(metric):
            means[metric] = np.full(size, math.nan)
            counts[metric] = np.zeros(size, dtype=np.int64)
            continue
        values = table.values(metric, contamination_filter)[sel]
        ok = ~np.isnan(values)
        n_m = np.bincount(idx[ok], minlength=size)
        sums = np.bincount(idx[ok], weights=values[ok], minlength=size)
        if metric in SUMMED:
            means[metric] = np.where(n_m > 0, sums, np.nan)
        else:
            means[metric] = np.divide(sums, n_m, out=np.full(size, np.nan), where=n_m > 0)
        counts[metric] = n_m.astype(np.int64)
        if metric == "brier":
            samples = np.split(values[ok], np.cumsum(n_m)[:-1])
    return agents[starts], count, means, counts, samples


def compute_view_columns(
    table: GradeTable,
    questions: QuestionTable,
    views: Sequence[View],
    *,
    min_n: int,
    bootstrap: bool = True,
    agents: Iterable[int] | None = None,
    baselines: bool = True,
    stats: Mapping[bool, QuestionStats] | None = None,
    baseline_agents: Collection[int] = (),
) -> list[ViewColumns]:
    """Standing rows of every view as columns; all bootstraps of the call run batched together.

    ``agents`` limits the agent rows computed (incremental updates); ranks are then left to the caller.
    ``stats`` (per contamination setting) gives the baselines their relative scores; the agents'
    come from the table (:func:`leaderboard.stats.difficulty.attach_relative_scores`).
    ``baseline_agents``: the platform's baseline agents, listed with their scores but never ranked.
    """
    wanted = None if agents is None else np.asarray(sorted(set(agents)), dtype=np.int64)
    reference = np.asarray(sorted(set(baseline_agents)), dtype=np.int64)
    results: list[ViewColumns] = []
    samples: list[npt.NDArray[np.float64]] = []
    owners: list[tuple[int, int]] = []
    for number, view in enumerate(views):
        sel = np.flatnonzero(table.mask(view))
        if wanted is not None:
            sel = sel[np.isin(table.agent[sel], wanted)]
        agent_ids, n, means, counts, brier_samples = agent_columns(
            table, sel, contamination_filter=view.contamination_filter
        )
        names: list[str] = []
        if baselines:
            names, b_means, b_counts, b_samples = baseline_columns(
                questions, questions.members(view), (stats or {}).get(view.contamination_filter)
            )
            if names:
                agent_ids = np.concatenate([agent_ids, np.zeros(len(names), dtype=np.int64)])
                n = np.concatenate([n, np.asarray(b_counts["brier"], dtype=np.int64)])
                means = {m: np.concatenate([means[m], np.asarray(b_means[m], dtype=np.float64)]) for m in METRICS}
                counts = {m: np.concatenate([counts[m], np.asarray(b_counts[m], dtype=np.int64)]) for m in METRICS}
                brier_samples = brier_samples + b_samples
        size = agent_ids.shape[0]
        is_agent = np.ones(size, dtype=bool)
        is_agent[size - len(names) :] = False
        for k, sample in enumerate(brier_samples):
            if sample.size:
                owners.append((number, k))
                samples.append(sample)
        if wanted is None:
            rank_metric, rank, provisional = rank_columns(
                is_agent=is_agent,
                agent_ids=agent_ids,
                means=means,
                counts=counts,
                min_n=min_n,
                rankable=~np.isin(agent_ids, reference),
            )
        else:
            rank_metric, rank, provisional = None, np.zeros(size, dtype=np.int64), np.zeros(size, dtype=bool)
        results.append(
            ViewColumns(
                view=view,
                rank_metric=rank_metric,
                agent=agent_ids,
                baseline=[""] * (size - len(names)) + names,
                n=n,
                means=means,
                counts=counts,
                brier_lo=np.full(size, math.nan),
                brier_hi=np.full(size, math.nan),
                rank=rank,
                provisional=provisional,
            )
        )
    if bootstrap and samples:
        for (number, k), (lo, hi) in zip(owners, bootstrap_intervals(samples), strict=True):
            # The point estimate and the resamples are summed in different orders and precisions;
            # widen by that rounding so the interval always contains the point it is drawn around.
            point = results[number].means["brier"][k]
            results[number].brier_lo[k] = min(lo, point)
            results[number].brier_hi[k] = max(hi, point)
    for result in results:
        metric = result.rank_metric
        result.take(
            display_order(
                rank=result.rank,
                agent_ids=result.agent,
                values=result.means[metric] if metric else None,
                rank_metric=metric,
            )
        )
    return results


def compute_views(
    table: GradeTable,
    questions: QuestionTable,
    views: Sequence[View],
    *,
    min_n: int,
    bootstrap: bool = True,
    agents: Iterable[int] | None = None,
    baselines: bool = True,
    stats: Mapping[bool, QuestionStats] | None = None,
    baseline_agents: Collection[int] = (),
) -> list[ViewResult]:
    """Standing rows of every view (see :func:`compute_view_columns`), as :class:`StandingRow` objects."""
    return [
        ViewResult(view=c.view, rank_metric=c.rank_metric, rows=c.rows())
        for c in compute_view_columns(
            table,
            questions,
            views,
            min_n=min_n,
            bootstrap=bootstrap,
            agents=agents,
            baselines=baselines,
            stats=stats,
            baseline_agents=baseline_agents,
        )
    ]
