"""LRAE with an LLM judge (a local OpenAI-compatible server) and the lexical fallback, never mixed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from leaderboard.models import Agent, Grade
from leaderboard.services.grade_runs import grade_question
from tests.factories import T0, AgentFactory, ArticleFactory
from tests.grading.fake_llm import closed_port_url, fake_llm
from tests.leaderboard.grading_support import add_forecast, current, make_question, resolve

pytestmark = pytest.mark.django_db

GOLD = ["Ceasefire signed between the parties", "Elections called for June"]
STAGE1_YES_1 = "According to the given information, the answer is Yes, and the index is: (1)"


@pytest.fixture
def question(agent: Agent) -> Any:
    question = make_question("open_ended")
    ArticleFactory(
        title="Inflation rises sharply in March", summary="Prices climbed.", published_at=T0 + timedelta(days=20)
    )
    ArticleFactory(title="Volcano erupts near the coast", summary="Ash clouds.", published_at=T0 - timedelta(days=5))
    add_forecast(agent, question, {"events": ["A ceasefire is agreed", "Inflation rises sharply", "Volcano erupts"]})
    add_forecast(AgentFactory(), question, {"events": ["A ceasefire is agreed"]})
    resolve(question, GOLD)
    return question


def test_llm_judge_two_stages_with_corpus_evidence(question: Any, agent: Agent, settings: Any) -> None:
    script = [
        {"content": STAGE1_YES_1},  # "A ceasefire is agreed" -> gold (1)
        {"content": "No"},  # "Inflation rises sharply": not in the gold list ...
        {"content": "Yes"},  # ... but the corpus (published after the cut-off) supports it: MTP
        {"content": "No"},  # "Volcano erupts": only evidence predates the cut-off, so no stage 2 call: FP
    ]
    with fake_llm(script) as (fake, url):
        settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_TIMEOUT_SECONDS = url, "judge-model", 5
        report = grade_question(question_id=question.pk)
    assert report.judge == "llm"
    assert len(fake.requests) == 4  # the second agent's identical event was answered from the cache
    prompts = [r["messages"][0]["content"] for r in fake.requests]
    assert "(1) Ceasefire signed between the parties\n(2) Elections called for June" in prompts[0]
    assert "Inflation rises sharply in March" in prompts[2] and '"Inflation rises sharply"' in prompts[2]
    assert all(r["model"] == "judge-model" for r in fake.requests)

    mine = current(question.forecasts.get(agent=agent))
    assert mine.judge == Grade.Judge.LLM
    assert mine.details["lrae"]["counts"] == {"tp": 1, "mtp": 1, "fp": 1, "fn": 1, "duplicates": 0}
    assert mine.open_precision == pytest.approx(2 / 3) and mine.open_recall == pytest.approx(2 / 3)
    assert mine.open_f1 == pytest.approx(2 / 3)
    assert mine.details["lrae"]["without_retrieval"]["precision"] == pytest.approx(1 / 3)
    items = mine.details["lrae"]["items"]
    assert items[0]["gold_index"] == 0 and items[0]["stage1"]["answer"] == STAGE1_YES_1
    assert items[1]["supported"] is True and len(items[1]["stage2"]["evidence_article_ids"]) == 1
    assert items[2]["supported"] is None and items[2]["stage2"]["evidence_article_ids"] == []
    theirs = current(question.forecasts.exclude(agent=agent).get())
    assert theirs.open_precision == 1.0 and theirs.open_recall == 0.5 and theirs.judge == "llm"

    # Without a model the lexical judge regrades everything: the two judges are never mixed.
    settings.LLM_MODEL = ""
    report = grade_question(question_id=question.pk)
    assert report.judge == "lexical" and report.graded == 2
    assert set(Grade.objects.filter(is_current=True).values_list("judge", flat=True)) == {"lexical"}
    assert set(Grade.objects.filter(is_current=False).values_list("judge", flat=True)) == {"llm"}


def test_judge_down_grades_the_question_lexically_labelled_and_retries_later(
    question: Any, agent: Agent, settings: Any
) -> None:
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_TIMEOUT_SECONDS = closed_port_url(), "judge-model", 2
    report = grade_question(question_id=question.pk)
    assert report.judge == "lexical" and "unreachable" in report.judge_fallback and report.graded == 2
    grades = Grade.objects.filter(is_current=True)
    assert set(grades.values_list("judge", flat=True)) == {"lexical"}
    for grade in grades:
        assert "Lexical judge standing in for the LLM judge" in grade.details["lrae"]["fallback"]
    assert question.grading_state.last_error == ""
    # The same judge failing again changes nothing: the grades are already the fallback's.
    again = grade_question(question_id=question.pk)
    assert again.judge_fallback and again.graded == 0 and Grade.objects.count() == 2
    # Once the judge answers, the next run (the sweeper's) regrades the whole question with it.
    with fake_llm(lambda body: {"content": "No"}) as (_, url):
        settings.LLM_BASE_URL = url
        back = grade_question(question_id=question.pk)
    assert back.judge == "llm" and back.judge_fallback == "" and back.graded == 2
    assert set(Grade.objects.filter(is_current=True).values_list("judge", flat=True)) == {"llm"}


def test_judge_failing_midway_never_mixes_judges(question: Any, settings: Any) -> None:
    script = [{"content": STAGE1_YES_1}, {"status": 500, "body": {"error": {"message": "overloaded"}}}]
    with fake_llm(script) as (_, url):
        settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_TIMEOUT_SECONDS = url, "judge-model", 5
        report = grade_question(question_id=question.pk)
    assert report.judge == "lexical" and "HTTP 500" in report.judge_fallback
    # The first answer came from the model, but no grade uses it: every grade is lexical.
    assert set(Grade.objects.values_list("judge", flat=True)) == {"lexical"}


def test_judge_calls_are_bounded_and_recorded(question: Any, settings: Any) -> None:
    with fake_llm(lambda body: {"content": "No"}) as (fake, url):
        settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_TIMEOUT_SECONDS = url, "judge-model", 5
        report = grade_question(question_id=question.pk)
    assert {r["max_tokens"] for r in fake.requests} == {64}
    usage = report.judge_usage
    assert usage["stage"] == "judge" and usage["calls"] == len(fake.requests)
    assert usage["prompt_tokens"] > 0 and usage["valid_first_try"] is True


def test_lexical_judge_when_no_llm(question: Any, agent: Agent, settings: Any) -> None:
    settings.LLM_MODEL = ""
    grade_question(question_id=question.pk)
    mine = current(question.forecasts.get(agent=agent))
    assert mine.judge == "lexical"
    # Lexical stage 1 only: "A ceasefire is agreed" vs gold 1 has token F1 2*1/(3+4) < 0.5 -> FP.
    assert mine.details["lrae"]["counts"]["mtp"] == 0
    assert all(i["supported"] is None for i in mine.details["lrae"]["items"])
