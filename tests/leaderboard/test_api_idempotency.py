"""Idempotency keys: same key + same body -> 200 and the original; different body -> 409; races too."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from ingestion.models import Question
from leaderboard.models import Forecast
from tests.leaderboard.api_support import live_question

pytestmark = pytest.mark.django_db(transaction=True)


def body(question: Question, p: float = 0.6, key: str = "k-1") -> dict[str, Any]:
    return {"question": question.pk, "prediction": {"probability": p}, "idempotency_key": key, "sources": []}


def test_same_key_same_body_returns_original(agent_http: httpx.Client) -> None:
    question = live_question()
    first = agent_http.post("/api/v1/forecasts/", json=body(question))
    assert first.status_code == 201
    again = agent_http.post("/api/v1/forecasts/", json=body(question))
    assert again.status_code == 200 and again.json() == first.json()
    # Key order and omitted defaults do not make a different body.
    reordered = {"sources": [], "idempotency_key": "k-1", "prediction": {"probability": 0.6}, "question": question.pk}
    assert agent_http.post("/api/v1/forecasts/", json=reordered).status_code == 200
    assert Forecast.objects.count() == 1


def test_same_key_other_body_409(agent_http: httpx.Client) -> None:
    question = live_question()
    original = agent_http.post("/api/v1/forecasts/", json=body(question)).json()
    response = agent_http.post("/api/v1/forecasts/", json=body(question, p=0.7))
    assert response.status_code == 409 and "idempotency_key" in response.json()["message"]
    assert list(Forecast.objects.values_list("pk", "prediction")) == [(original["id"], {"probability": 0.6})]


def test_replay_of_key_after_deadline_still_200(agent_http: httpx.Client) -> None:
    question = live_question()
    first = agent_http.post("/api/v1/forecasts/", json=body(question)).json()
    Question.objects.filter(pk=question.pk).update(status=Question.Status.CLOSED)
    again = agent_http.post("/api/v1/forecasts/", json=body(question))
    assert again.status_code == 200 and again.json()["id"] == first["id"]
    assert agent_http.post("/api/v1/forecasts/", json=body(question, key="k-2")).status_code == 409


def test_keys_are_per_agent(agent_http: httpx.Client, rival_http: httpx.Client) -> None:
    question = live_question()
    assert agent_http.post("/api/v1/forecasts/", json=body(question)).status_code == 201
    assert rival_http.post("/api/v1/forecasts/", json=body(question, p=0.1)).status_code == 201
    assert Forecast.objects.count() == 2


def test_concurrent_same_key_stores_one(live_server: Any, agent_key: str) -> None:
    question = live_question()
    statuses: list[int] = []
    barrier = threading.Barrier(4)

    def send() -> None:
        with httpx.Client(base_url=live_server.url, headers={"Authorization": f"Token {agent_key}"}, timeout=30) as c:
            barrier.wait()
            statuses.append(c.post("/api/v1/forecasts/", json=body(question)).status_code)

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200, 200, 200, 201]
    assert Forecast.objects.count() == 1
