"""A crash must not stall grading: a real Celery worker process is killed (SIGKILL) in the middle of
grading a question. Its claim dies with it (no heartbeat), so the task Celery redelivers takes the
question over within a minute and finishes it: every forecast ends with exactly one current grade."""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta
from typing import Any

import pytest

from ingestion.services.questions import question_resolve
from leaderboard.models import Agent, Forecast, Grade, QuestionGradingState, Team
from tests.celery_worker import running_worker, wait_until
from tests.factories import T0
from tests.leaderboard.grading_support import RESOLVED_AT, make_question

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

N_AGENTS = 400
PER_AGENT = 25


def _graded(question_id: int) -> int:
    return Grade.objects.filter(forecast__question_id=question_id, is_current=True).count()


def test_killed_worker_is_taken_over_within_a_minute(monkeypatch: Any, settings: Any) -> None:
    # Small batches, so that a run is still going when it is killed and its committed batches show.
    monkeypatch.setenv("HINDSIGHT_GRADING_BATCH_SIZE", "200")
    monkeypatch.setenv("HINDSIGHT_LLM_MODEL", "")
    question = make_question("binary")
    team = Team.objects.create(name="Crowd", slug="crowd")
    agents = Agent.objects.bulk_create(Agent(team=team, name=f"C{i}", slug=f"crowd-{i}") for i in range(N_AGENTS))
    Forecast.objects.bulk_create(
        Forecast(agent=a, question=question, received_at=T0 + timedelta(hours=1 + k), prediction={"probability": 0.6})
        for a in agents
        for k in range(PER_AGENT)
    )
    total = N_AGENTS * PER_AGENT

    with running_worker(queues="grade,default", concurrency=2):
        question_resolve(question=question, outcome=True, resolved_at=RESOLVED_AT, now=RESOLVED_AT)  # enqueues
        assert wait_until(lambda: 0 < _graded(question.pk) < total, timeout=120, interval=0.05), _graded(question.pk)
        state = QuestionGradingState.objects.get(question=question)
        pid = int(state.claimed_by.rsplit(":", 1)[1])
        os.kill(pid, signal.SIGKILL)  # the pool process running the grading, mid-run
        killed_at = time.monotonic()
        graded_at_kill = _graded(question.pk)

        assert wait_until(lambda: _graded(question.pk) == total, timeout=90, interval=0.25), _graded(question.pk)
        recovery = time.monotonic() - killed_at
        assert wait_until(lambda: QuestionGradingState.objects.get(question=question).claimed_at is None, timeout=30)

    print(f"crash-to-recovery: {recovery:.1f}s ({graded_at_kill} of {total} grades written when killed)")
    assert graded_at_kill < total
    assert recovery < 60 + settings.HINDSIGHT_GRADING_CLAIM_STALE_SECONDS - 30  # within a minute at the default
    grades = Grade.objects.filter(forecast__question=question)
    assert grades.filter(is_current=True).count() == total == grades.count()  # one version each, no duplicate
    assert grades.filter(is_current=True, counts=True).count() == N_AGENTS
    state = QuestionGradingState.objects.get(question=question)
    assert state.last_error == "" and not state.claimed_by.endswith(f":{pid}")  # another process finished it
