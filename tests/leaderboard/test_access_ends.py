"""Access that ends: a retired agent, a deleted or deactivated token creator, a creator taken off the
team. The agent's token is refused at once on every API endpoint (403 naming why), nothing is
stored, and its past forecasts and grades stay on the leaderboard."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from leaderboard.models import Agent, Forecast, ReplaySession
from leaderboard.services.teams import token_create
from tests.access_cases import ENDINGS, assert_refused, end_access
from tests.leaderboard.api_support import live_question, replay_question
from tests.leaderboard.grading_support import add_forecast, make_question, resolve

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("case", list(ENDINGS))
def test_every_api_call_is_refused_and_the_grades_stay(
    case: str, agent: Agent, owner: Any, agent_http: httpx.Client, http: httpx.Client
) -> None:
    graded = make_question()
    add_forecast(agent, graded, {"probability": 0.9})
    resolve(graded, True)
    live, replay = live_question(), replay_question()
    assert agent_http.get("/api/v1/forecasts/").status_code == 200
    creatorless = token_create(agent=agent, name="cli", issued_by="command").key  # create_agent without --owner
    stored = Forecast.objects.count()

    end_access(case, agent=agent, owner=owner)

    calls = [
        agent_http.post("/api/v1/forecasts/", json={"question": live.pk, "prediction": {"probability": 0.5}}),
        agent_http.post("/api/v1/forecasts/batch/", json={"forecasts": [{"question": live.pk, "prediction": {}}]}),
        agent_http.get("/api/v1/forecasts/"),
        agent_http.post("/api/v1/replays/", json={"question": replay.pk}),
        agent_http.get("/api/v1/evidence/articles/", params={"q": "x", "question": live.pk}),
        agent_http.get("/api/v1/deliveries/"),
        agent_http.get("/api/v1/questions/"),  # public, but a token presented is checked
    ]
    for response in calls:
        assert_refused(response.status_code, response.json(), case)
        assert "WWW-Authenticate" not in response.headers
    assert Forecast.objects.count() == stored and not ReplaySession.objects.exists()

    # A token no person created ends only with the agent's retirement.
    other = http.get("/api/v1/forecasts/", headers={"Authorization": f"Token {creatorless}"})
    assert other.status_code == (403 if case == "retired" else 200)

    # The past stays: the graded forecast, on the leaderboard and the agent's public record.
    board = http.get("/api/v1/leaderboard/").json()["results"]
    assert agent.slug in [row["agent"] for row in board]
    record = http.get(f"/api/v1/agents/{agent.slug}/").json()
    assert [g["question"] for g in record["recent_grades"]] == [graded.pk]
    assert (record["retired_at"] is not None) == (case == "retired")


def test_a_retired_agent_takes_no_new_token(agent: Agent, owner: Any) -> None:
    end_access("retired", agent=agent, owner=owner)
    with pytest.raises(Exception, match="is retired: it takes no new tokens"):
        token_create(agent=agent, created_by=owner)


def test_a_deleted_team_takes_its_tokens_with_it(agent: Agent, agent_key: str, http: httpx.Client) -> None:
    creatorless = token_create(agent=agent, name="cli", issued_by="command").key
    for key in (agent_key, creatorless):
        assert http.get("/api/v1/forecasts/", headers={"Authorization": f"Token {key}"}).status_code == 200

    agent.team.delete()  # staff may delete only a team without agents; the database is not so careful

    for key in (agent_key, creatorless):
        for path in ("/api/v1/forecasts/", "/api/v1/questions/"):
            refused = http.get(path, headers={"Authorization": f"Token {key}"})
            assert (refused.status_code, refused.json()["code"]) == (401, "authentication_failed")
