"""Difficulty-adjusted Brier: a two-way fixed-effects fit over the grade table (ForecastBench).

Agents choose which questions they answer, so a mean Brier rewards picking easy questions. As in
ForecastBench's leaderboard, each observed score is modelled as

    Brier(agent i, question j) = alpha_i + gamma_j + error

and fitted by least squares over the observed (agent, question) cells only. ``gamma_j`` is the
question's difficulty; ``alpha_i`` is the agent's skill on a question of average difficulty, which
is the *difficulty-adjusted Brier* (lower is better; the Brier Index is computed on it as on a
plain Brier).

The model fixes only the differences alpha_i - alpha_k and gamma_j - gamma_l inside one connected
group of agents and questions (agents linked by shared questions). Each group is pinned by making
its question effects average to zero, so alpha_i is on the Brier scale. Agents in different groups
share no question, so their adjusted scores are not comparable; ``component`` says which group
each agent is in and the caller ranks one group only.

The solve is SciPy's LSQR on the sparse indicator design, with columns scaled to unit norm (the
standard preconditioning for LSQR); no hand-written solver.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import lsqr

# LSQR stops when the relative residual of the normal equations falls below these; the fit of a
# noiseless table must recover planted effects to 1e-6, so these sit well below that.
_TOLERANCE: Final = 1e-12
_MAX_ITERATIONS: Final = 20_000


@dataclass(frozen=True)
class FixedEffects:
    """The fit. Agent arrays are aligned with ``agent_ids``, question arrays with ``question_ids``."""

    agent_ids: npt.NDArray[np.int64]
    agent_effect: npt.NDArray[np.float64]  # difficulty-adjusted Brier per agent
    agent_n: npt.NDArray[np.int64]  # questions each agent contributed
    agent_component: npt.NDArray[np.int64]  # connected group of each agent (0 = the largest)
    question_ids: npt.NDArray[np.int64]
    question_effect: npt.NDArray[np.float64]  # difficulty: > 0 harder than average, < 0 easier
    question_n: npt.NDArray[np.int64]  # agents that answered each question
    question_component: npt.NDArray[np.int64]
    iterations: int

    def adjusted(self) -> dict[int, float]:
        return {int(a): float(e) for a, e in zip(self.agent_ids, self.agent_effect, strict=True)}

    def comparable(self) -> dict[int, bool]:
        """Agents in the largest connected group: the only ones whose adjusted scores are ranked."""
        return {int(a): bool(c == 0) for a, c in zip(self.agent_ids, self.agent_component, strict=True)}


def _empty() -> FixedEffects:
    i64 = np.zeros(0, dtype=np.int64)
    f64 = np.zeros(0, dtype=np.float64)
    return FixedEffects(i64, f64, i64, i64, i64, f64, i64, i64, 0)


def _components(a_idx: npt.NDArray[np.intp], q_idx: npt.NDArray[np.intp], n_a: int, n_q: int) -> Any:
    """Connected groups of the bipartite agent-question graph, relabelled so 0 is the largest."""
    edges = sparse.coo_matrix((np.ones(a_idx.size, dtype=np.int8), (a_idx, n_a + q_idx)), shape=(n_a + n_q, n_a + n_q))
    _, labels = connected_components(edges, directed=False)
    sizes = np.bincount(labels)
    # Largest group first; ties broken by the smallest label for a stable order.
    order = np.lexsort((np.arange(sizes.size), -sizes))
    relabel = np.empty_like(order)
    relabel[order] = np.arange(order.size)
    return relabel[labels]


def fit_fixed_effects(agent: Any, question: Any, score: Any) -> FixedEffects:
    """Fit Brier(i, j) = alpha_i + gamma_j over one record per (agent, question).

    ``agent`` and ``question`` are id arrays, ``score`` the Brier scores; NaN scores are ignored.
    """
    agent_a = np.asarray(agent, dtype=np.int64)
    question_a = np.asarray(question, dtype=np.int64)
    y = np.asarray(score, dtype=np.float64)
    keep = ~np.isnan(y)
    agent_a, question_a, y = agent_a[keep], question_a[keep], y[keep]
    if y.size == 0:
        return _empty()
    agent_ids, a_idx = np.unique(agent_a, return_inverse=True)
    question_ids, q_idx = np.unique(question_a, return_inverse=True)
    n_a, n_q, n = agent_ids.size, question_ids.size, y.size

    rows = np.concatenate([np.arange(n), np.arange(n)])
    cols = np.concatenate([a_idx, n_a + q_idx])
    design = sparse.csr_matrix((np.ones(2 * n), (rows, cols)), shape=(n, n_a + n_q))
    counts = np.concatenate([np.bincount(a_idx, minlength=n_a), np.bincount(q_idx, minlength=n_q)])
    scale = 1.0 / np.sqrt(counts)
    scaled = design @ sparse.diags(scale)
    result = lsqr(scaled, y, atol=_TOLERANCE, btol=_TOLERANCE, iter_lim=_MAX_ITERATIONS)
    beta = result[0] * scale
    alpha, gamma = beta[:n_a], beta[n_a:]

    labels = _components(a_idx, q_idx, n_a, n_q)
    agent_component, question_component = labels[:n_a], labels[n_a:]
    # Pin each group: its question effects average to zero, the shift moves to its agents.
    n_groups = int(labels.max()) + 1
    shift = np.bincount(question_component, weights=gamma, minlength=n_groups) / np.bincount(
        question_component, minlength=n_groups
    )
    gamma = gamma - shift[question_component]
    alpha = alpha + shift[agent_component]
    return FixedEffects(
        agent_ids=agent_ids,
        agent_effect=alpha,
        agent_n=counts[:n_a].astype(np.int64),
        agent_component=agent_component.astype(np.int64),
        question_ids=question_ids,
        question_effect=gamma,
        question_n=counts[n_a:].astype(np.int64),
        question_component=question_component.astype(np.int64),
        iterations=int(result[2]),
    )
