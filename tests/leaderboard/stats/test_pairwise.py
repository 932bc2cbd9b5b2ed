"""Pairwise confidence: the share of bootstrap resamples in which one agent beats another."""

from __future__ import annotations

import math

import numpy as np

from leaderboard.stats.pairwise import win_share


def test_a_dominating_agent_wins_every_resample() -> None:
    rng = np.random.default_rng(1)
    worse = rng.uniform(0.2, 0.5, size=40)
    better = worse - 0.05
    assert win_share(better, worse) == 1.0
    assert win_share(worse, better) == 0.0


def test_identical_agents_tie_at_half() -> None:
    scores = np.linspace(0.1, 0.4, 12)
    assert win_share(scores, scores) == 0.5


def test_higher_is_better_metrics_and_stability() -> None:
    rng = np.random.default_rng(2)
    a = rng.uniform(size=30)
    b = rng.uniform(size=30)
    share = win_share(a, b, lower_is_better=False)
    assert 0.0 <= share <= 1.0
    assert share == win_share(a, b, lower_is_better=False)  # fixed seed: a stable page
    assert abs(share + win_share(b, a, lower_is_better=False) - 1.0) < 1e-12


def test_no_shared_question() -> None:
    assert math.isnan(win_share([math.nan], [0.2]))
