"""Redis killed (SIGKILL) for ten seconds while a real worker grades: the worker rides the outage
out, reconnects on its own, the grading finishes with exactly one current grade per forecast, and
work sent after Redis is back is done too; no one restarts the worker."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest

from config.celery_app import app as celery_app
from ingestion.models import Question
from ingestion.services.questions import question_resolve
from leaderboard.models import Agent, Forecast, Grade, Team
from tests.celery_worker import running_worker, wait_until
from tests.factories import T0
from tests.leaderboard.grading_support import RESOLVED_AT, make_question
from tests.reliability.servers import RedisServer, broker_of

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

N_AGENTS = 200
PER_AGENT = 25
OUTAGE_SECONDS = 10


def _graded(question: Question) -> int:
    return Grade.objects.filter(forecast__question=question, is_current=True).count()


def _crowd_question(agents: list[Agent]) -> Question:
    question = make_question("binary")
    Forecast.objects.bulk_create(
        Forecast(agent=a, question=question, received_at=T0 + timedelta(hours=1 + k), prediction={"probability": 0.6})
        for a in agents
        for k in range(PER_AGENT)
    )
    return question


def _resolve(question: Question) -> None:
    """Resolving sends the grading task (through this test's Redis)."""
    question_resolve(question=question, outcome=True, resolved_at=RESOLVED_AT, now=RESOLVED_AT)


def test_worker_rides_out_a_redis_crash_and_grading_finishes(crashable_redis: RedisServer, monkeypatch: Any) -> None:
    monkeypatch.setenv("HINDSIGHT_GRADING_BATCH_SIZE", "100")  # a run long enough to crash Redis under it
    monkeypatch.setenv("HINDSIGHT_LLM_MODEL", "")
    team = Team.objects.create(name="Crowd", slug="crowd")
    agents = Agent.objects.bulk_create(Agent(team=team, name=f"C{i}", slug=f"crowd-{i}") for i in range(N_AGENTS))
    total = N_AGENTS * PER_AGENT
    first, second = _crowd_question(agents), _crowd_question(agents)

    with (
        running_worker(queues="grade,default", concurrency=2, redis_url=crashable_redis.url) as worker,
        broker_of(celery_app, crashable_redis.url),
    ):
        _resolve(first)
        assert wait_until(lambda: 0 < _graded(first) < total, timeout=60, interval=0.05), _graded(first)
        crashable_redis.crash()
        crashed_at = time.monotonic()
        time.sleep(OUTAGE_SECONDS)
        crashable_redis.start()
        assert wait_until(lambda: _graded(first) == total, timeout=60), _graded(first)
        finished = time.monotonic() - crashed_at

        # Work sent after the outage is consumed too: the worker reconnected, not only survived.
        sent_at = time.monotonic()
        _resolve(second)
        assert wait_until(lambda: _graded(second) == total, timeout=60), _graded(second)
        after = time.monotonic() - sent_at
        alive = worker.poll() is None
        log = worker.log_path.read_text()  # type: ignore[attr-defined]

    print(f"redis crash: grading finished {finished:.1f}s after the crash; work sent afterwards done in {after:.1f}s")
    assert alive, log[-3000:]
    assert "Unrecoverable error" not in log, log[-3000:]
    for question in (first, second):
        grades = Grade.objects.filter(forecast__question=question)
        assert grades.filter(is_current=True).count() == total == grades.count()
