"""Standings never reveal a replay outcome before staff publish it (rows, baselines, exports)."""

from __future__ import annotations

import httpx
import pytest
from django.utils import timezone

from ingestion.models import Question
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

    Question.objects.filter(pk=replay.pk).update(outcome_published_at=timezone.now())
    standings_rebuild()
    row = Standing.objects.get(
        agent=agent, track="replay", question_type="", domain="", origin="", horizon="", contamination_filter=False
    )
    assert row.n == 1 and row.brier == pytest.approx(0.0025)
