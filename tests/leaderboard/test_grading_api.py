"""Agents see their grades in GET /api/v1/forecasts/ (real HTTP); unpublished replay outcomes stay hidden."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from ingestion.models import Question
from ingestion.services.questions import question_publish_outcome
from leaderboard.models import Agent, ReplaySession
from leaderboard.services.grade_runs import grade_question
from tests.factories import T0
from tests.leaderboard.grading_support import add_forecast, make_question, resolve

pytestmark = pytest.mark.django_db(transaction=True)

GRADE_KEYS = {
    "correct", "brier", "log_score", "market_edge", "source_precision", "leaks", "key_event_recall",
    "first_level_f1", "second_level_f1", "kl_binary", "kl_quad", "open_precision", "open_recall", "open_f1",
}  # fmt: skip


def _by_id(client: httpx.Client) -> dict[int, dict[str, Any]]:
    response = client.get("/api/v1/forecasts/", params={"limit": 100})
    assert response.status_code == 200, response.text
    return {item["id"]: item for item in response.json()["results"]}


def test_grades_in_the_forecast_list(agent: Agent, agent_http: httpx.Client, settings: Any) -> None:
    settings.LLM_MODEL = ""
    binary = make_question("binary")
    fb = add_forecast(agent, binary, {"probability": 0.8})
    relation = make_question("relation")
    fr = add_forecast(agent, relation, {"relations": {"04": ["042"]}})
    still_open = make_question("binary")
    fo = add_forecast(agent, still_open, {"probability": 0.5})
    replay = make_question("binary", track=Question.Track.REPLAY)
    resolve(replay, True)
    session = ReplaySession.objects.create(
        agent=agent, question=replay, simulated_at=T0 + timedelta(days=10), created_at=T0 + timedelta(days=80)
    )
    fp = add_forecast(agent, replay, {"probability": 0.9}, session=session, received_at=T0 + timedelta(days=81))
    resolve(binary, True)
    resolve(relation, {"relations": {"04": ["042"], "05": []}})
    for q in (binary, relation, replay):
        grade_question(question_id=q.pk)

    items = _by_id(agent_http)

    b = items[fb.pk]
    assert b["grade_status"] == "graded"
    assert set(b["grade"]) >= GRADE_KEYS
    assert b["grade"]["correct"] is True and b["grade"]["brier"] == pytest.approx(0.04)
    assert b["grade"]["first_level_f1"] is None and b["grade"]["open_f1"] is None
    assert b["grade"]["key_event_recall"] is None  # no hindsight reference yet
    r = items[fr.pk]["grade"]
    assert r["first_level_f1"] == pytest.approx(2 / 3) and r["correct"] is None and r["kl_quad"] is not None
    assert items[fo.pk]["grade"] is None and items[fo.pk]["grade_status"] == "unresolved"
    p = items[fp.pk]
    assert p["grade"] is None and p["grade_status"] == "withheld until the outcome is published"

    question_publish_outcome(question=Question.objects.get(pk=replay.pk))
    p = _by_id(agent_http)[fp.pk]
    assert p["grade_status"] == "graded" and p["grade"]["correct"] is True and p["grade"]["counts"] is True


def test_rival_does_not_see_my_grades(agent: Agent, rival_http: httpx.Client) -> None:
    question = make_question("binary")
    add_forecast(agent, question, {"probability": 0.8})
    resolve(question, True)
    grade_question(question_id=question.pk)
    assert _by_id(rival_http) == {}
