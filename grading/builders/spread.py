"""How far the story reaches: the offline builder's "spread relevance" stage (pure; no Django).

Personalized PageRank (Haveliwala, WWW 2002) over the item graph: a walker starts at an item that
certainly belongs to the question's story (a seed), follows links in proportion to their weight,
and jumps back to the seeds with probability ``RESTART`` at every step. An item's score is the
share of time the walker spends there: high for items close to many seeds through strong links
(the protests that led to a prime minister's resignation, the interim government that called the
election), low for items that share only a hub word with the story. This is the "influence" of
Shahaf and Guestrin's Connecting the Dots, computed by power iteration with scipy.sparse.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
from scipy import sparse

RESTART = 0.3
ITERATIONS = 100
TOLERANCE = 1e-10

Scores = npt.NDArray[np.float64]


def personalized_pagerank(weights: sparse.csr_matrix, seeds: Mapping[int, float]) -> Scores:
    """Scores summing to 1 over the rows of ``weights`` (symmetric, non-negative), restarting at
    ``seeds`` (row -> weight). A row without links sends its walker back to the seeds."""
    n = weights.shape[0]
    restart = np.zeros(n, dtype=np.float64)
    for row, weight in seeds.items():
        restart[row] += max(0.0, weight)
    if n == 0 or restart.sum() <= 0:
        return np.zeros(n, dtype=np.float64)
    restart /= restart.sum()
    out_weight = np.asarray(weights.sum(axis=1)).ravel()
    dangling = out_weight <= 0
    inverse = np.divide(1.0, out_weight, out=np.zeros_like(out_weight), where=~dangling)
    # Column-stochastic transition: walker at j moves to i with probability w_ji / out_j.
    transition = (sparse.diags(inverse) @ weights).T.tocsr()
    scores = restart.copy()
    for _ in range(ITERATIONS):
        walked = transition @ scores + scores[dangling].sum() * restart
        updated = RESTART * restart + (1 - RESTART) * walked
        if np.abs(updated - scores).sum() < TOLERANCE:
            scores = updated
            break
        scores = updated
    return scores
