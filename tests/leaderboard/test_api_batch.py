"""POST /api/v1/forecasts/batch/: per-item answers; a bad item never stops the others."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from ingestion.models import Question
from leaderboard.models import Forecast
from tests.leaderboard.api_support import live_question, replay_question, stored

pytestmark = pytest.mark.django_db(transaction=True)


def test_mixed_batch(agent_http: httpx.Client) -> None:
    live = live_question()
    choice = live_question("multiple_choice")
    closed = live_question(status=Question.Status.CLOSED)
    replay = replay_question()
    session = agent_http.post("/api/v1/replays/", json={"question": replay.pk}).json()["id"]
    items: list[Any] = [
        {"question": live.pk, "prediction": {"probability": 0.9}},
        {"question": live.pk, "prediction": {"probability": 9}},
        {"question": 999999, "prediction": {"probability": 0.5}},
        {"question": closed.pk, "prediction": {"probability": 0.5}},
        "not an object",
        {"question": replay.pk, "prediction": {"probability": 0.5}},
        {"question": replay.pk, "session": session, "prediction": {"probability": 0.4}},
        {"question": choice.pk, "prediction": {"probabilities": {"Yes": 1.0}}},
        {"prediction": {"probability": 0.5}},
    ]
    response = agent_http.post("/api/v1/forecasts/batch/", json=items)
    assert response.status_code == 200, response.text
    payload = response.json()
    results = payload["results"]
    assert [r["status"] for r in results] == [201, 400, 404, 409, 400, 400, 201, 400, 400]
    assert [r["index"] for r in results] == list(range(len(items)))
    assert (payload["created"], payload["replayed"], payload["failed"]) == (2, 0, 7)
    assert results[1]["error"]["errors"][0]["field"] == "prediction.probability"
    assert "999999" in results[2]["error"]["message"]
    assert results[5]["error"]["errors"][0]["field"] == "session"
    assert {e["field"] for e in results[7]["error"]["errors"]} == {
        "prediction.probabilities.No",
        "prediction.probabilities.Maybe",
    }
    assert results[8]["error"]["errors"][0]["field"] == "question"
    assert results[0]["forecast"]["prediction"] == {"probability": 0.9} and results[0]["error"] is None
    assert results[6]["forecast"]["session"] == session
    assert sorted(Forecast.objects.values_list("pk", flat=True)) == sorted(
        [results[0]["forecast"]["id"], results[6]["forecast"]["id"]]
    )


def test_idempotency_inside_and_across_batches(agent_http: httpx.Client) -> None:
    question = live_question()
    same = {"question": question.pk, "prediction": {"probability": 0.3}, "idempotency_key": "a"}
    other = {"question": question.pk, "prediction": {"probability": 0.4}, "idempotency_key": "a"}
    results = agent_http.post("/api/v1/forecasts/batch/", json=[same, same, other]).json()["results"]
    assert [r["status"] for r in results] == [201, 200, 409]
    assert results[0]["forecast"]["id"] == results[1]["forecast"]["id"]
    assert results[2]["error"]["message"] == (
        "idempotency_key 'a' is used by an earlier item of this batch with a different body; "
        "each forecast needs its own key"
    )
    results = agent_http.post("/api/v1/forecasts/batch/", json=[same, other]).json()["results"]
    stored_id = Forecast.objects.get().pk
    assert results[0]["status"] == 200 and results[0]["forecast"]["id"] == stored_id
    assert results[1]["status"] == 409
    assert (
        f"idempotency_key 'a' was already used for forecast {stored_id} with a different body"
        in (results[1]["error"]["message"])
    )


@pytest.mark.parametrize(
    ("payload", "words"),
    [({"question": 1}, "JSON list"), ([], "empty"), ([{"question": 1}] * 1001, "at most 1000")],
)
def test_bad_batch_body(agent_http: httpx.Client, payload: Any, words: str) -> None:
    response = agent_http.post("/api/v1/forecasts/batch/", json=payload)
    assert response.status_code == 400 and words in response.json()["message"]
    assert stored() == (0, 0)


def test_batch_needs_token(http: httpx.Client) -> None:
    question = live_question()
    response = http.post(
        "/api/v1/forecasts/batch/", json=[{"question": question.pk, "prediction": {"probability": 0.5}}]
    )
    assert response.status_code == 401
    assert stored() == (0, 0)
