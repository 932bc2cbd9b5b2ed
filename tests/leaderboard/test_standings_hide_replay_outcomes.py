"""Standings never reveal a replay outcome before staff publish it (rows, baselines, exports)."""

from __future__ import annotations

import httpx
import pytest

from ingestion.models import Question
from ingestion.services.questions import question_publish_outcome
from leaderboard.models import Agent, Standing
from leaderboard.services.standings import standings_rebuild
from tests.leaderboard.grading_support import add_forecast, make_question, resolve

pytestmark = pytest.mark.django_db(transaction=True)


def test_unpublished_replay_grades_stay_out_until_published(agent: Agent, http: httpx.Client) -> None:
    replay = make_question(track=Question.Track.REPLAY)
    add_forecast(agent, replay, {"probability": 0.95})
    resolve(replay, True)
    standings_rebuild()
    assert not Standing.objects.filter(agent=agent).exists()
    assert not Standing.objects.exclude(baseline="").filter(n__gt=0).exists()
    assert agent.slug not in http.get("/api/v1/leaderboard/", params={"track": "replay"}).text
    assert agent.slug not in http.get("/leaderboard.csv").text

    question_publish_outcome(question=Question.objects.get(pk=replay.pk))  # no rebuild: publishing announces
    row = Standing.objects.get(
        agent=agent, track="replay", question_type="", domain="", origin="", horizon="", contamination_filter=False
    )
    assert row.n == 1 and row.brier == pytest.approx(0.0025)
