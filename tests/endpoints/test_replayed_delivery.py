"""One delivery never stores two forecasts: a duplicate task does nothing, and when a worker dies
after storing the answer but before recording it, the sweeper re-sends the same delivery id (the
agent can drop it) and the platform keeps the first forecast."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from endpoints import delivering
from endpoints.delivering import delivery_run
from endpoints.models import Delivery
from endpoints.services.deliveries import delivery_request
from endpoints.tasks import deliver_question, sweep_deliveries
from leaderboard.models import Agent, Forecast
from tests.endpoints.agent_server import AgentServer, Received, Reply
from tests.leaderboard.api_support import live_question

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.dual_db]


def test_a_duplicate_task_delivery_does_nothing(agent: Agent, endpoint: Any, agent_server: AgentServer) -> None:
    agent_server.reply = Reply(status=200, body={"prediction": {"probability": 0.3}})
    delivery, _ = delivery_request(agent=agent, question_id=live_question().pk)

    assert deliver_question.apply(args=[str(delivery.pk)]).get()["status"] == "answered"
    assert deliver_question.apply(args=[str(delivery.pk)]).get()["status"] == "skipped"
    assert len(agent_server.received) == 1 and Forecast.objects.count() == 1


def test_a_lost_record_is_resent_with_the_same_id_and_stores_no_second_forecast(
    monkeypatch: pytest.MonkeyPatch, settings: Any, agent: Agent, endpoint: Any, agent_server: AgentServer
) -> None:
    settings.HINDSIGHT_DELIVERY_CLAIM_STALE_SECONDS = 60
    answers = iter([0.3, 0.9])
    dropped: list[str] = []

    def agent_reply(received: Received) -> Reply:
        if received.delivery_id in {r.delivery_id for r in agent_server.received[:-1]}:
            dropped.append(received.delivery_id)  # seen before: this agent may skip the work
        return Reply(status=200, body={"prediction": {"probability": next(answers)}})

    agent_server.reply = agent_reply
    delivery, _ = delivery_request(agent=agent, question_id=live_question().pk)

    def worker_dies(**kwargs: Any) -> None:
        raise SystemExit("worker killed after storing the forecast")

    monkeypatch.setattr(delivering, "delivery_attempt_record", worker_dies)
    with pytest.raises(SystemExit):
        delivery_run(delivery_id=str(delivery.pk))
    monkeypatch.undo()
    first = Forecast.objects.get()
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.SENDING  # the claim is still held by the dead worker

    with time_machine.travel(timezone.now() + timedelta(seconds=61), tick=True):
        sweep_deliveries.apply().get()  # logs the lost attempt; the retry waits for its backoff
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.PENDING and delivery.attempts == 1
    assert delivery.next_attempt_at is not None
    with time_machine.travel(delivery.next_attempt_at + timedelta(seconds=1), tick=True):
        sweep_deliveries.apply().get()

    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.ANSWERED and delivery.forecast_id == first.pk
    assert (
        delivery.last_error == f"this delivery already stored forecast {first.pk}; the platform keeps one per delivery"
    )
    assert [a.outcome for a in delivery.attempt_log.all()] == ["lost", "answered"]
    assert dropped == [str(delivery.pk)]
    assert Forecast.objects.count() == 1 and Forecast.objects.get().prediction == {"probability": 0.3}
