"""Grade records as columns: the standings' input, and the questions the baselines forecast.

The selectors load eligible grade rows (current, non-void grades of the forecast that counts) into a
:class:`GradeTable`, one record per agent and question, and binary questions into a
:class:`QuestionTable`. With the contamination filter on, a view drops records flagged
``contaminated`` (t0 precedes the agent's declared cutoff) and replay records of agents without a
declared cutoff.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from leaderboard.stats.metrics import METRICS, RELATIVE
from leaderboard.stats.views import HORIZON_BUCKETS, TRACKS, View, horizon_buckets

_DIMENSIONS: Final = ("track", "qtype", "domain", "origin")


def _codes(values: Iterable[str]) -> tuple[list[str], npt.NDArray[np.int32]]:
    """Factorise labels: (distinct labels in first-seen order, code of each value)."""
    mapping: dict[str, int] = {}
    codes = np.fromiter((mapping.setdefault(v or "", len(mapping)) for v in values), dtype=np.int32)
    return list(mapping), codes


def _floats(values: Any) -> npt.NDArray[np.float64]:
    # numpy turns None into NaN for a float dtype
    return np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=np.float64)


@dataclass
class GradeTable:
    """Columnar eligible grade records, sorted by (agent, question); one record per agent and question."""

    agent: npt.NDArray[np.int64]
    question: npt.NDArray[np.int64]
    track: npt.NDArray[np.int32]
    qtype: npt.NDArray[np.int32]
    domain: npt.NDArray[np.int32]
    origin: npt.NDArray[np.int32]
    horizon: npt.NDArray[np.int32]
    contaminated: npt.NDArray[np.bool_]
    cutoff_declared: npt.NDArray[np.bool_]
    resolved_at: npt.NDArray[np.float64]
    metrics: dict[str, npt.NDArray[np.float64]]
    labels: dict[str, list[str]] = field(default_factory=dict)
    # (metric, contamination filter) -> per-record values of the RELATIVE metrics, which depend on
    # the other agents of the view (see leaderboard.stats.difficulty.attach_relative_scores).
    relative: dict[tuple[str, bool], npt.NDArray[np.float64]] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.agent.shape[0])

    @classmethod
    def from_columns(
        cls,
        *,
        agent: Any,
        question: Any,
        track: Sequence[str],
        qtype: Sequence[str],
        domain: Sequence[str],
        origin: Sequence[str],
        horizon_days: Any,
        contaminated: Sequence[bool],
        cutoff_declared: Sequence[bool],
        resolved_at: Any,
        metrics: Mapping[str, Any],
    ) -> GradeTable:
        n = len(agent)
        if n and (len(question) != n or len(track) != n or len(qtype) != n or len(resolved_at) != n):
            raise ValueError("all columns must have one value per record")
        labels: dict[str, list[str]] = {}
        coded: dict[str, npt.NDArray[np.int32]] = {}
        for name, values in (("track", track), ("qtype", qtype), ("domain", domain), ("origin", origin)):
            labels[name], coded[name] = _codes(values)
        return cls.from_coded(
            agent=agent,
            question=question,
            codes=coded,
            labels=labels,
            horizon=horizon_buckets(horizon_days),
            contaminated=contaminated,
            cutoff_declared=cutoff_declared,
            resolved_at=resolved_at,
            metrics=metrics,
        )

    @classmethod
    def from_coded(
        cls,
        *,
        agent: Any,
        question: Any,
        codes: Mapping[str, Any],
        labels: Mapping[str, list[str]],
        horizon: Any,
        contaminated: Any,
        cutoff_declared: Any,
        resolved_at: Any,
        metrics: Mapping[str, Any],
    ) -> GradeTable:
        """From factorised columns: ``codes[dim][i]`` indexes ``labels[dim]`` for dim in track, qtype,
        domain, origin; ``horizon`` holds bucket indexes into HORIZON_BUCKETS. No per-record Python.

        ``metrics`` are the grades' values as stored: every grade is on the one scale its score is
        defined on (:mod:`grading.scoring.definitions`), so the standings average them as they are.
        """
        n = len(agent)
        unknown = set(metrics) - set(METRICS)
        if unknown:
            raise ValueError(f"unknown metrics: {sorted(unknown)}")
        agent_a = np.asarray(agent, dtype=np.int64).reshape(n)
        question_a = np.asarray(question, dtype=np.int64).reshape(n)
        order = np.lexsort((question_a, agent_a))
        if n > 1:
            sa, sq = agent_a[order], question_a[order]
            if np.any((sa[1:] == sa[:-1]) & (sq[1:] == sq[:-1])):
                raise ValueError("more than one record for an (agent, question) pair")
        coded = {name: np.asarray(codes[name], dtype=np.int32).reshape(n)[order] for name in _DIMENSIONS}
        metric_arrays = {m: (_floats(metrics[m]) if m in metrics else np.full(n, math.nan))[order] for m in METRICS}
        return cls(
            agent=agent_a[order],
            question=question_a[order],
            track=coded["track"],
            qtype=coded["qtype"],
            domain=coded["domain"],
            origin=coded["origin"],
            horizon=np.asarray(horizon, dtype=np.int32).reshape(n)[order],
            contaminated=np.asarray(contaminated, dtype=bool).reshape(n)[order],
            cutoff_declared=np.asarray(cutoff_declared, dtype=bool).reshape(n)[order],
            resolved_at=_floats(resolved_at)[order],
            metrics=metric_arrays,
            labels={**{name: list(labels[name]) for name in _DIMENSIONS}, "horizon": [b for b, _ in HORIZON_BUCKETS]},
        )

    @classmethod
    def from_records(cls, records: Sequence[Mapping[str, Any]]) -> GradeTable:
        """From dicts with the keys of :meth:`from_columns` (``horizon_days`` per record) and metric names."""

        def col(name: str, default: Any = None) -> list[Any]:
            return [r.get(name, default) for r in records]

        return cls.from_columns(
            agent=col("agent"),
            question=col("question"),
            track=col("track", "live"),
            qtype=col("qtype", "binary"),
            domain=col("domain", ""),
            origin=col("origin", ""),
            horizon_days=col("horizon_days", 1),
            contaminated=col("contaminated", False),
            cutoff_declared=col("cutoff_declared", True),
            resolved_at=col("resolved_at"),
            metrics={m: col(m) for m in METRICS},
        )

    def has_metric(self, metric: str) -> bool:
        memo = self._memo()
        key = ("has", metric)
        if key not in memo:
            columns = [v for (m, _), v in self.relative.items() if m == metric] if metric in RELATIVE else []
            memo[key] = any(bool((~np.isnan(c)).any()) for c in [self.metrics[metric], *columns])
        return memo[key]  # type: ignore[no-any-return]

    def values(self, metric: str, contamination_filter: bool) -> npt.NDArray[np.float64]:
        """Per-record values of a metric as a view with this contamination filter sees them."""
        if metric in RELATIVE:
            found = self.relative.get((metric, contamination_filter))
            if found is not None:
                return found
        return self.metrics[metric]

    def set_relative(self, metric: str, contamination_filter: bool, values: npt.NDArray[np.float64]) -> None:
        if metric not in RELATIVE:
            raise ValueError(f"{metric!r} is not a relative metric")
        self.relative[(metric, contamination_filter)] = np.asarray(values, dtype=np.float64)
        self._memo().pop(("has", metric), None)

    def base_mask(self, track: str, contamination_filter: bool) -> npt.NDArray[np.bool_]:
        """The records of a track (or all) that the contamination filter setting keeps."""
        return self._base_mask(track, contamination_filter)

    def code(self, dimension: str, value: str) -> int | None:
        """The integer code of a label in a dimension (None when no record has it)."""
        labels = self.labels.get(dimension, [])
        return labels.index(value) if value in labels else None

    def mask(self, view: View) -> npt.NDArray[np.bool_]:
        """Which records a view includes (partial masks are memoised: views share them)."""
        keep = self._base_mask(view.track, view.contamination_filter)
        for dimension, value in (
            ("qtype", view.question_type),
            ("domain", view.domain),
            ("origin", view.origin),
            ("horizon", view.horizon),
        ):
            if value:
                keep = keep & self._equals(dimension, value)
        if view.resolved_from is not None:
            keep = keep & (self.resolved_at >= view.resolved_from)
        if view.resolved_to is not None:
            keep = keep & (self.resolved_at < view.resolved_to)
        return keep

    def _memo(self) -> dict[Any, Any]:
        memo: dict[Any, Any] | None = getattr(self, "_memo_store", None)
        if memo is None:
            memo = {}
            self._memo_store = memo
        return memo

    def _base_mask(self, track: str, contamination_filter: bool) -> npt.NDArray[np.bool_]:
        memo = self._memo()
        key = ("base", track, contamination_filter)
        if key not in memo:
            keep = np.ones(len(self), dtype=bool) if track == "all" else self._equals("track", track)
            if contamination_filter:
                keep = keep & ~self.contaminated
                replay = self.code("track", "replay")
                if replay is not None:
                    keep &= ~((self.track == replay) & ~self.cutoff_declared)
            memo[key] = keep
        return memo[key]  # type: ignore[no-any-return]

    def _equals(self, dimension: str, value: str) -> npt.NDArray[np.bool_]:
        memo = self._memo()
        key = ("eq", dimension, value)
        if key not in memo:
            code = self.code(dimension, value)
            column: npt.NDArray[np.int32] = getattr(self, dimension)
            memo[key] = np.zeros(len(self), dtype=bool) if code is None else column == code
        return memo[key]  # type: ignore[no-any-return]


@dataclass
class QuestionTable:
    """Binary questions with at least one eligible grade: what the baselines forecast.

    ``market_*``: mean over the question's graded forecasts of the market's Brier / log score /
    correctness at each forecast's time (NaN where no price existed). ``base_rate``: the probability
    the base-rate baseline gives (see :func:`base_rates`). ``outcome``: 1.0 / 0.0.
    """

    question: npt.NDArray[np.int64]
    outcome: npt.NDArray[np.float64]
    base_rate: npt.NDArray[np.float64]
    market_brier: npt.NDArray[np.float64]
    market_log: npt.NDArray[np.float64]
    market_correct: npt.NDArray[np.float64]
    index: GradeTable | None = None  # one pseudo-record per question, for view membership

    @classmethod
    def empty(cls) -> QuestionTable:
        z = np.zeros(0)
        return cls(np.zeros(0, np.int64), z, z, z, z, z)

    def members(self, view: View) -> npt.NDArray[np.int64]:
        """Sorted ids of the view's questions (the platform has no cutoff: contamination never applies)."""
        if self.index is None or len(self.index) == 0:
            return np.zeros(0, np.int64)
        mask = self.index.mask(replace(view, contamination_filter=False))
        return np.sort(self.index.question[mask])

    @classmethod
    def build(
        cls,
        *,
        question: Sequence[int],
        outcome: Sequence[float],
        base_rate: Sequence[float],
        market_brier: Sequence[float | None],
        market_log: Sequence[float | None],
        market_correct: Sequence[float | None],
        track: Sequence[str] | None = None,
        qtype: Sequence[str] | None = None,
        domain: Sequence[str] | None = None,
        origin: Sequence[str] | None = None,
        horizon_days: Any = None,
        resolved_at: Any = None,
    ) -> QuestionTable:
        """``track`` etc. describe each question for view membership (default: live binary, no domain)."""
        ids = np.asarray(question, dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        k = len(ids)
        index = GradeTable.from_columns(
            agent=[0] * k,
            question=ids,
            track=track if track is not None else ["live"] * k,
            qtype=qtype if qtype is not None else ["binary"] * k,
            domain=domain if domain is not None else [""] * k,
            origin=origin if origin is not None else [""] * k,
            horizon_days=horizon_days if horizon_days is not None else [1] * k,
            contaminated=[False] * k,
            cutoff_declared=[True] * k,
            resolved_at=resolved_at if resolved_at is not None else [None] * k,
            metrics={},
        )
        return cls(
            index=index,
            question=ids[order],
            outcome=np.asarray(outcome, dtype=np.float64)[order],
            base_rate=np.asarray(base_rate, dtype=np.float64)[order],
            market_brier=_floats(market_brier)[order],
            market_log=_floats(market_log)[order],
            market_correct=_floats(market_correct)[order],
        )


def materialised_views(table: GradeTable) -> list[View]:
    """Every materialised view that holds at least one record (track x one filter x contamination)."""
    views: list[View] = []
    for contamination in (True, False):
        for track in TRACKS:
            base = View(track=track, contamination_filter=contamination)
            base_mask = table.mask(base)
            if not base_mask.any():
                continue
            views.append(base)
            for dimension, attr in (
                ("qtype", "question_type"),
                ("domain", "domain"),
                ("origin", "origin"),
                ("horizon", "horizon"),
            ):
                column: npt.NDArray[np.int32] = getattr(table, dimension)
                present = np.unique(column[base_mask])
                for code in present:
                    if not table.labels[dimension][int(code)]:
                        continue  # no value recorded: only reachable through the unfiltered view
                    changes: dict[str, Any] = {attr: table.labels[dimension][int(code)]}
                    views.append(replace(base, **changes))
    return views
