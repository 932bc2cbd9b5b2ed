"""Live questions are delivered when they open, once, to endpoints that want them; a paused
endpoint gets nothing and its waiting deliveries are cancelled."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from endpoints.models import Delivery
from endpoints.services.registration import endpoint_pause, endpoint_register
from endpoints.tasks import sweep_deliveries
from ingestion.models import Question
from ingestion.services.questions import question_open
from leaderboard.models import Agent, Forecast
from tests.endpoints.agent_server import AgentServer, Reply
from tests.factories import QuestionFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.dual_db]


def test_an_opened_question_is_delivered_once(
    agent: Agent, endpoint: Any, agent_server: AgentServer, rival_agent: Agent, rival: Any
) -> None:
    endpoint_register(agent=rival_agent, url=agent_server.url, offer_live=False, created_by=rival)
    agent_server.reply = Reply(status=200, body={"prediction": {"probability": 0.8}, "rationale": "Likely."})
    now = timezone.now()
    draft = QuestionFactory(
        status=Question.Status.DRAFT, open_at=now - timedelta(hours=1), close_at=now + timedelta(days=7)
    )
    assert not Delivery.objects.exists()

    question_open(question=draft)

    delivery = Delivery.objects.get()
    assert (delivery.agent, delivery.question, delivery.trigger) == (agent, draft, Delivery.Trigger.OPENED)
    # In-process (no broker) the call is not made inside the request that opened the question...
    assert delivery.status == Delivery.Status.PENDING and agent_server.received == []
    # ...but by the periodic sweeper, within its next tick.
    assert sweep_deliveries.apply().get() == {"offered": 0, "reclaimed": 0, "started": 1}
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.ANSWERED
    assert Forecast.objects.get(agent=agent, question=draft).rationale == "Likely."
    assert sweep_deliveries.apply().get() == {"offered": 0, "reclaimed": 0, "started": 0}
    assert len(agent_server.received) == 1 and not Delivery.objects.filter(agent=rival_agent).exists()


def test_a_question_is_offered_when_its_open_at_arrives(agent: Agent, endpoint: Any, agent_server: AgentServer) -> None:
    now = timezone.now()
    later = QuestionFactory(open_at=now + timedelta(hours=2), close_at=now + timedelta(days=3))
    assert sweep_deliveries.apply().get()["offered"] == 0
    with time_machine.travel(now + timedelta(hours=2, seconds=1), tick=True):
        assert sweep_deliveries.apply().get() == {"offered": 1, "reclaimed": 0, "started": 1}
    delivery = Delivery.objects.get()
    assert delivery.question == later and delivery.status == Delivery.Status.ACKNOWLEDGED


def test_a_paused_endpoint_gets_nothing(agent: Agent, endpoint: Any, agent_server: AgentServer) -> None:
    QuestionFactory()  # open now: offered at once
    waiting = Delivery.objects.get()
    endpoint_pause(endpoint=endpoint.endpoint)
    waiting.refresh_from_db()
    assert waiting.status == Delivery.Status.CANCELLED and waiting.last_error == "the team paused the endpoint"
    QuestionFactory()
    assert sweep_deliveries.apply().get() == {"offered": 0, "reclaimed": 0, "started": 0}
    assert Delivery.objects.count() == 1 and agent_server.received == []
