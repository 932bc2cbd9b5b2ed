"""POST /api/v1/deliveries/ (an agent asks for a question) and GET (its delivery log), over real HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from endpoints.delivering import delivery_run
from endpoints.models import Delivery
from ingestion.models import Question
from leaderboard.models import Agent, ReplaySession
from tests.endpoints.agent_server import AgentServer, Reply
from tests.leaderboard.api_support import live_question, replay_question

pytestmark = pytest.mark.django_db(transaction=True)

API = "/api/v1/deliveries/"


def test_without_an_endpoint_the_request_is_refused(agent_http: httpx.Client) -> None:
    response = agent_http.post(API, json={"question": replay_question().pk})
    assert response.status_code == 409
    assert response.json()["message"] == "agent owl-one has no endpoint registered; register one on the agent's page"
    assert not Delivery.objects.exists() and not ReplaySession.objects.exists()


def test_an_agent_asks_for_a_replay_question_and_reads_its_log(
    agent: Agent, endpoint: Any, agent_server: AgentServer, agent_http: httpx.Client, rival_http: httpx.Client
) -> None:
    question = replay_question()
    queued = agent_http.post(API, json={"question": question.pk})
    assert queued.status_code == 202
    body = queued.json()
    session = ReplaySession.objects.get(agent=agent, question=question)
    assert body["status"] == "pending" and body["session"] == str(session.pk) and body["trigger"] == "request"
    again = agent_http.post(API, json={"question": question.pk})
    assert again.status_code == 200 and again.json()["id"] == body["id"]

    agent_server.reply = Reply(status=500, body=b"boom")
    delivery_run(delivery_id=body["id"])
    [logged] = agent_http.get(API).json()["results"]
    assert logged["id"] == body["id"] and logged["status"] == "pending" and logged["attempts"] == 1
    assert logged["attempt_log"][0]["status_code"] == 500
    assert logged["attempt_log"][0]["error"] == "the endpoint answered HTTP 500: boom"
    assert rival_http.get(API).json()["results"] == []


def test_bad_requests_name_the_problem(endpoint: Any, agent_http: httpx.Client) -> None:
    missing = agent_http.post(API, json={"question": 999_999})
    assert missing.status_code == 404 and missing.json()["message"] == "question 999999 does not exist"
    closed = live_question(status=Question.Status.CLOSED)
    refused = agent_http.post(API, json={"question": closed.pk})
    assert refused.status_code == 409
    assert refused.json()["message"] == f"question {closed.pk} is closed; live questions take forecasts only while open"
    invalid = agent_http.post(API, json={"question": "twelve"})
    assert invalid.status_code == 400 and invalid.json()["errors"][0]["field"] == "question"
    assert agent_http.post(API, json={}).status_code == 400
    assert httpx.post(str(agent_http.base_url) + API, json={"question": 1}).status_code == 401
