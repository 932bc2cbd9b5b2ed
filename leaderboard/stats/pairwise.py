"""Pairwise confidence: how often one agent beats another when their shared questions are resampled.

For two agents and the questions both answered, draw ``resamples`` bootstrap samples of those
questions (with replacement, a fixed seed so the page is stable) and count the share of samples in
which the first agent's mean score is better than the second's; a tie counts as half. A share near
1 or 0 means the gap is real; near 0.5 means the two cannot be told apart on these questions.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

PAIRWISE_RESAMPLES: Final = 1000
PAIRWISE_SEED: Final = 20260102
_TIE: Final = 1e-12


def win_share(
    first: Any,
    second: Any,
    *,
    lower_is_better: bool = True,
    resamples: int = PAIRWISE_RESAMPLES,
    seed: int = PAIRWISE_SEED,
) -> float:
    """Share of resamples in which ``first`` beats ``second``; both are scores on the same questions,
    aligned by position. NaN when they share no question."""
    a = np.asarray(first, dtype=np.float64)
    b = np.asarray(second, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError("both agents' scores must be aligned on the same questions")
    keep = ~(np.isnan(a) | np.isnan(b))
    diff = (a - b)[keep] if lower_is_better else (b - a)[keep]
    n = diff.size
    if n == 0:
        return float("nan")
    rng = np.random.default_rng(seed + n)
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples)
    mean_diff = counts @ diff / n
    wins = np.count_nonzero(mean_diff < -_TIE) + 0.5 * np.count_nonzero(np.abs(mean_diff) <= _TIE)
    return float(wins / resamples)
