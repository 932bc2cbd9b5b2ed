"""Farming published replay outcomes: once staff publish a replay question's outcome it opens no new
session and takes no forecast (409 naming the publication), and no forecast received from then on
ever counts in grades or standings."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import httpx
import pytest
from django.core.management import call_command
from django.utils import timezone

from ingestion.models import Question
from leaderboard.models import Agent, Forecast, Grade, ReplaySession, Standing
from leaderboard.services.grade_runs import grade_question
from tests.leaderboard.api_support import replay_question, stored

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]


def _forecast(client: httpx.Client, question: Question, session: str, p: float, key: str = "") -> httpx.Response:
    body: dict[str, Any] = {"question": question.pk, "session": session, "prediction": {"probability": p}}
    if key:
        body["idempotency_key"] = key
    return client.post("/api/v1/forecasts/", json=body)


def _publish(question: Question) -> None:
    call_command("publish_outcome", str(question.pk), stdout=StringIO())


def test_published_replay_question_refuses_sessions_and_forecasts(
    agent_http: httpx.Client, rival_http: httpx.Client, agent: Agent, rival_agent: Agent
) -> None:
    question = replay_question("binary", outcome=True)
    session = agent_http.post("/api/v1/replays/", json={"question": question.pk}).json()["id"]
    assert _forecast(agent_http, question, session, 0.3, key="before").status_code == 201
    _publish(question)
    before = stored()

    # A newcomer who read the published outcome cannot open a session ...
    refused = rival_http.post("/api/v1/replays/", json={"question": question.pk})
    assert refused.status_code == 409
    assert refused.json()["code"] == "conflict"
    assert (
        "outcome was published" in refused.json()["message"] and "no more replay sessions" in refused.json()["message"]
    )
    # ... and the agent that forecast before cannot improve its forecast, alone or in a batch.
    again = agent_http.post("/api/v1/replays/", json={"question": question.pk})
    assert again.status_code == 200 and again.json()["id"] == session  # its own session, unchanged
    late = _forecast(agent_http, question, session, 1.0)
    assert late.status_code == 409 and "takes no more forecasts" in late.json()["message"]
    batch = agent_http.post(
        "/api/v1/forecasts/batch/",
        json=[{"question": question.pk, "session": session, "prediction": {"probability": 0.99}}],
    ).json()
    assert batch["failed"] == 1 and batch["results"][0]["status"] == 409
    # A retry of the forecast made before publication still answers with the original.
    assert _forecast(agent_http, question, session, 0.3, key="before").status_code == 200
    assert stored() == before

    grade = Grade.objects.get(is_current=True)
    assert grade.counts and grade.brier == pytest.approx(0.49)
    assert not Standing.objects.filter(agent=rival_agent).exists()


def test_a_forecast_received_after_publication_never_counts(agent: Agent, rival_agent: Agent) -> None:
    question = replay_question("binary", outcome=True)
    published = timezone.now()
    sessions = {
        a.pk: ReplaySession.objects.create(
            agent=a, question=question, simulated_at=question.open_at, created_at=published
        )
        for a in (agent, rival_agent)
    }
    honest = Forecast.objects.create(
        agent=agent,
        question=question,
        session=sessions[agent.pk],
        received_at=published - timedelta(minutes=1),
        prediction={"probability": 0.6},
    )
    Question.objects.filter(pk=question.pk).update(outcome_published_at=published)
    # Rows that slipped in at or after publication (a race with the publication, an old client, an import).
    copied = [
        Forecast.objects.create(
            agent=a,
            question=question,
            session=sessions[a.pk],
            received_at=published + timedelta(seconds=s),
            prediction={"probability": 1.0},
        )
        for a, s in ((agent, 0), (rival_agent, 5))
    ]

    grade_question(question_id=question.pk)
    call_command("rebuild_standings", stdout=StringIO())

    current = {g.forecast_id: g for g in Grade.objects.filter(is_current=True)}
    assert current[honest.pk].counts
    assert not any(current[f.pk].counts for f in copied)
    mine = Standing.objects.get(
        agent=agent, track="replay", question_type="", domain="", origin="", horizon="", contamination_filter=False
    )
    assert mine.n == 1 and mine.brier == pytest.approx(0.16)
    assert not Standing.objects.filter(agent=rival_agent, n__gt=0).exists()
