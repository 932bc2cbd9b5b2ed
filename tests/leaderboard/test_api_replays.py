"""POST /api/v1/replays/: one session per agent and question, simulated date by policy, never changed."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
import pytest

from ingestion.models import Question
from leaderboard.models import ReplaySession
from tests.factories import T0
from tests.leaderboard.api_support import T_RES, live_question, replay_question, stored

pytestmark = pytest.mark.django_db(transaction=True)


def test_first_201_then_200_same_session(agent_http: httpx.Client, rival_http: httpx.Client) -> None:
    question = replay_question()
    first = agent_http.post("/api/v1/replays/", json={"question": question.pk})
    assert first.status_code == 201, first.text
    body = first.json()
    assert body["question"] == question.pk and body["agent"] == "owl-one"
    assert datetime.fromisoformat(body["simulated_date"]) == T0 + (T_RES - T0) / 2
    again = agent_http.post("/api/v1/replays/", json={"question": question.pk})
    assert again.status_code == 200 and again.json() == body
    # Changing the policy later never moves an existing session.
    Question.objects.filter(pk=question.pk).update(simulated_date_policy="early")
    assert agent_http.post("/api/v1/replays/", json={"question": question.pk}).json() == body
    rival = rival_http.post("/api/v1/replays/", json={"question": question.pk})
    assert rival.status_code == 201 and rival.json()["id"] != body["id"]
    assert ReplaySession.objects.count() == 2


@pytest.mark.parametrize(
    ("policy", "fraction"), [("early", 0.25), ("mid", 0.5), ("late", 0.75), ("near_resolution", 0.95)]
)
def test_simulated_date_policy(agent_http: httpx.Client, policy: str, fraction: float) -> None:
    question = replay_question(simulated_date_policy=policy)
    body = agent_http.post("/api/v1/replays/", json={"question": question.pk}).json()
    assert datetime.fromisoformat(body["simulated_date"]) == T0 + (T_RES - T0) * fraction


def test_window_falls_back_to_resolve_by(agent_http: httpx.Client) -> None:
    # A replay question under review (un-resolved, closed) has no resolved_at: the window ends at resolve_by.
    question = replay_question(status=Question.Status.CLOSED)
    question.resolutions.all().delete()
    body = agent_http.post("/api/v1/replays/", json={"question": question.pk}).json()
    assert datetime.fromisoformat(body["simulated_date"]) == T0 + (question.resolve_by - T0) / 2


@pytest.mark.parametrize(
    ("make", "status", "words"),
    [
        (lambda: live_question(), 409, "live track"),
        (lambda: replay_question(status=Question.Status.DRAFT), 409, "not offered"),
        (lambda: replay_question(outcome_published_at=T_RES + timedelta(days=3)), 409, "outcome was published"),
        (lambda: replay_question(open_at=datetime(2027, 1, 1, tzinfo=T0.tzinfo)), 409, "empty forecast window"),
    ],
)
def test_not_offered(agent_http: httpx.Client, make: object, status: int, words: str) -> None:
    question = make()  # type: ignore[operator]
    response = agent_http.post("/api/v1/replays/", json={"question": question.pk})
    assert response.status_code == status and words in response.json()["message"]
    assert stored() == (0, 0)


def test_bad_requests(agent_http: httpx.Client) -> None:
    response = agent_http.post("/api/v1/replays/", json={"question": 999999})
    assert response.status_code == 404 and "999999" in response.json()["message"]
    response = agent_http.post("/api/v1/replays/", json={})
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "question"
    response = agent_http.post("/api/v1/replays/", json={"question": "abc"})
    assert response.status_code == 400
    assert stored() == (0, 0)


def test_window_uses_current_resolution(agent_http: httpx.Client) -> None:
    question = replay_question(simulated_date_policy="late")
    question.resolutions.create(
        version=2, kind="amend", outcome=False, resolved_at=T0 + timedelta(days=40), created_at=T_RES
    )
    body = agent_http.post("/api/v1/replays/", json={"question": question.pk}).json()
    assert datetime.fromisoformat(body["simulated_date"]) == T0 + timedelta(days=30)
