"""A real Celery worker on the deliver queue: a question that opens is delivered over Redis, a
failing attempt is retried after its backoff, and a duplicate message calls the agent once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from endpoints.models import Delivery
from endpoints.tasks import deliver_question
from ingestion.models import Question
from ingestion.services.questions import question_open
from leaderboard.models import Agent, Forecast
from tests.celery_worker import running_worker, wait_until
from tests.endpoints.agent_server import AgentServer, Received, Reply
from tests.factories import QuestionFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.celery_worker]


def test_worker_delivers_retries_and_ignores_duplicates(
    monkeypatch: pytest.MonkeyPatch, agent: Agent, endpoint: Any, agent_server: AgentServer
) -> None:
    # The worker is another process: it reads these from its environment.
    monkeypatch.setenv("HINDSIGHT_DELIVERY_BACKOFF_BASE_SECONDS", "1")
    monkeypatch.setenv("HINDSIGHT_DELIVERY_TIMEOUT_SECONDS", "5")
    replies = iter([Reply(status=503, body=b"warming up")])

    def reply(received: Received) -> Reply:
        return next(replies, Reply(status=200, body={"prediction": {"probability": 0.65}}))

    agent_server.reply = reply
    now = timezone.now()
    draft = QuestionFactory(
        status=Question.Status.DRAFT, open_at=now - timedelta(hours=1), close_at=now + timedelta(days=2)
    )

    with running_worker(queues="default,deliver"):
        question_open(question=draft)  # announces itself: offer task -> deliver task, both over Redis
        assert wait_until(lambda: Delivery.objects.filter(status=Delivery.Status.ANSWERED).exists(), timeout=60)
        delivery = Delivery.objects.get()
        for _ in range(2):
            deliver_question.delay(str(delivery.pk))  # duplicates of a finished delivery
        second = Delivery.objects.create(
            agent=agent,
            question=QuestionFactory(),
            trigger=Delivery.Trigger.REQUEST,
            next_attempt_at=now,
            created_at=now,
        )
        deliver_question.delay(str(second.pk))
        deliver_question.delay(str(second.pk))
        assert wait_until(lambda: Delivery.objects.get(pk=second.pk).status == Delivery.Status.ANSWERED, timeout=60)

    assert [a.outcome for a in delivery.attempt_log.all()] == ["http_error", "answered"]
    [failed, answered] = delivery.attempt_log.all()
    assert 1 <= (answered.started_at - failed.started_at).total_seconds() < 30
    assert Forecast.objects.get(question=draft).prediction == {"probability": 0.65}
    assert [r.delivery_id for r in agent_server.received] == [str(delivery.pk)] * 2 + [str(second.pk)]
