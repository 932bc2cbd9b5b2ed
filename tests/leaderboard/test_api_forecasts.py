"""POST/GET /api/v1/forecasts/: every question type, live and replay rules, append-only, own list only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from django.utils import timezone

from ingestion.models import Question
from leaderboard.models import Forecast, Grade
from tests.factories import ArticleFactory
from tests.leaderboard.api_support import VALID_PREDICTIONS, live_question, replay_question, stored

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]


def post(client: httpx.Client, question: Question, prediction: Any = None, **extra: Any) -> httpx.Response:
    body = {"question": question.pk, "prediction": prediction or VALID_PREDICTIONS[question.type], **extra}
    return client.post("/api/v1/forecasts/", json=body)


@pytest.mark.parametrize("qtype", list(VALID_PREDICTIONS))
def test_live_forecast_each_type(agent_http: httpx.Client, qtype: str) -> None:
    question = live_question(qtype)
    before = timezone.now()
    response = post(agent_http, question, rationale="  because  ")
    after = timezone.now()
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["question"] == question.pk and body["session"] is None and body["grade"] is None
    assert body["rationale"] == "because" and body["channel"] == "api"
    forecast = Forecast.objects.get()
    assert before <= forecast.received_at <= after
    assert forecast.prediction == body["prediction"]


def test_normalised_prediction_and_sources(agent_http: httpx.Client) -> None:
    article = ArticleFactory(url="https://news.example.org/one")
    question = live_question("timeframe")
    graph = {
        "events": [
            {"id": "a", "title": "Talks", "description": "Talks start", "date": "2026-03-01"},
            {"id": "b", "title": "Deal", "description": "", "date": "2026-05-01T12:00:00+00:00"},
        ],
        "edges": [{"source": "a", "target": "b", "relation": "causes", "strength": 0.5, "confidence": 0.9}],
    }
    response = post(
        agent_http,
        question,
        prediction={"period": "2026-q4"},
        sources=[article.pk, "https://news.example.org/one", "https://elsewhere.example.com/x"],
        graph=graph,
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["prediction"] == {"period": "2026-Q4"}
    assert body["graph"]["edges"][0]["relation"] == "Causes"
    forecast = Forecast.objects.get()
    assert list(forecast.cited_articles.values_list("pk", flat=True)) == [article.pk]
    assert forecast.sources == [article.pk, "https://news.example.org/one", "https://elsewhere.example.com/x"]


def test_client_cannot_set_received_at(agent_http: httpx.Client) -> None:
    question = live_question()
    response = post(agent_http, question, received_at="2020-01-01T00:00:00Z")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "received_at"
    assert stored() == (0, 0)


def test_append_only_and_own_list(agent_http: httpx.Client, rival_http: httpx.Client) -> None:
    question = live_question()
    other = live_question()
    first = post(agent_http, question, {"probability": 0.2}).json()
    second = post(agent_http, question, {"probability": 0.8}).json()
    post(agent_http, other)
    post(rival_http, question, {"probability": 0.5})
    assert first["id"] != second["id"] and Forecast.objects.count() == 4
    assert Forecast.objects.get(pk=first["id"]).prediction == {"probability": 0.2}

    listed = agent_http.get("/api/v1/forecasts/").json()
    assert listed["count"] == 3 and {f["agent"] for f in listed["results"]} == {"owl-one"}
    only = agent_http.get("/api/v1/forecasts/", params={"question": question.pk}).json()["results"]
    assert [f["id"] for f in only] == [second["id"], first["id"]]
    assert all(f["grade"] is None for f in only)
    assert rival_http.get("/api/v1/forecasts/").json()["count"] == 1
    page = agent_http.get("/api/v1/forecasts/", params={"limit": 1}).json()
    assert len(page["results"]) == 1 and page["next"]


def test_grade_shown_only_once_revealed(agent_http: httpx.Client) -> None:
    question = replay_question()
    session = agent_http.post("/api/v1/replays/", json={"question": question.pk}).json()["id"]
    forecast_id = post(agent_http, question, session=session).json()["id"]
    Grade.objects.create(
        forecast_id=forecast_id,
        version=1,
        grader_version="t",
        resolution_version=1,
        correct=True,
        brier=0.09,
        created_at=timezone.now(),
    )
    assert agent_http.get("/api/v1/forecasts/").json()["results"][0]["grade"] is None
    Question.objects.filter(pk=question.pk).update(outcome_published_at=timezone.now())
    grade = agent_http.get("/api/v1/forecasts/").json()["results"][0]["grade"]
    assert grade["brier"] == 0.09 and grade["correct"] is True


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"status": Question.Status.DRAFT}, "is draft"),
        ({"status": Question.Status.CLOSED}, "is closed"),
        ({"status": Question.Status.RESOLVED}, "is resolved"),
        ({"status": Question.Status.ANNULLED}, "is annulled"),
        ({"close_at": datetime(2026, 2, 1, tzinfo=UTC)}, "stopped accepting"),
        (
            {
                "open_at": datetime(2099, 1, 1, tzinfo=UTC),
                "close_at": datetime(2099, 2, 1, tzinfo=UTC),
            },
            "opens",
        ),
    ],
)
def test_live_not_accepting_is_409(agent_http: httpx.Client, fields: dict[str, Any], words: str) -> None:
    question = live_question(**fields)
    response = post(agent_http, question)
    assert response.status_code == 409, response.text
    assert response.json()["code"] == "conflict" and words in response.json()["message"]
    assert stored() == (0, 0)


def test_deadline_is_server_clock(agent_http: httpx.Client) -> None:
    question = live_question(close_at=timezone.now() + timedelta(hours=1))
    assert post(agent_http, question).status_code == 201
    Question.objects.filter(pk=question.pk).update(close_at=timezone.now() - timedelta(seconds=1))
    assert post(agent_http, question).status_code == 409
    assert Forecast.objects.count() == 1


def test_unknown_question_404(agent_http: httpx.Client) -> None:
    response = agent_http.post("/api/v1/forecasts/", json={"question": 999999, "prediction": {"probability": 0.5}})
    assert response.status_code == 404 and "question 999999" in response.json()["message"]
    assert stored() == (0, 0)


def test_live_question_rejects_session(agent_http: httpx.Client) -> None:
    replay = replay_question()
    session = agent_http.post("/api/v1/replays/", json={"question": replay.pk}).json()["id"]
    response = post(agent_http, live_question(), session=session)
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "session"
    assert Forecast.objects.count() == 0


def test_replay_needs_own_session(agent_http: httpx.Client, rival_http: httpx.Client) -> None:
    question = replay_question()
    other = replay_question()
    response = post(agent_http, question)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "session" and "/api/v1/replays/" in response.json()["message"]

    rival_session = rival_http.post("/api/v1/replays/", json={"question": question.pk}).json()["id"]
    response = post(agent_http, question, session=rival_session)
    assert response.status_code == 404 and "session" in response.json()["message"]
    response = post(agent_http, question, session="00000000-0000-0000-0000-000000000000")
    assert response.status_code == 404
    response = post(agent_http, question, session="not-a-uuid")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "session"

    other_session = agent_http.post("/api/v1/replays/", json={"question": other.pk}).json()["id"]
    response = post(agent_http, question, session=other_session)
    assert response.status_code == 400 and f"for question {other.pk}" in response.json()["message"]
    assert Forecast.objects.count() == 0

    own = agent_http.post("/api/v1/replays/", json={"question": question.pk}).json()["id"]
    response = post(agent_http, question, session=own)
    assert response.status_code == 201 and response.json()["session"] == own
    assert Forecast.objects.get().session_id is not None


@pytest.mark.parametrize("status", [Question.Status.DRAFT, Question.Status.OPEN])
def test_replay_not_offered_is_409(agent_http: httpx.Client, status: str) -> None:
    question = replay_question()
    session = agent_http.post("/api/v1/replays/", json={"question": question.pk}).json()["id"]
    Question.objects.filter(pk=question.pk).update(status=status)
    response = post(agent_http, question, session=session)
    assert response.status_code == 409 and "not offered" in response.json()["message"]
    assert Forecast.objects.count() == 0


def test_replay_accepted_past_close_at(agent_http: httpx.Client) -> None:
    # The replay window is simulated: the live deadline (long past here) does not apply.
    question = replay_question(status=Question.Status.CLOSED)
    session = agent_http.post("/api/v1/replays/", json={"question": question.pk}).json()["id"]
    assert post(agent_http, question, session=session).status_code == 201
