"""Difficulty-adjusted Brier and peer score per record and per agent, on small grade tables."""

from __future__ import annotations

import math

import numpy as np
import pytest

from leaderboard.stats.columns import compute_views
from leaderboard.stats.difficulty import (
    attach_relative_scores,
    fit_difficulty,
    one_step_effects,
    question_stats,
    table_difficulty,
    table_question_stats,
)
from leaderboard.stats.tables import GradeTable, QuestionTable
from leaderboard.stats.views import View


def rec(agent: int, question: int, brier: float, **kw: object) -> dict[str, object]:
    # log score of a binary forecast with that Brier on a YES question: p = 1 - sqrt(Brier)
    out: dict[str, object] = {"agent": agent, "question": question, "brier": brier}
    out["log_score"] = math.log(1 - math.sqrt(brier))
    out.update(kw)
    return out


def enriched(records: list[dict[str, object]]) -> tuple[GradeTable, dict]:
    table = GradeTable.from_records(records)
    stats = {flag: table_question_stats(table, flag, table_difficulty(table, flag)) for flag in (True, False)}
    attach_relative_scores(table, stats)
    return table, stats


def rows(records: list[dict[str, object]], view: View | None = None, *, min_n: int = 1) -> dict:
    table, stats = enriched(records)
    result = compute_views(table, QuestionTable.empty(), [view or View()], min_n=min_n, stats=stats)[0]
    return {r.agent_id: r for r in result.rows}, result.rank_metric


def test_an_agent_that_chose_hard_questions_is_not_punished() -> None:
    # Agents 1 and 2 are equally good; 2 answered only the two hard questions, 3 is worse everywhere.
    alpha = {1: 0.10, 2: 0.10, 3: 0.20}
    gamma = {10: -0.05, 11: -0.05, 12: 0.10, 13: 0.10}
    cells = [(1, 10), (1, 11), (1, 12), (1, 13), (2, 12), (2, 13), (3, 10), (3, 11), (3, 12), (3, 13)]
    by_agent, metric = rows([rec(a, q, alpha[a] + gamma[q]) for a, q in cells], min_n=2)
    assert metric == "brier_adjusted"  # three agents share two or more questions
    assert by_agent[2].metrics["brier"].mean > by_agent[1].metrics["brier"].mean  # the raw mean punishes 2
    assert by_agent[1].metrics["brier_adjusted"].mean == pytest.approx(by_agent[2].metrics["brier_adjusted"].mean)
    assert by_agent[1].rank == by_agent[2].rank == 1 and by_agent[3].rank == 3


def test_adjusted_brier_is_the_fitted_agent_effect_and_counts_shared_questions() -> None:
    records = [rec(1, 10, 0.04), rec(1, 11, 0.36), rec(2, 10, 0.16), rec(2, 11, 0.25), rec(1, 99, 0.01)]
    table, _ = enriched(records)
    fit = fit_difficulty(table.agent, table.question, table.metrics["brier"])
    by_agent, _ = rows(records)
    effects = dict(zip(fit.agent.tolist(), fit.agent_effect.tolist(), strict=True))
    assert by_agent[1].metrics["brier_adjusted"].mean == pytest.approx(effects[1], abs=1e-9)
    assert by_agent[2].metrics["brier_adjusted"].mean == pytest.approx(effects[2], abs=1e-9)
    # question 99 was answered by agent 1 alone: it says nothing about skill and is not counted
    assert by_agent[1].metrics["brier_adjusted"].n == 2


def test_too_few_sharing_agents_fall_back_to_brier() -> None:
    records = [rec(1, q, 0.1) for q in range(5)] + [rec(2, 0, 0.2)]
    _, metric = rows(records, min_n=3)
    assert metric == "brier"


def test_peer_scores_of_two_agents_on_a_question_sum_to_zero_in_the_standings() -> None:
    records = [rec(1, 10, 0.04), rec(2, 10, 0.36)]
    by_agent, _ = rows(records)
    first, second = by_agent[1].metrics["peer_score"].mean, by_agent[2].metrics["peer_score"].mean
    assert first == pytest.approx(100 * (math.log(0.8) - math.log(0.4)))
    assert first + second == pytest.approx(0.0, abs=1e-9)


def test_contaminated_records_are_left_out_of_the_others_for_the_filtered_view() -> None:
    records = [rec(1, 10, 0.04), rec(2, 10, 0.36), rec(3, 10, 0.0001, contaminated=True)]
    on, _ = rows(records)
    off, _ = rows(records, View(contamination_filter=False))
    assert 3 not in on
    assert on[1].metrics["peer_score"].mean == pytest.approx(100 * (math.log(0.8) - math.log(0.4)))
    assert off[1].metrics["peer_score"].mean < on[1].metrics["peer_score"].mean  # 3 joins the field


def test_one_step_difficulty_of_a_new_question() -> None:
    ids, effects = one_step_effects([7, 7, 8], [1, 2, 3], [0.30, 0.40, 0.5], agent_ids=[1, 2], agent_effect=[0.1, 0.2])
    assert ids.tolist() == [7, 8]
    assert effects[0] == pytest.approx(0.2)  # mean of 0.30 - 0.1 and 0.40 - 0.2
    assert np.isnan(effects[1])  # nobody with a fitted effect answered it


def test_stats_lookups_on_unknown_questions() -> None:
    stats = question_stats([], [], [], effect_question=[], effect=[])
    assert np.isnan(stats.adjusted_effect([5])).all() and np.isnan(stats.mean_log([5])).all()


def test_a_question_nobody_else_answered_moves_no_score() -> None:
    records = [rec(1, 10, 0.04), rec(1, 11, 0.36), rec(2, 10, 0.16), rec(2, 11, 0.25)]
    before = fit_difficulty(*zip(*[(r["agent"], r["question"], r["brier"]) for r in records], strict=True))
    after = fit_difficulty(
        *zip(*[(r["agent"], r["question"], r["brier"]) for r in [*records, rec(2, 12, 0.81)]], strict=True)
    )
    assert after.agent_effect.tolist() == pytest.approx(before.agent_effect.tolist(), abs=1e-9)
    assert after.effect[:2].tolist() == pytest.approx(before.effect.tolist(), abs=1e-9)
