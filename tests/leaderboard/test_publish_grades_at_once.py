"""Publishing a replay outcome grades the forecasts that arrived since the resolution at once and lets
them into the standings: no wait for the periodic sweeper."""

from __future__ import annotations

from io import StringIO

import httpx
import pytest
from django.core.management import call_command

from leaderboard.models import Agent, Grade, Standing
from leaderboard.services.standings import standings_update_for_questions
from tests.leaderboard.api_support import replay_question
from tests.leaderboard.grading_support import add_forecast, make_question, resolve

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]


def _replay_row(agent: Agent) -> Standing | None:
    return Standing.objects.filter(
        agent=agent, track="replay", question_type="", domain="", origin="", horizon="", contamination_filter=False
    ).first()


def test_publish_outcome_grades_and_ranks_at_once(agent: Agent, agent_http: httpx.Client, http: httpx.Client) -> None:
    question = replay_question("binary", outcome=True)
    session = agent_http.post("/api/v1/replays/", json={"question": question.pk}).raise_for_status().json()
    body = {"question": question.pk, "session": session["id"], "prediction": {"probability": 0.8}}
    agent_http.post("/api/v1/forecasts/", json=body).raise_for_status()
    # The question was resolved before the forecast arrived: nothing has graded it yet.
    assert not Grade.objects.exists()
    listed = agent_http.get("/api/v1/forecasts/").raise_for_status().json()["results"]
    assert listed[0]["grade_status"] == "withheld until the outcome is published"

    out = StringIO()
    call_command("publish_outcome", str(question.pk), stdout=out)

    assert "outcome published" in out.getvalue()
    grade = Grade.objects.get(is_current=True)
    assert grade.counts and grade.brier == pytest.approx(0.04)
    listed = agent_http.get("/api/v1/forecasts/").raise_for_status().json()["results"]
    assert listed[0]["grade_status"] == "graded" and listed[0]["grade"]["brier"] == pytest.approx(0.04)
    row = _replay_row(agent)
    assert row is not None and row.n == 1 and row.brier == pytest.approx(0.04)
    board = http.get("/api/v1/leaderboard/", params={"track": "replay", "contamination": "off"}).json()
    assert agent.slug in str(board)


def test_publishing_a_question_nobody_forecast_changes_nothing(agent: Agent) -> None:
    question = replay_question("binary", outcome=False)
    call_command("publish_outcome", str(question.pk), stdout=StringIO())
    assert not Grade.objects.exists()
    assert _replay_row(agent) is None


def test_standings_update_for_a_question_without_grades_leaves_the_others(agent: Agent, rival_agent: Agent) -> None:
    live = make_question("binary")
    add_forecast(rival_agent, live, {"probability": 0.9})
    resolve(live, True)
    before = set(Standing.objects.values_list("agent_id", "baseline", "track", "question_type", "domain", "n", "brier"))
    question = replay_question("binary", outcome=True)
    result = standings_update_for_questions(question_ids=[question.pk])
    assert result.grades == 0 and not Standing.objects.filter(agent=agent).exists()
    assert (
        set(Standing.objects.values_list("agent_id", "baseline", "track", "question_type", "domain", "n", "brier"))
        == before
    )
