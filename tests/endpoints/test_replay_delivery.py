"""A replay question delivered to a local agent: signed, with the agent's session and a scoped
evidence token the agent uses to search as of the simulated date; its answer becomes a forecast
that the REST API shows, and the team sees the delivery in the agent page's log."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from django.test import Client

from endpoints.delivering import delivery_run
from endpoints.models import Delivery
from endpoints.services.deliveries import delivery_request
from leaderboard.models import Agent, EvidenceAccess, Forecast, ReplaySession
from leaderboard.services.evidence import evidence_log_flush
from tests.endpoints.agent_server import AgentServer, Received, Reply
from tests.factories import T0, ArticleFactory
from tests.leaderboard.api_support import replay_question

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.dual_db]


def test_replay_delivery_is_answered_with_a_forecast(
    live_server: Any, settings: Any, agent: Agent, owner: Any, endpoint: Any, agent_server: AgentServer,
    agent_http: httpx.Client,
) -> None:  # fmt: skip
    settings.HINDSIGHT_PUBLIC_URL = live_server.url
    question = replay_question()  # window [T0, T0 + 100 days), simulated date at its middle
    before = ArticleFactory(title="Ceasefire talks begin", published_at=T0 + timedelta(days=10))
    ArticleFactory(title="Ceasefire signed", published_at=T0 + timedelta(days=80))
    found: dict[str, Any] = {}

    def forecast_with_evidence(received: Received) -> Reply:
        evidence = received.json["evidence"]
        auth = {"Authorization": f"Token {evidence['token']}"}
        page = httpx.get(evidence["base_url"] + "articles/", params={"q": "ceasefire"}, headers=auth).json()
        found.update(as_of=page["as_of"], ids=[hit["id"] for hit in page["results"]])
        body = {"prediction": {"probability": 0.7}, "sources": found["ids"], "rationale": "Talks have begun."}
        return Reply(status=200, body=body)

    agent_server.reply = forecast_with_evidence
    delivery, created = delivery_request(agent=agent, question_id=question.pk, requested_by=owner)
    assert created

    assert delivery_run(delivery_id=str(delivery.pk)).status == Delivery.Status.ANSWERED

    [received] = agent_server.received
    assert received.verified, received.refusal
    session = ReplaySession.objects.get(agent=agent, question=question)
    payload = received.json
    assert received.delivery_id == payload["delivery_id"] == str(delivery.pk)
    assert payload["question"]["id"] == question.pk and "outcome" not in payload["question"]
    assert payload["session"]["id"] == str(session.pk)
    assert payload["session"]["simulated_date"] == session.simulated_at.isoformat().replace("+00:00", "Z")
    assert payload["answer"]["idempotency_key"] == f"delivery-{delivery.pk}"
    # The token searched as of the session's date: the later article does not exist for the agent.
    assert found["ids"] == [before.pk]
    assert found["as_of"].startswith(session.simulated_at.date().isoformat())
    evidence_log_flush()
    assert EvidenceAccess.objects.filter(agent=agent, session=session, kind="search").count() == 1

    [forecast] = agent_http.get("/api/v1/forecasts/", params={"question": question.pk}).json()["results"]
    assert forecast["session"] == str(session.pk)
    assert forecast["prediction"] == {"probability": 0.7} and forecast["sources"] == [before.pk]
    assert forecast["idempotency_key"] == f"delivery-{delivery.pk}"

    delivery.refresh_from_db()
    assert delivery.attempts == 1 and delivery.forecast_id == forecast["id"] and delivery.last_error == ""
    [attempt] = delivery.attempt_log.all()
    assert attempt.status_code == 200 and attempt.outcome == "answered" and attempt.latency_ms is not None

    member = Client()
    member.force_login(owner)
    page = member.get(f"/teams/{agent.team.slug}/agents/{agent.slug}/").content.decode()
    assert "Answered with a forecast" in page and f"forecast #{forecast['id']}" in page
    assert "HTTP 200" in page and f"{attempt.latency_ms} ms" in page


def test_an_invalid_answer_is_refused_with_the_apis_message(
    agent: Agent, owner: Any, endpoint: Any, agent_server: AgentServer
) -> None:
    question = replay_question()
    agent_server.reply = Reply(status=200, body={"prediction": {"probability": 1.7}})
    delivery, _ = delivery_request(agent=agent, question_id=question.pk)

    assert delivery_run(delivery_id=str(delivery.pk)).status == Delivery.Status.REFUSED

    delivery.refresh_from_db()
    assert delivery.last_error.startswith("the answer was refused (400 invalid): prediction.probability")
    assert not Forecast.objects.exists()
    assert delivery_run(delivery_id=str(delivery.pk)).status == "skipped"  # an answer is never retried
    assert len(agent_server.received) == 1


def test_an_empty_answer_acknowledges_and_the_agent_answers_through_the_api(
    live_server: Any, agent: Agent, endpoint: Any, agent_server: AgentServer, agent_http: httpx.Client
) -> None:
    question = replay_question()
    delivery, _ = delivery_request(agent=agent, question_id=question.pk)
    assert delivery_run(delivery_id=str(delivery.pk)).status == Delivery.Status.ACKNOWLEDGED

    payload = agent_server.received[0].json
    later = {
        "question": payload["question"]["id"],
        "session": payload["session"]["id"],
        "prediction": {"probability": 0.4},
        "idempotency_key": payload["answer"]["idempotency_key"],
    }
    assert agent_http.post("/api/v1/forecasts/", json=later).status_code == 201
    assert agent_http.post("/api/v1/forecasts/", json=later).status_code == 200  # the same key: no second forecast
    assert Forecast.objects.filter(agent=agent, question=question).count() == 1
