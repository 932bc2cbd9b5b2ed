"""Percentile bootstrap intervals of many means at once.

The Brier interval is a percentile bootstrap over the agent's questions: ``BOOTSTRAP_RESAMPLES``
resamples of its questions with replacement, seeded by ``BOOTSTRAP_SEED`` and the sample size, so
the same data always gives the same interval (a stable page). Resamples are drawn as multinomial
count matrices shared by every sample of the same size, which turns thousands of bootstraps into
a few matrix products.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

BOOTSTRAP_RESAMPLES: Final = 1000
BOOTSTRAP_SEED: Final = 20260101
CONFIDENCE: Final = 0.95
EXACT_BELOW: Final = 100
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

    Samples smaller than ``EXACT_BELOW`` are resampled exactly (multinomial counts); larger ones
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
        if n < EXACT_BELOW:
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
