"""Which score ranks a view, and where the platform's baselines stand among the ranked agents."""

from __future__ import annotations

import numpy as np

from leaderboard.stats.metrics import RANK_METRICS
from leaderboard.stats.ranking import enough_shared, places, rank_metric_of


def counts(**given: list[int]) -> dict[str, np.ndarray]:
    size = len(next(iter(given.values())))
    return {m: np.asarray(given.get(m, [0] * size)) for m in RANK_METRICS}


def test_enough_agents_share_questions() -> None:
    assert enough_shared(np.array([10, 12, 3]), min_n=10)
    assert not enough_shared(np.array([10, 9, 3]), min_n=10)


def test_the_adjusted_brier_ranks_only_with_enough_sharing() -> None:
    agents = np.array([True, True, True])
    shared = counts(brier_adjusted=[12, 11, 2], brier=[15, 11, 2])
    assert rank_metric_of(is_agent=agents, counts=shared, min_n=10) == "brier_adjusted"
    few = counts(brier_adjusted=[12, 4, 2], brier=[15, 11, 2])
    assert rank_metric_of(is_agent=agents, counts=few, min_n=10) == "brier"
    relation = counts(second_level_f1=[3, 0, 0])
    assert rank_metric_of(is_agent=agents, counts=relation, min_n=10) == "second_level_f1"


def test_places_of_baselines_among_ranked_agents() -> None:
    ranked = np.array([0.10, 0.15, 0.20, 0.30])
    spots = places(ranked, np.array([0.25, 0.05, 0.15, np.nan]), rank_metric="brier")
    assert spots.tolist() == [4, 1, 2, 0]  # a tie stands with the agent it ties; no value: no place
    higher = places(np.array([0.9, 0.5]), np.array([0.6]), rank_metric="open_f1")
    assert higher.tolist() == [2]
