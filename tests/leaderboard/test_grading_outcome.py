"""Outcome grading of all six question types end to end through grade_question."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import pytest

from ingestion.models import Market, PricePoint, Question
from leaderboard.models import Agent, Grade, ReplaySession
from leaderboard.services.grade_runs import grade_question
from tests.factories import T0, AgentFactory
from tests.leaderboard.grading_support import CLOSE, add_forecast, current, make_question, resolve

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def no_llm(settings: Any) -> None:
    settings.LLM_MODEL = ""


def test_binary_scores_market_edge_and_the_forecast_that_counts(agent: Agent) -> None:
    market = Market.objects.create(platform=Market.Platform.SAMPLE, external_id="m1", title="m1")
    PricePoint.objects.create(market=market, outcome="Yes", time=T0 + timedelta(days=1), probability=0.6)
    PricePoint.objects.create(market=market, outcome="Yes", time=T0 + timedelta(days=10), probability=0.9)
    question = make_question("binary", market=market)
    early = add_forecast(agent, question, {"probability": 0.4}, received_at=T0 + timedelta(days=2))
    latest = add_forecast(agent, question, {"probability": 0.8}, received_at=T0 + timedelta(days=5))
    other = AgentFactory(knowledge_cutoff=None)
    late = add_forecast(other, question, {"probability": 0.3}, received_at=T0 + timedelta(days=20))
    resolve(question, True)

    report = grade_question(question_id=question.pk)

    assert report.status == "graded" and report.graded == 3 and report.reference == "none"
    g = current(latest)
    assert g.correct is True
    assert g.brier == pytest.approx(0.04)
    assert g.log_score == pytest.approx(math.log(0.8))
    assert g.market_edge == pytest.approx(math.log(0.8) - math.log(0.6))  # price at day 1, not day 10
    assert g.counts is True and current(early).counts is False
    assert g.version == 1 and g.resolution_version == 1 and g.grader_version
    assert g.matcher_settings["threshold"] == 0.45
    assert g.source_precision is None and g.key_event_recall is None  # no reference yet
    assert g.leaks == 0
    h = current(late)
    assert h.correct is False and h.brier == pytest.approx(0.49)
    assert h.market_edge == pytest.approx(math.log(0.3) - math.log(0.9))  # price at day 10
    assert h.counts is True and h.cutoff_declared is False and h.contaminated is False


def test_binary_log_score_is_clipped(agent: Agent) -> None:
    question = make_question("binary")
    f = add_forecast(agent, question, {"probability": 0.0})
    resolve(question, True)
    grade_question(question_id=question.pk)
    assert current(f).log_score == pytest.approx(math.log(1e-6))
    assert current(f).brier == 1.0


def test_multiple_choice(agent: Agent) -> None:
    question = make_question("multiple_choice")
    f = add_forecast(agent, question, {"probabilities": {"Yes": 0.5, "No": 0.3, "Maybe": 0.2}})
    resolve(question, "No")
    grade_question(question_id=question.pk)
    g = current(f)
    assert g.correct is False and g.reduced_correct is False
    assert g.brier == pytest.approx((0.25 + 0.49 + 0.04) / 2)  # half the sum: on the binary scale
    assert g.log_score == pytest.approx(math.log(0.3))
    assert g.details["predicted_option"] == "Yes"
    assert g.details["reduced"]["brier"] == pytest.approx(0.25)
    assert g.market_edge is None


def test_a_forecast_at_the_boundary_is_graded_without_a_call(agent: Agent) -> None:
    binary = make_question("binary")
    half = add_forecast(agent, binary, {"probability": 0.5})
    choice = make_question("multiple_choice")
    tied = add_forecast(agent, choice, {"probabilities": {"Yes": 0.4, "No": 0.4, "Maybe": 0.2}})
    resolve(binary, True)
    resolve(choice, "Yes")
    grade_question(question_id=binary.pk)
    grade_question(question_id=choice.pk)
    h = current(half)
    assert h.correct is False and h.brier == 0.25 and h.details["no_call"] is True
    t = current(tied)
    assert t.correct is False and t.details["no_call"] is True
    assert t.details["tied_options"] == ["Yes", "No"] and t.details["predicted_option"] is None
    assert t.brier == pytest.approx((0.36 + 0.16 + 0.04) / 2)


def test_quantity_point_interval_and_quantiles(agent: Agent) -> None:
    question = make_question("quantity")
    point = add_forecast(agent, question, {"value": 100.0})
    interval = add_forecast(AgentFactory(), question, {"interval": [110.0, 120.0]})
    quantiles = add_forecast(AgentFactory(), question, {"quantiles": {"0.1": 100.0, "0.5": 110.0, "0.9": 130.0}})
    resolve(question, 105.0)
    grade_question(question_id=question.pk)
    assert current(point).correct is True  # within 10%
    assert current(interval).correct is False
    q = current(quantiles)
    assert q.correct is True
    assert q.pinball == pytest.approx((0.1 * 5 + 0.5 * 5 + 0.1 * 25) / 3)
    assert current(point).brier is None and current(point).pinball is None


def test_timeframe(agent: Agent) -> None:
    question = make_question("timeframe")
    right = add_forecast(agent, question, {"period": "2026-Q3"})
    wrong = add_forecast(AgentFactory(), question, {"period": "2026-Q2"})
    resolve(question, "2026-Q3")
    grade_question(question_id=question.pk)
    assert current(right).correct is True
    assert current(wrong).correct is False and current(wrong).details["period_offset"] == -1


def test_relation_mirai_metrics(agent: Agent) -> None:
    question = make_question("relation")
    f = add_forecast(agent, question, {"relations": {"04": ["042", "043"], "05": []}})
    empty = add_forecast(AgentFactory(), question, {"relations": {}})
    conflict = add_forecast(AgentFactory(), question, {"relations": {"19": ["190"]}})
    resolve(question, {"relations": {"04": ["042"], "05": []}})
    grade_question(question_id=question.pk)
    g = current(f)
    assert g.first_level_f1 == pytest.approx(1.0)
    assert g.second_level_f1 == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert g.details["relation"]["second_level"] == {"precision": 0.5, "recall": 1.0}
    assert g.kl_binary == pytest.approx(0.0, abs=1e-8) and g.kl_quad == pytest.approx(0.0, abs=1e-8)
    assert g.correct is None and g.brier is None
    e = current(empty)
    assert e.first_level_f1 == 0.0 and e.second_level_f1 == 0.0
    c = current(conflict)
    # gold: all mediation; prediction: all conflict -> KL = (1 + eps) ln((1 + eps) / eps) + eps ln(eps / (1 + eps))
    eps = 1e-10
    expected = (1 + eps) * math.log((1 + eps) / eps) + eps * math.log(eps / (1 + eps))
    assert c.kl_binary == pytest.approx(expected)
    assert c.first_level_f1 == 0.0


def test_open_ended_lexical_judge(agent: Agent) -> None:
    question = make_question("open_ended")
    f = add_forecast(agent, question, {"events": ["Ceasefire signed", "Elections called", "Stock market crashes"]})
    resolve(question, ["Ceasefire signed between the parties", "Elections called for June"])
    grade_question(question_id=question.pk)
    g = current(f)
    assert g.judge == Grade.Judge.LEXICAL
    assert g.open_precision == pytest.approx(2 / 3)
    assert g.open_recall == pytest.approx(1.0)
    assert g.open_f1 == pytest.approx(0.8)
    items = g.details["lrae"]["items"]
    assert [i["gold_index"] for i in items] == [0, 1, None]
    assert g.details["lrae"]["counts"] == {"tp": 2, "mtp": 0, "fp": 1, "fn": 0, "duplicates": 0}


def test_open_ended_argument_question(agent: Agent) -> None:
    question = make_question("open_ended")
    f = add_forecast(agent, question, {"answer": "The central bank raises interest rates"})
    resolve(question, "Central bank raises interest rates")
    grade_question(question_id=question.pk)
    g = current(f)
    assert g.correct is True and g.open_f1 == 1.0 and g.judge == "lexical"


def test_replay_session_latest_counts_and_market_at_simulated_date(agent: Agent) -> None:
    market = Market.objects.create(platform=Market.Platform.SAMPLE, external_id="m2", title="m2")
    PricePoint.objects.create(market=market, outcome="YES", time=T0 + timedelta(days=1), probability=0.5)
    PricePoint.objects.create(market=market, outcome="YES", time=T0 + timedelta(days=80), probability=0.99)
    question = make_question("binary", track=Question.Track.REPLAY, market=market)
    resolve(question, True)
    session = ReplaySession.objects.create(
        agent=agent, question=question, simulated_at=T0 + timedelta(days=30), created_at=T0 + timedelta(days=90)
    )
    first = add_forecast(agent, question, {"probability": 0.6}, session=session, received_at=CLOSE + timedelta(days=40))
    second = add_forecast(
        agent, question, {"probability": 0.7}, session=session, received_at=CLOSE + timedelta(days=41)
    )
    grade_question(question_id=question.pk)
    assert current(second).counts is True and current(first).counts is False
    assert current(second).market_edge == pytest.approx(math.log(0.7) - math.log(0.5))


def test_an_unreadable_stored_prediction_is_graded_without_metrics(agent: Agent) -> None:
    question = make_question("binary")
    f = add_forecast(agent, question, {"probability": "high"})
    resolve(question, False)
    report = grade_question(question_id=question.pk)
    assert report.graded == 1
    g = current(f)
    assert g.correct is None and g.brier is None and "outcome_error" in g.details
