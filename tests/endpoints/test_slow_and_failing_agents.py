"""A slow agent times out and is retried; a failing one is retried with exponential backoff and
given up on after the last attempt, each attempt in the delivery log with a clear error."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from endpoints.delivering import delivery_run
from endpoints.models import Delivery
from endpoints.services.deliveries import delivery_request
from leaderboard.models import Agent, Forecast
from tests.endpoints.agent_server import AgentServer, Received, Reply
from tests.leaderboard.api_support import live_question

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.dual_db]

FORECAST = {"prediction": {"probability": 0.6}, "rationale": "Base rate."}


def attempt_again(delivery: Delivery) -> str:
    """Run the delivery's next attempt at the moment its backoff ends."""
    delivery.refresh_from_db()
    assert delivery.next_attempt_at is not None
    return delivery_run(delivery_id=str(delivery.pk), now=delivery.next_attempt_at).status


def wait_after(delivery: Delivery, attempted: datetime) -> float:
    delivery.refresh_from_db()
    assert delivery.next_attempt_at is not None
    return (delivery.next_attempt_at - attempted).total_seconds()


def test_slow_agent_times_out_is_retried_and_logged(agent: Agent, endpoint: Any, agent_server: AgentServer) -> None:
    delivery, _ = delivery_request(agent=agent, question_id=live_question().pk)
    agent_server.reply = Reply(status=200, body=FORECAST, delay=2.5)  # the platform waits 1 s

    started = timezone.now()
    assert delivery_run(delivery_id=str(delivery.pk)).status == Delivery.Status.PENDING
    took = (timezone.now() - started).total_seconds()
    assert took < 2.0, "the attempt ended at the timeout, not when the agent finally answered"
    assert 10 <= wait_after(delivery, started) <= 11 + took  # backoff base 10 s, up to 10% jitter
    [timed_out] = delivery.attempt_log.all()
    assert timed_out.outcome == "timeout" and timed_out.status_code is None
    assert timed_out.error == "no complete answer within 1 s (timed out)"
    assert 900 <= timed_out.latency_ms < 2000
    assert not Forecast.objects.exists()

    agent_server.reply = Reply(status=200, body=FORECAST)
    assert attempt_again(delivery) == Delivery.Status.ANSWERED
    delivery.refresh_from_db()
    assert delivery.attempts == 2 and Forecast.objects.get().pk == delivery.forecast_id
    assert [a.outcome for a in delivery.attempt_log.all()] == ["timeout", "answered"]
    assert {r.delivery_id for r in agent_server.received} == {str(delivery.pk)}


def test_failing_agent_backs_off_and_is_given_up_on(
    agent: Agent, owner: Any, endpoint: Any, agent_server: AgentServer
) -> None:
    delivery, _ = delivery_request(agent=agent, question_id=live_question().pk)
    agent_server.reply = Reply(status=503, body=b"upstream model unavailable")

    first = timezone.now()
    assert delivery_run(delivery_id=str(delivery.pk)).status == Delivery.Status.PENDING
    assert 10 <= wait_after(delivery, first) <= 11.5
    second = delivery.next_attempt_at
    assert attempt_again(delivery) == Delivery.Status.PENDING
    assert second is not None and 20 <= wait_after(delivery, second) <= 23  # doubled
    assert attempt_again(delivery) == Delivery.Status.FAILED  # attempt 3 of 3

    delivery.refresh_from_db()
    assert delivery.last_error == (
        "gave up after 3 attempts; the last one: the endpoint answered HTTP 503: upstream model unavailable"
    )
    assert delivery.next_attempt_at is None and delivery.finished_at is not None
    assert [(a.number, a.outcome, a.status_code) for a in delivery.attempt_log.all()] == [
        (1, "http_error", 503),
        (2, "http_error", 503),
        (3, "http_error", 503),
    ]
    later = timezone.now() + timedelta(days=1)
    assert delivery_run(delivery_id=str(delivery.pk), now=later).status == "skipped"
    assert len(agent_server.received) == 3

    member = Client()
    member.force_login(owner)
    page = member.get(f"/teams/{agent.team.slug}/agents/{agent.slug}/").content.decode()
    assert "Gave up" in page and "gave up after 3 attempts" in page and "HTTP 503" in page


def test_retry_after_from_the_agent_is_honoured(agent: Agent, endpoint: Any, agent_server: AgentServer) -> None:
    delivery, _ = delivery_request(agent=agent, question_id=live_question().pk)
    agent_server.reply = Reply(status=429, body={"error": "busy"}, headers={"Retry-After": "120"})
    started = timezone.now()
    delivery_run(delivery_id=str(delivery.pk))
    assert 120 <= wait_after(delivery, started) <= 125


def test_connection_refused_and_redirects_are_failed_attempts(
    agent: Agent, endpoint: Any, agent_server: AgentServer
) -> None:
    delivery, _ = delivery_request(agent=agent, question_id=live_question().pk)
    agent_server.reply = Reply(status=302, headers={"Location": "https://elsewhere.example.org/"})
    delivery_run(delivery_id=str(delivery.pk))
    agent_server.stop()
    attempt_again(delivery)
    errors = [a.error for a in delivery.attempt_log.all()]
    assert errors[0] == "the endpoint answered HTTP 302: redirects are not followed: register the final address"
    assert errors[1].startswith("connection failed:")


def test_a_closed_question_is_not_delivered_any_more(agent: Agent, endpoint: Any, agent_server: AgentServer) -> None:
    question = live_question()
    delivery, _ = delivery_request(agent=agent, question_id=question.pk)
    agent_server.reply = lambda received: Reply(status=500)
    delivery_run(delivery_id=str(delivery.pk))
    delivery.refresh_from_db()
    question.close_at = delivery.next_attempt_at
    question.save(update_fields=["close_at"])

    assert attempt_again(delivery) == "skipped"
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.CANCELLED
    assert delivery.last_error.startswith(f"question {question.pk} stopped taking forecasts at")
    assert len(agent_server.received) == 1


def test_answers_are_read_up_to_a_size_cap(
    settings: Any, agent: Agent, endpoint: Any, agent_server: AgentServer
) -> None:
    settings.HINDSIGHT_DELIVERY_MAX_RESPONSE_BYTES = 1000

    def huge(received: Received) -> Reply:
        return Reply(status=200, body={**FORECAST, "rationale": "x" * 5000})

    agent_server.reply = huge
    delivery, _ = delivery_request(agent=agent, question_id=live_question().pk)
    assert delivery_run(delivery_id=str(delivery.pk)).status == Delivery.Status.REFUSED
    delivery.refresh_from_db()
    assert delivery.last_error == "the answer is larger than 1000 bytes; answer with one forecast body"
