"""A grading claim belongs to a live run: its heartbeat keeps it, and a claim whose heartbeat stopped is
taken over by the next run (the process-level crash is tests/leaderboard/test_grading_crash_recovery.py)."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from ingestion.models import Question
from leaderboard.models import Grade, QuestionGradingState
from leaderboard.services.claims import claims_kept_alive, grading_claim
from leaderboard.services.grade_runs import grade_question
from tests.factories import AgentFactory
from tests.leaderboard.grading_support import add_forecast, make_question, resolve

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def question() -> Question:
    question = make_question("binary")
    for p in (0.2, 0.8):
        add_forecast(AgentFactory(), question, {"probability": p})
    resolve(question, True)  # graded in-process
    Grade.objects.all().delete()
    QuestionGradingState.objects.all().delete()
    return question


def test_a_long_run_with_a_live_heartbeat_keeps_its_claim(question: Question, settings: Any) -> None:
    started = timezone.now() - timedelta(hours=2)  # claimed long ago, still beating
    QuestionGradingState.objects.create(question=question, claimed_at=started, heartbeat_at=timezone.now())
    assert not grading_claim(question_id=question.pk, now=timezone.now())
    assert grade_question(question_id=question.pk).status == "busy"
    assert not Grade.objects.exists()


def test_a_claim_whose_heartbeat_stopped_is_taken_over(question: Question, settings: Any) -> None:
    silent = timezone.now() - timedelta(seconds=settings.HINDSIGHT_GRADING_CLAIM_STALE_SECONDS + 1)
    QuestionGradingState.objects.create(question=question, claimed_at=silent, heartbeat_at=silent, claimed_by="gone:1")
    report = grade_question(question_id=question.pk)
    assert report.status == "graded" and Grade.objects.filter(is_current=True).count() == 2
    state = QuestionGradingState.objects.get(question=question)
    assert state.claimed_at is None and state.claimed_by != "gone:1"


def test_the_heartbeat_is_wall_clock_even_when_the_run_fixes_now(question: Question, settings: Any) -> None:
    settings.HINDSIGHT_GRADING_HEARTBEAT_SECONDS = 0.05
    fixed = timezone.now() - timedelta(days=300)
    assert grading_claim(question_id=question.pk, now=fixed)
    first = QuestionGradingState.objects.get(question=question).heartbeat_at
    with claims_kept_alive([question.pk], claimed_at=fixed):
        time.sleep(0.4)
    state = QuestionGradingState.objects.get(question=question)
    assert state.claimed_at == fixed and state.heartbeat_at > first  # type: ignore[operator]
    # Another run a minute later (a dead holder: nobody beats any more) takes over.
    with time_machine.travel(timezone.now() + timedelta(seconds=settings.HINDSIGHT_GRADING_CLAIM_STALE_SECONDS + 1)):
        assert grading_claim(question_id=question.pk, now=timezone.now())
