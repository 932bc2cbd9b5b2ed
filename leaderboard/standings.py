"""Standings maths: per-agent aggregation over grade records, bootstrap intervals, ranks, baselines.

Pure (numpy only, no Django): the services load grade rows into a :class:`GradeTable` and a
:class:`QuestionTable`, and this module turns them into :class:`StandingRow` objects per view.

* A *view* (:class:`View`) is a track (live/replay/all), optional question type, domain, origin and
  horizon bucket, the contamination filter (on by default) and an optional resolution-date window.
* Eligible records: current, non-void grades of the forecast that counts (the caller selects those).
  With the contamination filter on, records flagged ``contaminated`` (t0 precedes the agent's
  declared cutoff) are dropped, and so are replay records of agents without a declared cutoff.
* Every metric is the unweighted mean over the agent's eligible questions that have it, with its own n.
  KER exists only for forecasts that carried a graph (graded against a passing hindsight graph), so
  it is ranked over those alone; ``ker_coverage`` beside it is the share of the agent's forecasts
  graded against a hindsight graph that carried one (a record's value is 1 or 0).
* The Brier interval is a percentile bootstrap over the agent's questions: ``BOOTSTRAP_RESAMPLES``
  resamples of its questions with replacement, seeded by ``BOOTSTRAP_SEED`` and the sample size, so
  the same data always gives the same interval (a stable page). Resamples are drawn as multinomial
  count matrices shared by every sample of the same size, which turns thousands of bootstraps into
  a few matrix products.
* Ranks: by the view's rank metric (Brier, lower is better; in views without Brier questions the
  first of MIRAI second-level F1, open-ended F1, KER, SrcP that is present, higher is better).
  Equal values share a rank (1, 2, 2, 4). Agents with fewer than ``min_n`` questions carrying the
  rank metric are *provisional*: listed, not ranked.
* Baselines (binary questions only, computed from the same questions): ``market`` (the market's
  probability at each graded forecast's time, averaged per question; only where a price existed),
  ``always_half`` (p = 0.5) and ``base_rate`` (the Laplace-smoothed share of YES among binary
  questions resolved before the question's t0).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from grading.scoring.outcome import LOG_CLIP, brier_index

BOOTSTRAP_RESAMPLES: Final = 1000
BOOTSTRAP_SEED: Final = 20260101
CONFIDENCE: Final = 0.95

METRICS: Final[tuple[str, ...]] = (
    "accuracy",
    "brier",
    "log_score",
    "market_edge",
    "source_precision",
    "key_event_recall",
    "ker_coverage",
    "second_level_f1",
    "open_f1",
)
LOWER_IS_BETTER: Final = frozenset({"brier"})
# In order of preference: the first metric any agent of the view has is the one ranked on.
RANK_METRICS: Final[tuple[str, ...]] = ("brier", "second_level_f1", "open_f1", "key_event_recall", "source_precision")

TRACKS: Final[tuple[str, ...]] = ("all", "live", "replay")
ALL: Final = ""
# Horizon buckets on the question's horizon in days: (name, inclusive upper bound).
HORIZON_BUCKETS: Final[tuple[tuple[str, int | None], ...]] = (
    ("week", 7),
    ("month", 31),
    ("quarter", 92),
    ("long", None),
)
HORIZON_LABELS: Final[dict[str, str]] = {
    "week": "up to 7 days",
    "month": "8 to 31 days",
    "quarter": "32 to 92 days",
    "long": "more than 92 days",
}
BASELINES: Final[tuple[str, ...]] = ("market", "always_half", "base_rate")
BASELINE_LABELS: Final[dict[str, str]] = {
    "market": "Market price at forecast time",
    "always_half": "Always 0.5",
    "base_rate": "Base rate of earlier questions",
}
_TIE_TOLERANCE: Final = 1e-12
_HALF_LOG: Final = math.log(0.5)


def horizon_bucket(days: int | None) -> str:
    """The horizon bucket name of a question horizon in days."""
    d = 0 if days is None else int(days)
    for name, upper in HORIZON_BUCKETS:
        if upper is None or d <= upper:
            return name
    raise AssertionError("unreachable: the last bucket is open-ended")


# ------------------------------------------------------------------------------------ views


@dataclass(frozen=True, slots=True)
class View:
    """A leaderboard view; ``""`` means no filter on that dimension."""

    track: str = "all"
    question_type: str = ALL
    domain: str = ALL
    origin: str = ALL
    horizon: str = ALL
    contamination_filter: bool = True
    resolved_from: float | None = None  # epoch seconds, inclusive
    resolved_to: float | None = None  # epoch seconds, exclusive

    def __post_init__(self) -> None:
        if self.track not in TRACKS:
            raise ValueError(f"track must be one of {TRACKS}, got {self.track!r}")
        if self.horizon and self.horizon not in dict(HORIZON_BUCKETS):
            raise ValueError(f"horizon must be one of {[b for b, _ in HORIZON_BUCKETS]}, got {self.horizon!r}")

    @property
    def dimensions(self) -> int:
        return sum(1 for v in (self.question_type, self.domain, self.origin, self.horizon) if v)

    @property
    def has_window(self) -> bool:
        return self.resolved_from is not None or self.resolved_to is not None

    @property
    def materialised(self) -> bool:
        """Views kept as Standing rows: at most one attribute filter and no date window."""
        return self.dimensions <= 1 and not self.has_window

    def key(self) -> tuple[str, str, str, str, str, bool]:
        return (self.track, self.question_type, self.domain, self.origin, self.horizon, self.contamination_filter)


# ------------------------------------------------------------------------------------ tables


_DIMENSIONS: Final = ("track", "qtype", "domain", "origin")


def _codes(values: Iterable[str]) -> tuple[list[str], npt.NDArray[np.int32]]:
    """Factorise labels: (distinct labels in first-seen order, code of each value)."""
    mapping: dict[str, int] = {}
    codes = np.fromiter((mapping.setdefault(v or "", len(mapping)) for v in values), dtype=np.int32)
    return list(mapping), codes


def _floats(values: Any) -> npt.NDArray[np.float64]:
    # numpy turns None into NaN for a float dtype
    return np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=np.float64)


def horizon_buckets(days: Any) -> npt.NDArray[np.int32]:
    """Bucket index (into HORIZON_BUCKETS) of each horizon in days."""
    bounds = np.array([upper for _, upper in HORIZON_BUCKETS if upper is not None], dtype=np.float64)
    d = np.nan_to_num(_floats(days), nan=0.0)
    return np.searchsorted(bounds, d, side="left").astype(np.int32)


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
        domain, origin; ``horizon`` holds bucket indexes into HORIZON_BUCKETS. No per-record Python."""
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
            memo[key] = bool((~np.isnan(self.metrics[metric])).any())
        return memo[key]  # type: ignore[no-any-return]

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

    def question_ids_in(self, sel: npt.NDArray[np.intp]) -> npt.NDArray[np.int64]:
        """Sorted distinct question ids of the selected records."""
        memo = self._memo()
        if "questions" not in memo:
            memo["questions"] = np.unique(self.question, return_inverse=True)
        ids, inverse = memo["questions"]
        present = np.bincount(inverse[sel], minlength=ids.size) > 0
        return ids[present]  # type: ignore[no-any-return]


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


def base_rates(
    *,
    open_at: Sequence[float],
    resolved_at: Sequence[float],
    resolved_outcome: Sequence[float],
) -> npt.NDArray[np.float64]:
    """Laplace-smoothed YES share among questions resolved strictly before each ``open_at``.

    ``(1 + yes) / (2 + n)``: 0.5 when nothing had resolved yet.
    """
    times = np.asarray(resolved_at, dtype=np.float64)
    outcomes = np.asarray(resolved_outcome, dtype=np.float64)
    order = np.argsort(times, kind="stable")
    times, outcomes = times[order], outcomes[order]
    cum_yes = np.concatenate([[0.0], np.cumsum(outcomes)])
    before = np.searchsorted(times, np.asarray(open_at, dtype=np.float64), side="left")
    return (1.0 + cum_yes[before]) / (2.0 + before)


def market_from_grade(log_score: float, market_edge: float, outcome: float) -> tuple[float, float, float]:
    """(Brier, log score, correct) of the market, recovered from a binary grade's log score and edge.

    ``market_edge = log_score - market_log`` so the market gave ``p_y = exp(market_log)`` to what
    happened; binary Brier is ``(1 - p_y)^2`` and the market was right when ``P(yes) >= 0.5`` matched.
    """
    market_log = log_score - market_edge
    p_y = min(max(math.exp(market_log), 0.0), 1.0)
    correct = p_y >= 0.5 if outcome >= 0.5 else p_y > 0.5
    return (1.0 - p_y) ** 2, market_log, float(correct)


# ------------------------------------------------------------------------------------ results


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
        b = self.metrics["brier"].mean
        return None if b is None else brier_index(b)

    def value(self, metric: str) -> float | None:
        return self.metrics[metric].mean


@dataclass(slots=True)
class ViewResult:
    view: View
    rank_metric: str | None
    rows: list[StandingRow]


# ------------------------------------------------------------------------------------ bootstrap


_EXACT_BELOW: Final = 100
_POISSON_BLOCK: Final = 2048


def _multinomial_counts(n: int, rows: int, seed: int) -> npt.NDArray[np.float32]:
    """Seeded multinomial resample counts (rows x n): each row is one resample of n items."""
    rng = np.random.default_rng([seed, 0, n])
    idx = rng.integers(0, n, size=(rows, n), dtype=np.int64)
    idx += (np.arange(rows, dtype=np.int64) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float32)


class _PoissonWeights:
    """Seeded Poisson(1) weights (resamples x positions), grown block by block.

    Each block of columns has its own seed, so the weights of position i never depend on how many
    positions were asked for: a sample's interval depends only on its own values.
    """

    def __init__(self, resamples: int, seed: int) -> None:
        self.resamples = resamples
        self.seed = seed
        self.weights = np.zeros((resamples, 0), dtype=np.float32)
        self.cumulative = np.zeros((resamples, 0), dtype=np.float64)

    def upto(self, n: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]:
        have = self.weights.shape[1]
        if n > have:
            blocks = [self.weights]
            for b in range(have // _POISSON_BLOCK, -(-n // _POISSON_BLOCK)):
                rng = np.random.default_rng([self.seed, 1, b])
                blocks.append(rng.poisson(1.0, size=(self.resamples, _POISSON_BLOCK)).astype(np.float32))
            self.weights = np.ascontiguousarray(np.concatenate(blocks, axis=1))
            self.cumulative = np.cumsum(self.weights, axis=1, dtype=np.float64)
        return self.weights[:, :n], self.cumulative[:, n - 1]


def bootstrap_intervals(
    samples: Sequence[npt.NDArray[np.float64]],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> list[tuple[float, float]]:
    """Percentile bootstrap interval of the mean of each sample (same input -> same interval).

    Samples smaller than ``_EXACT_BELOW`` are resampled exactly (multinomial counts); larger ones
    with the Poisson bootstrap (each item weighted by an independent Poisson(1) count, the standard
    large-sample equivalent). Samples of equal size share one seeded weight matrix, so each group
    costs one matrix product. Intervals are widened to contain the sample mean (float rounding can
    push an all-equal sample's bound a hair past it).
    """
    if resamples < 1:
        raise ValueError("resamples must be >= 1")
    alpha = (1.0 - confidence) / 2.0
    out: list[tuple[float, float]] = [(math.nan, math.nan)] * len(samples)
    by_size: dict[int, list[int]] = defaultdict(list)
    for i, s in enumerate(samples):
        by_size[len(s)].append(i)
    poisson = _PoissonWeights(resamples, seed)
    buckets: dict[int, list[int]] = defaultdict(list)
    for n in sorted(by_size):
        members = by_size[n]
        if n == 0:
            continue
        if n == 1:
            for i in members:
                p = float(np.asarray(samples[i], dtype=np.float64)[0])
                out[i] = (p, p)
            continue
        if n < _EXACT_BELOW:
            values = np.stack([np.asarray(samples[i], dtype=np.float32) for i in members], axis=1)
            means = (_multinomial_counts(n, resamples, seed) @ values) / np.float32(n)
            _store_quantiles(out, members, values.astype(np.float64).mean(axis=0), means, alpha)
            continue
        # Zero-padded to a shared width (at most 1/8 more), so one matrix product serves many sizes.
        step = 1 << max(0, n.bit_length() - 4)
        buckets[-(-n // step) * step].extend(members)
    for width, members in sorted(buckets.items()):
        weights, _ = poisson.upto(width)
        sizes = np.fromiter((len(samples[i]) for i in members), dtype=np.int64, count=len(members))
        # every sample into its own zero-padded column, in one scatter
        flat = np.concatenate([np.asarray(samples[i], dtype=np.float32) for i in members])
        starts = np.cumsum(sizes) - sizes
        values = np.zeros((width, len(members)), dtype=np.float32)
        values[np.arange(flat.size) - np.repeat(starts, sizes), np.repeat(np.arange(len(members)), sizes)] = flat
        totals = poisson.cumulative[:, sizes - 1]
        sums = weights @ values
        means = np.divide(sums, totals, out=np.full_like(sums, np.nan), where=totals > 0)
        # an all-zero resample (probability e^-n) carries no information: count it at the mean
        points = values.sum(axis=0) / sizes
        means = np.where(totals > 0, means, points[None, :].astype(np.float32))
        _store_quantiles(out, members, values.astype(np.float64).sum(axis=0) / sizes, means, alpha)
    return out


def _store_quantiles(
    out: list[tuple[float, float]],
    members: Sequence[int],
    points: npt.NDArray[np.float64],
    means: npt.NDArray[Any],
    alpha: float,
) -> None:
    # one contiguous row per sample: partitioning along the strided axis is several times slower
    lo, hi = np.quantile(np.ascontiguousarray(means.T), [alpha, 1.0 - alpha], axis=1)
    for i, p, low, high in zip(members, points.tolist(), lo.tolist(), hi.tolist(), strict=True):
        out[i] = (min(low, p), max(high, p))


# ------------------------------------------------------------------------------------ ranking


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
    nor provisional. Equal values (within ``_TIE_TOLERANCE`` of the first of a run) share a rank.
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
        if previous is None or value > previous + _TIE_TOLERANCE:
            current = position
            previous = value
        ranks.append(current)
    rank[eligible[order]] = ranks
    return metric, rank, provisional


def assign_ranks(rows: Sequence[StandingRow], *, min_n: int) -> str | None:
    """Rank agent rows in place (baselines are never ranked); returns the rank metric used."""
    is_agent = np.array([not r.baseline for r in rows], dtype=bool)
    agent_ids = np.array([r.agent_id or 0 for r in rows], dtype=np.int64)
    means = {
        m: np.array([math.nan if r.metrics[m].mean is None else r.metrics[m].mean for r in rows], dtype=np.float64)
        for m in RANK_METRICS
    }
    counts = {m: np.array([r.metrics[m].n for r in rows], dtype=np.int64) for m in RANK_METRICS}
    metric, rank, provisional = rank_columns(
        is_agent=is_agent, agent_ids=agent_ids, means=means, counts=counts, min_n=min_n
    )
    for r, k, p in zip(rows, rank.tolist(), provisional.tolist(), strict=True):
        r.rank = k or None
        r.provisional = bool(p)
    return metric


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


def sort_key(row: StandingRow, rank_metric: str | None) -> tuple[Any, ...]:
    """Display order of one row (same order as :func:`display_order`)."""
    value = row.value(rank_metric) if rank_metric else None
    sign = 1.0 if rank_metric in LOWER_IS_BETTER else -1.0
    return (
        0 if row.rank is not None else 1,
        row.rank or 0,
        value is None,
        sign * (value or 0.0),
        row.agent_id or 0,
    )


# ------------------------------------------------------------------------------------ aggregation


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


def _agent_columns(
    table: GradeTable, sel: npt.NDArray[np.intp]
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
        values = table.metrics[metric][sel]
        ok = ~np.isnan(values)
        n_m = np.bincount(idx[ok], minlength=size)
        sums = np.bincount(idx[ok], weights=values[ok], minlength=size)
        means[metric] = np.divide(sums, n_m, out=np.full(size, np.nan), where=n_m > 0)
        counts[metric] = n_m.astype(np.int64)
        if metric == "brier":
            samples = np.split(values[ok], np.cumsum(n_m)[:-1])
    return agents[starts], count, means, counts, samples


def _baseline_columns(
    questions: QuestionTable, question_ids: npt.NDArray[np.int64]
) -> tuple[list[str], dict[str, list[float]], dict[str, list[int]], list[npt.NDArray[np.float64]]]:
    """(names, means, counts, Brier samples) of the baselines that have Brier questions in the view."""
    names: list[str] = []
    means: dict[str, list[float]] = {m: [] for m in METRICS}
    counts: dict[str, list[int]] = {m: [] for m in METRICS}
    samples: list[npt.NDArray[np.float64]] = []
    if questions.question.size == 0 or question_ids.size == 0:
        return names, means, counts, samples
    present = question_ids[np.isin(question_ids, questions.question)]
    pos = np.searchsorted(questions.question, present)
    if pos.size == 0:
        return names, means, counts, samples
    y = questions.outcome[pos]
    per_baseline: dict[str, dict[str, npt.NDArray[np.float64]]] = {}
    half = np.full(y.size, 0.5)
    for name, p_yes in (("always_half", half), ("base_rate", questions.base_rate[pos])):
        p_y = np.where(y >= 0.5, p_yes, 1.0 - p_yes)
        per_baseline[name] = {
            "brier": (p_yes - y) ** 2,
            "log_score": np.log(np.clip(p_y, LOG_CLIP, 1.0 - LOG_CLIP)),
            "accuracy": ((p_yes >= 0.5) == (y >= 0.5)).astype(np.float64),
        }
    per_baseline["market"] = {
        "brier": questions.market_brier[pos],
        "log_score": questions.market_log[pos],
        "accuracy": questions.market_correct[pos],
    }
    for name in BASELINES:
        cols = per_baseline[name]
        brier = cols["brier"][~np.isnan(cols["brier"])]
        if brier.size == 0:
            continue
        names.append(name)
        for metric in METRICS:
            values = cols.get(metric)
            kept = np.zeros(0) if values is None else values[~np.isnan(values)]
            means[metric].append(float(kept.mean()) if kept.size else math.nan)
            counts[metric].append(int(kept.size))
        samples.append(brier)
    return names, means, counts, samples


def compute_view_columns(
    table: GradeTable,
    questions: QuestionTable,
    views: Sequence[View],
    *,
    min_n: int,
    bootstrap: bool = True,
    agents: Iterable[int] | None = None,
    baselines: bool = True,
) -> list[ViewColumns]:
    """Standing rows of every view as columns; all bootstraps of the call run batched together.

    ``agents`` limits the agent rows computed (incremental updates); ranks are then left to the caller.
    """
    wanted = None if agents is None else np.asarray(sorted(set(agents)), dtype=np.int64)
    results: list[ViewColumns] = []
    samples: list[npt.NDArray[np.float64]] = []
    owners: list[tuple[int, int]] = []
    for number, view in enumerate(views):
        sel = np.flatnonzero(table.mask(view))
        if wanted is not None:
            sel = sel[np.isin(table.agent[sel], wanted)]
        agent_ids, n, means, counts, brier_samples = _agent_columns(table, sel)
        names: list[str] = []
        if baselines:
            names, b_means, b_counts, b_samples = _baseline_columns(questions, questions.members(view))
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
                is_agent=is_agent, agent_ids=agent_ids, means=means, counts=counts, min_n=min_n
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
) -> list[ViewResult]:
    """Standing rows of every view (see :func:`compute_view_columns`), as :class:`StandingRow` objects."""
    return [
        ViewResult(view=c.view, rank_metric=c.rank_metric, rows=c.rows())
        for c in compute_view_columns(
            table, questions, views, min_n=min_n, bootstrap=bootstrap, agents=agents, baselines=baselines
        )
    ]


def market_aggregates(
    *,
    question: npt.NDArray[np.int64],
    log_score: npt.NDArray[np.float64],
    market_edge: npt.NDArray[np.float64],
) -> tuple[
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
]:
    """Per question of the given grade records: (ids, n with a market price, mean market log score,
    mean market Brier, records where the market put >= 0.5 strictly above / within 1e-12 of 0.5 on
    the outcome). The market's log score is ``log_score - market_edge``; NaN where no price existed.

    Sums run in record order: callers pass records in (agent, question) order so every path that
    builds the baselines gets the same floating-point sums.
    """
    ids, inverse = np.unique(question, return_inverse=True)
    size = ids.size
    has = ~np.isnan(market_edge) & ~np.isnan(log_score)
    at = inverse[has]
    log = log_score[has]
    edge = market_edge[has]
    market_log = log - edge
    m_n = np.bincount(at, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        m_log = np.bincount(at, weights=market_log, minlength=size) / m_n
        m_brier = np.bincount(at, weights=(1.0 - np.exp(market_log)) ** 2, minlength=size) / m_n
    threshold = edge + _HALF_LOG
    above = np.bincount(at, weights=(log > threshold + _TIE_TOLERANCE), minlength=size)
    tie = np.bincount(
        at, weights=(log <= threshold + _TIE_TOLERANCE) & (log >= threshold - _TIE_TOLERANCE), minlength=size
    )
    return (
        ids.astype(np.int64),
        m_n.astype(np.int64),
        m_log,
        m_brier,
        above.astype(np.int64),
        tie.astype(np.int64),
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


def views_touching(*, track: str, qtype: str, domain: str, origin: str, horizon_days: int | None) -> list[View]:
    """The materialised views a question with these attributes belongs to."""
    bucket = horizon_bucket(horizon_days)
    out: list[View] = []
    for contamination in (True, False):
        for t in ("all", track):
            base = View(track=t, contamination_filter=contamination)
            out.append(base)
            out.append(replace(base, question_type=qtype))
            if domain:
                out.append(replace(base, domain=domain))
            if origin:
                out.append(replace(base, origin=origin))
            out.append(replace(base, horizon=bucket))
    return out


__all__ = [
    "ALL",
    "BASELINES",
    "BASELINE_LABELS",
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "CONFIDENCE",
    "HORIZON_BUCKETS",
    "HORIZON_LABELS",
    "METRICS",
    "RANK_METRICS",
    "TRACKS",
    "GradeTable",
    "MetricValue",
    "QuestionTable",
    "StandingRow",
    "View",
    "ViewColumns",
    "ViewResult",
    "assign_ranks",
    "base_rates",
    "bootstrap_intervals",
    "compute_view_columns",
    "compute_views",
    "display_order",
    "horizon_bucket",
    "market_aggregates",
    "market_from_grade",
    "materialised_views",
    "rank_columns",
    "views_touching",
]
