"""Standings maths on constructed grade records (no database)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from leaderboard.stats.baselines import base_rates, market_from_grade
from leaderboard.stats.bootstrap import bootstrap_intervals
from leaderboard.stats.columns import compute_views
from leaderboard.stats.tables import GradeTable, QuestionTable, materialised_views
from leaderboard.stats.views import View, horizon_bucket


def rec(agent: int, question: int, brier: float | None, **kw: object) -> dict[str, object]:
    out: dict[str, object] = {"agent": agent, "question": question, "brier": brier}
    if brier is not None:
        out.setdefault("accuracy", 1.0 if brier < 0.25 else 0.0)
    out.update(kw)
    return out


def run(
    records: list[dict[str, object]],
    view: View | None = None,
    *,
    min_n: int = 1,
    questions: QuestionTable | None = None,
):
    table = GradeTable.from_records(records)
    return compute_views(table, questions or QuestionTable.empty(), [view or View()], min_n=min_n)[0]


def test_ranks_lower_brier_first_and_ties_share_a_rank() -> None:
    records = (
        [rec(1, q, 0.1) for q in range(3)] + [rec(2, q, 0.1) for q in range(3)] + [rec(3, q, 0.3) for q in range(3)]
    )
    result = run(records)
    ranks = {r.agent_id: r.rank for r in result.rows}
    assert result.rank_metric == "brier"
    assert ranks == {1: 1, 2: 1, 3: 3}


def test_minimum_n_makes_agents_provisional_and_unranked() -> None:
    records = [rec(1, q, 0.2) for q in range(5)] + [rec(2, q, 0.01) for q in range(2)]
    result = run(records, min_n=3)
    by_agent = {r.agent_id: r for r in result.rows}
    assert by_agent[2].provisional and by_agent[2].rank is None
    assert by_agent[1].rank == 1 and not by_agent[1].provisional
    assert [r.agent_id for r in result.rows] == [1, 2]  # ranked first, provisional after


def test_interval_contains_point_and_is_stable() -> None:
    rng = np.random.default_rng(3)
    for n in (1, 2, 5, 50, 150, 700):
        records = [rec(1, q, float(b)) for q, b in enumerate(rng.random(n))]
        first = run(records).rows[0]
        second = run(records).rows[0]
        b = first.metrics["brier"].mean
        assert first.brier_lo is not None and first.brier_hi is not None and b is not None
        assert first.brier_lo <= b <= first.brier_hi
        assert (first.brier_lo, first.brier_hi) == (second.brier_lo, second.brier_hi)
        if n >= 50:
            assert first.brier_hi - first.brier_lo < 0.3


def test_bootstrap_interval_width_matches_standard_error() -> None:
    values = np.random.default_rng(7).random(400)
    ((lo, hi),) = bootstrap_intervals([values])
    se = values.std(ddof=1) / math.sqrt(values.size)
    assert hi - lo == pytest.approx(2 * 1.96 * se, rel=0.2)


def test_view_filters_by_track_type_domain_origin_horizon_and_window() -> None:
    records = [
        rec(
            1,
            1,
            0.1,
            track="live",
            qtype="binary",
            domain="politics",
            origin="market",
            horizon_days=3,
            resolved_at=100.0,
        ),
        rec(
            1,
            2,
            0.3,
            track="replay",
            qtype="binary",
            domain="economy",
            origin="news",
            horizon_days=60,
            resolved_at=200.0,
        ),
        rec(
            1,
            3,
            0.5,
            track="live",
            qtype="multiple_choice",
            domain="politics",
            origin="news",
            horizon_days=20,
            resolved_at=300.0,
        ),
    ]
    assert run(records, View(track="live")).rows[0].n == 2
    # the grade's Brier as graded (a multiple-choice Brier is already halved onto [0, 1])
    assert run(records, View(question_type="multiple_choice")).rows[0].metrics["brier"].mean == 0.5
    assert run(records, View(domain="economy")).rows[0].n == 1
    assert run(records, View(origin="news")).rows[0].n == 2
    assert run(records, View(horizon="quarter")).rows[0].n == 1
    assert run(records, View(resolved_from=150.0, resolved_to=250.0)).rows[0].n == 1
    assert run(records, View(domain="nowhere")).rows == []


def test_contamination_filter_and_agents_without_cutoff() -> None:
    records = [
        rec(1, 1, 0.1),
        rec(1, 2, 0.9, contaminated=True),
        rec(2, 3, 0.2, track="replay", cutoff_declared=False),
        rec(2, 4, 0.2, track="live", cutoff_declared=False),
    ]
    on = {r.agent_id: r for r in run(records).rows}
    off = {r.agent_id: r for r in run(records, View(contamination_filter=False)).rows}
    assert on[1].n == 1 and off[1].n == 2
    assert on[2].n == 1 and off[2].n == 2  # replay forecast of an agent with no cutoff dropped
    assert run(records, View(track="replay")).rows == []


def test_each_metric_has_its_own_n_and_rank_metric_falls_back() -> None:
    records = [
        rec(1, 1, None, qtype="relation", second_level_f1=0.4),
        rec(1, 2, None, qtype="relation", second_level_f1=0.6, key_event_recall=0.4),
        rec(2, 1, None, qtype="relation", second_level_f1=0.7),
    ]
    result = run(records)
    assert result.rank_metric == "second_level_f1"
    by_agent = {r.agent_id: r for r in result.rows}
    assert by_agent[1].metrics["second_level_f1"].mean == pytest.approx(0.5)
    assert by_agent[1].metrics["key_event_recall"].n == 1
    assert by_agent[2].rank == 1 and by_agent[1].rank == 2  # higher F1 is better
    assert by_agent[1].metrics["brier"].n == 0 and by_agent[1].brier_lo is None


def test_base_rates_use_only_earlier_resolutions() -> None:
    rates = base_rates(open_at=[0.0, 15.0, 100.0], resolved_at=[10.0, 20.0, 30.0], resolved_outcome=[1.0, 1.0, 0.0])
    assert rates.tolist() == [0.5, pytest.approx(2 / 3), pytest.approx(3 / 5)]


def test_market_recovered_from_grade() -> None:
    p_market = 0.8
    log_forecast = math.log(0.6)
    edge = log_forecast - math.log(p_market)  # outcome yes
    brier, log, correct = market_from_grade(log_forecast, edge)
    assert brier == pytest.approx(0.04) and log == pytest.approx(math.log(0.8)) and correct == 1.0
    # A market at exactly 0.5 makes no call, like any forecast at the boundary.
    edge_at_half = log_forecast - math.log(0.5)
    assert market_from_grade(log_forecast, edge_at_half)[2] == 0.0


def test_baselines_over_the_views_questions() -> None:
    records = [rec(1, q, 0.1) for q in (1, 2, 3)]
    questions = QuestionTable.build(
        question=[1, 2, 3],
        outcome=[1.0, 0.0, 1.0],
        base_rate=[0.5, 0.75, 0.5],
        market_brier=[0.04, None, 0.09],
        market_log=[math.log(0.8), None, math.log(0.7)],
        market_correct=[1.0, None, 1.0],
    )
    result = run(records, questions=questions)
    baselines = {r.baseline: r for r in result.rows if r.baseline}
    assert baselines["always_half"].metrics["brier"].mean == pytest.approx(0.25)
    assert baselines["always_half"].rank is None
    # 0.5 makes no call: never right, whatever the outcome. The base rate is wrong on question 2
    # (0.75 on a NO question) and makes no call on the others.
    assert baselines["always_half"].metrics["accuracy"].mean == 0.0
    assert baselines["base_rate"].metrics["accuracy"].mean == 0.0
    assert baselines["base_rate"].metrics["brier"].mean == pytest.approx((0.25 + 0.5625 + 0.25) / 3)
    assert baselines["market"].metrics["brier"].n == 2  # only where a market price existed
    assert baselines["market"].brier_lo is not None


def test_materialised_views_cover_each_filter_once() -> None:
    records = [rec(1, 1, 0.1, domain="politics"), rec(1, 2, 0.2, domain="", track="replay")]
    views = materialised_views(GradeTable.from_records(records))
    keys = {v.key() for v in views}
    assert ("all", "", "politics", "", "", True) in keys
    assert ("replay", "", "", "", "", False) in keys
    assert all(v.dimensions <= 1 for v in views)


def test_bad_input_is_rejected() -> None:
    with pytest.raises(ValueError, match="more than one record"):
        GradeTable.from_records([rec(1, 1, 0.1), rec(1, 1, 0.2)])
    with pytest.raises(ValueError, match="track"):
        View(track="nope")
    assert horizon_bucket(7) == "week" and horizon_bucket(8) == "month" and horizon_bucket(400) == "long"
