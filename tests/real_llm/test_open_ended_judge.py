"""The open-ended (LRAE) judge on a few pairs with the real small model: every grade carries one
judge's verdicts, never a mix; a judge that failed is replaced, labelled, by the lexical one."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from leaderboard.models import Grade
from leaderboard.services.grade_runs import grade_question
from tests.factories import T0, AgentFactory, ArticleFactory
from tests.leaderboard.grading_support import add_forecast, make_question, resolve
from tests.real_llm.conftest import assert_estimates_cover_the_real_counts

pytestmark = [pytest.mark.real_llm, pytest.mark.django_db]
GOLD = ["Ceasefire signed between the parties", "Elections called for June"]


def test_the_judge_answers_every_pair(settings: Any, real_llm: str, measured: Any) -> None:
    question = make_question("open_ended")
    ArticleFactory(
        title="Inflation rises sharply in March", summary="Prices climbed.", published_at=T0 + timedelta(days=20)
    )
    add_forecast(AgentFactory(), question, {"events": ["A ceasefire is signed", "Inflation rises sharply"]})
    add_forecast(AgentFactory(), question, {"events": ["Elections are called for June", "A volcano erupts"]})
    add_forecast(AgentFactory(), question, {"events": ["The parties sign a ceasefire"]})
    resolve(question, GOLD)
    report = grade_question(question_id=question.pk)
    if report.judge_usage:
        answers = [
            item["stage1"].get("answer", "")
            for grade in Grade.objects.filter(is_current=True)
            for item in grade.details["lrae"]["items"]
        ]
        measured([report.judge_usage], [f"judge answer: {a!r}" for a in answers[:2]])
        assert_estimates_cover_the_real_counts([report.judge_usage])
    grades = list(Grade.objects.filter(is_current=True))
    assert len(grades) == 3
    assert {g.judge for g in grades} == {report.judge}
    for grade in grades:
        lrae = grade.details["lrae"]
        assert 0 <= grade.open_precision <= 1 and 0 <= grade.open_recall <= 1
        if report.judge == "llm":
            assert all(isinstance(item["stage1"]["answer"], str) for item in lrae["items"])
            assert "fallback" not in lrae
        else:
            assert report.judge_fallback and lrae["fallback"].startswith("Lexical judge standing in")
