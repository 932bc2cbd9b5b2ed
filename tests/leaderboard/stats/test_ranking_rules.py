"""Which score ranks a view, and where the platform's baselines stand among the ranked agents."""

from __future__ import annotations

import numpy as np

from leaderboard.stats.metrics import RANK_METRICS
from leaderboard.stats.ranking import enough_shared, places, rank_columns, rank_metric_of


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


def test_baseline_agents_help_choose_the_rank_metric_but_take_no_rank() -> None:
    # Two baseline agents with many shared questions and one competing agent: the adjusted Brier
    # ranks (their forecasts are real), but only the competing agent gets a rank; the baseline
    # agents are neither ranked nor provisional.
    shared = counts(brier_adjusted=[30, 30, 12], brier=[30, 30, 12])
    means = {m: np.array([0.10, 0.20, 0.30]) if m.startswith("brier") else np.full(3, np.nan) for m in RANK_METRICS}
    metric, rank, provisional = rank_columns(
        is_agent=np.array([True, True, True]),
        agent_ids=np.array([1, 2, 3]),
        means=means,
        counts=shared,
        min_n=10,
        rankable=np.array([False, False, True]),
    )
    assert metric == "brier_adjusted"
    assert rank.tolist() == [0, 0, 1]
    assert provisional.tolist() == [False, False, False]
    assert places(np.array([0.30]), np.array([0.10, 0.20]), rank_metric=metric).tolist() == [1, 1]
