"""The embedded default runs the beat schedule in-process: questions close without Redis or a worker."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.conf import settings

from config import celery_app
from config.inprocess_beat import InProcessBeat
from ingestion.models import Question
from tests.factories import QuestionFactory

pytestmark = pytest.mark.django_db(transaction=True)

START = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)


def test_due_entries_run_on_their_schedule_and_others_wait() -> None:
    with time_machine.travel(START, tick=False) as clock:
        beat = InProcessBeat(app=celery_app, entries=settings.CELERY_BEAT_SCHEDULE)
        question = QuestionFactory(close_at=START + timedelta(seconds=30))
        assert beat.run_due() == []
        clock.shift(timedelta(seconds=61))
        ran = beat.run_due()
        assert "close-questions" in ran and "sweep-grading" not in ran
        assert Question.objects.get(pk=question.pk).status == Question.Status.CLOSED
        assert beat.run_due() == []  # not due again until another minute has passed


def test_a_failing_task_does_not_stop_the_others() -> None:
    entries = {
        "broken": {"task": "ingestion.tasks.poll_source", "schedule": timedelta(seconds=10)},  # needs an id
        "close": {"task": "ingestion.tasks.close_due_questions", "schedule": timedelta(seconds=10)},
    }
    with time_machine.travel(START, tick=False) as clock:
        beat = InProcessBeat(app=celery_app, entries=entries)
        question = QuestionFactory(close_at=START + timedelta(seconds=5))
        clock.shift(timedelta(seconds=11))
        assert beat.run_due() == ["close"]
        assert Question.objects.get(pk=question.pk).status == Question.Status.CLOSED
