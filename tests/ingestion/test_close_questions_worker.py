"""A real Celery worker (with beat) closes live questions past their deadline."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ingestion.models import Question
from ingestion.tasks import close_due_questions
from tests.celery_worker import running_worker, wait_until
from tests.factories import QuestionFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.celery_worker]


def test_worker_runs_the_close_task_sent_over_redis() -> None:
    now = timezone.now()
    due = QuestionFactory(close_at=now - timedelta(minutes=1))
    later = QuestionFactory(close_at=now + timedelta(days=1))
    replay = QuestionFactory(close_at=now - timedelta(minutes=1), track=Question.Track.REPLAY)
    with running_worker(queues="ingest"):
        close_due_questions.delay()
        assert wait_until(lambda: Question.objects.get(pk=due.pk).status == Question.Status.CLOSED)
    assert Question.objects.get(pk=later.pk).status == Question.Status.OPEN
    assert Question.objects.get(pk=replay.pk).status == Question.Status.OPEN


def test_beat_schedules_the_close_task(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HINDSIGHT_FAST_BEAT", "1")
    due = QuestionFactory(close_at=timezone.now() - timedelta(seconds=1))
    with running_worker(queues="ingest,default,grade", beat=True):
        assert wait_until(lambda: Question.objects.get(pk=due.pk).status == Question.Status.CLOSED)
