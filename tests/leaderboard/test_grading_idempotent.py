"""Grading is idempotent: a task delivered twice, a second worker, a rerun write one set of grades."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from ingestion.models import Question
from leaderboard.models import Agent, Grade, QuestionGradingState, ReplaySession
from leaderboard.services.grade_runs import grade_question
from leaderboard.tasks import regrade_question
from tests.factories import T0, AgentFactory
from tests.leaderboard.grading_support import add_forecast, make_question, resolve

pytestmark = pytest.mark.django_db


@pytest.fixture
def graded_question(agent: Agent) -> Question:
    question = make_question("binary")
    for i in range(5):
        add_forecast(AgentFactory(), question, {"probability": 0.1 + 0.2 * i})
    resolve(question, True)
    return question


def test_task_delivered_twice_grades_once(graded_question: Question) -> None:
    first = regrade_question.delay(graded_question.pk).get()
    second = regrade_question.delay(graded_question.pk).get()
    assert first["status"] == "graded" and first["graded"] == 5
    assert second["status"] == "up_to_date" and second["graded"] == 0 and second["unchanged"] == 5
    assert Grade.objects.count() == 5
    assert set(Grade.objects.values_list("version", flat=True)) == {1}
    state = QuestionGradingState.objects.get(question=graded_question)
    assert state.claimed_at is None and state.runs == 1 and state.inputs_key == first["inputs_key"]


def test_a_question_claimed_by_another_worker_is_left_alone(graded_question: Question) -> None:
    now = timezone.now()
    QuestionGradingState.objects.create(question=graded_question, claimed_at=now - timedelta(seconds=5))
    report = grade_question(question_id=graded_question.pk, now=now)
    assert report.status == "busy"
    assert not Grade.objects.exists()


def test_a_stale_claim_is_taken_over(graded_question: Question, settings: Any) -> None:
    now = timezone.now()
    stale = now - timedelta(seconds=settings.HINDSIGHT_GRADING_CLAIM_STALE_SECONDS + 1)
    QuestionGradingState.objects.create(question=graded_question, claimed_at=stale)
    report = grade_question(question_id=graded_question.pk, now=now)
    assert report.status == "graded" and Grade.objects.count() == 5
    assert QuestionGradingState.objects.get(question=graded_question).claimed_at is None


def test_force_writes_a_new_version_and_keeps_history(graded_question: Question) -> None:
    grade_question(question_id=graded_question.pk)
    report = grade_question(question_id=graded_question.pk, force=True)
    assert report.graded == 5
    assert Grade.objects.count() == 10
    assert set(Grade.objects.filter(is_current=True).values_list("version", flat=True)) == {2}
    assert set(Grade.objects.filter(is_current=False).values_list("version", flat=True)) == {1}


def test_a_new_replay_forecast_is_graded_alone_and_takes_over_counting(agent: Agent) -> None:
    question = make_question("binary", track=Question.Track.REPLAY)
    resolve(question, False)
    session = ReplaySession.objects.create(
        agent=agent, question=question, simulated_at=T0 + timedelta(days=20), created_at=T0 + timedelta(days=80)
    )
    old = add_forecast(agent, question, {"probability": 0.2}, session=session, received_at=T0 + timedelta(days=81))
    grade_question(question_id=question.pk)
    new = add_forecast(agent, question, {"probability": 0.1}, session=session, received_at=T0 + timedelta(days=82))
    report = grade_question(question_id=question.pk)
    assert report.graded == 1 and report.unchanged == 1 and report.counts_updated == 1
    old_grade = Grade.objects.get(forecast=old, is_current=True)
    assert old_grade.version == 1 and old_grade.counts is False
    assert Grade.objects.get(forecast=new, is_current=True).counts is True
    assert Grade.objects.count() == 2


def test_missing_question_is_reported(db: Any) -> None:
    assert grade_question(question_id=999_999).status == "missing"
