"""A whole worker (its main process and its pool, one process group) killed with SIGKILL in the
middle of grading: Redis keeps the task unacknowledged until the visibility timeout, so nothing is
redelivered, yet the recovery task that beat runs finds the dead run's claim and another worker
finishes the question within a minute, with exactly one current grade per forecast."""

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

N_AGENTS = 200
PER_AGENT = 20


def test_killed_worker_group_is_taken_over_within_a_minute(monkeypatch: Any) -> None:
    monkeypatch.setenv("HINDSIGHT_GRADING_BATCH_SIZE", "100")  # a run long enough to be killed in
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

    def graded() -> int:
        return Grade.objects.filter(forecast__question=question, is_current=True).count()

    # Two grading workers and, apart from them, beat with a worker for the default queue (as in
    # production, where beat runs once and never inside a grading worker).
    with (
        running_worker(queues="default", beat=True, name="beat"),
        running_worker(queues="grade", concurrency=2, name="grade-a") as first,
        running_worker(queues="grade", concurrency=2, name="grade-b") as second,
    ):
        question_resolve(question=question, outcome=True, resolved_at=RESOLVED_AT, now=RESOLVED_AT)  # enqueues
        assert wait_until(lambda: 0 < graded() < total, timeout=90, interval=0.05), graded()
        holder = int(QuestionGradingState.objects.get(question=question).claimed_by.rsplit(":", 1)[1])
        group = os.getpgid(holder)
        assert group in (first.pid, second.pid)
        os.killpg(group, signal.SIGKILL)  # the worker's main process and its whole pool at once
        killed_at = time.monotonic()
        at_kill = graded()
        survivor = second if group == first.pid else first

        assert wait_until(lambda: graded() > at_kill, timeout=75, interval=0.25), graded()
        resumed = time.monotonic() - killed_at
        assert wait_until(lambda: graded() == total, timeout=60, interval=0.25), graded()
        finished = time.monotonic() - killed_at
        assert survivor.poll() is None

    print(f"whole-worker kill: resumed {resumed:.1f}s, finished {finished:.1f}s after the kill ({at_kill}/{total})")
    assert resumed < 60
    grades = Grade.objects.filter(forecast__question=question)
    assert grades.filter(is_current=True).count() == total == grades.count()  # none lost, none twice
    state = QuestionGradingState.objects.get(question=question)
    assert state.claimed_at is None and not state.claimed_by.endswith(f":{holder}")
