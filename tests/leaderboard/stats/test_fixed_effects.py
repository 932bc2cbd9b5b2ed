"""The fixed-effects fit recovers planted agent and question effects; agent choice of questions no longer pays."""

from __future__ import annotations

import numpy as np

from leaderboard.stats.fixed_effects import fit_fixed_effects


def _table(alpha: dict[int, float], gamma: dict[int, float], cells: list[tuple[int, int]]) -> tuple[list, list, list]:
    agents = [a for a, _ in cells]
    questions = [q for _, q in cells]
    return agents, questions, [alpha[a] + gamma[q] for a, q in cells]


def test_noiseless_table_recovers_planted_effects() -> None:
    rng = np.random.default_rng(7)
    alpha = {a: float(rng.uniform(0.05, 0.3)) for a in range(1, 31)}
    raw = {q: float(rng.normal(0, 0.05)) for q in range(100, 400)}
    centre = float(np.mean(list(raw.values())))
    gamma = {q: g - centre for q, g in raw.items()}  # the fit's normalisation: question effects average 0
    # Each agent answers a random half of the questions: an unbalanced, connected table.
    cells = [(a, q) for a in alpha for q in gamma if rng.random() < 0.5]
    fit = fit_fixed_effects(*_table(alpha, gamma, cells))
    for a, effect in fit.adjusted().items():
        assert abs(effect - alpha[a]) < 1e-6
    for q, effect in zip(fit.question_ids, fit.question_effect, strict=True):
        assert abs(effect - gamma[int(q)]) < 1e-6
    assert set(fit.comparable().values()) == {True}


def test_an_agent_on_hard_questions_is_not_punished() -> None:
    # Two equally skilled agents; one answers only the hard questions. Raw mean Brier ranks it worse,
    # the adjusted score ties them.
    alpha = {1: 0.1, 2: 0.1, 3: 0.2}
    gamma = {10: -0.05, 11: -0.05, 12: 0.1, 13: 0.1}
    cells = [(1, 10), (1, 11), (1, 12), (1, 13), (2, 12), (2, 13), (3, 10), (3, 11), (3, 12), (3, 13)]
    agents, questions, scores = _table(alpha, gamma, cells)
    raw_2 = np.mean([s for a, s in zip(agents, scores, strict=True) if a == 2])
    raw_1 = np.mean([s for a, s in zip(agents, scores, strict=True) if a == 1])
    assert raw_2 > raw_1
    adjusted = fit_fixed_effects(agents, questions, scores).adjusted()
    assert abs(adjusted[1] - adjusted[2]) < 1e-9
    assert adjusted[3] > adjusted[1]


def test_disconnected_groups_are_labelled_and_only_the_largest_is_comparable() -> None:
    agents = [1, 1, 2, 2, 3, 9]
    questions = [10, 11, 10, 11, 11, 99]  # agent 9 shares no question with anyone
    scores = [0.1, 0.2, 0.15, 0.25, 0.3, 0.4]
    fit = fit_fixed_effects(agents, questions, scores)
    assert fit.comparable() == {1: True, 2: True, 3: True, 9: False}
    # A lone agent's adjusted score is its own Brier (its only question is average by definition).
    assert abs(fit.adjusted()[9] - 0.4) < 1e-9


def test_nan_scores_are_ignored_and_empty_tables_fit_nothing() -> None:
    fit = fit_fixed_effects([1, 2], [10, 10], [0.2, float("nan")])
    assert list(fit.agent_ids) == [1]
    assert fit_fixed_effects([], [], []).adjusted() == {}
