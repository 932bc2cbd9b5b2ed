"""The time-averaged Brier over forecast updates: graded through the real path, on both databases."""

from __future__ import annotations

from datetime import timedelta

import pytest

from leaderboard.models import Agent, Standing
from leaderboard.services.standings import standings_rebuild
from tests.factories import T0
from tests.leaderboard.grading_support import add_forecast, make_question, resolve

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]


def overall(agent: Agent, track: str = "all") -> Standing:
    return Standing.objects.get(
        agent=agent, track=track, question_type="", domain="", origin="", horizon="", contamination_filter=False
    )


def test_every_forecast_counts_for_the_time_it_stood(agent: Agent, rival_agent: Agent) -> None:
    # Open 60 days. Agent: 0.5 from day 0, then 0.9 from day 30 (the one that counts), then 1.0 after
    # the close (never stood). Rival: one forecast, 0.6 from day 45.
    question = make_question(close_at=T0 + timedelta(days=60))
    add_forecast(agent, question, {"probability": 0.5}, received_at=T0)
    add_forecast(agent, question, {"probability": 0.9}, received_at=T0 + timedelta(days=30))
    add_forecast(agent, question, {"probability": 1.0}, received_at=T0 + timedelta(days=61))
    add_forecast(rival_agent, question, {"probability": 0.6}, received_at=T0 + timedelta(days=45))
    resolve(question, True)
    standings_rebuild()
    mine, theirs = overall(agent), overall(rival_agent)
    assert mine.brier == pytest.approx(0.01)  # the latest before the close, as before
    assert mine.time_brier == pytest.approx((0.25 * 30 + 0.01 * 30) / 60)
    assert mine.time_coverage == pytest.approx(1.0) and mine.time_brier_n == 1
    assert theirs.time_brier == pytest.approx(0.16) and theirs.time_coverage == pytest.approx(0.25)
    assert overall(agent, "live").time_brier == pytest.approx(mine.time_brier)


def test_superseded_multiple_choice_forecasts_are_scored_on_the_standings_scale(agent: Agent) -> None:
    question = make_question("multiple_choice", close_at=T0 + timedelta(days=10))
    add_forecast(agent, question, {"probabilities": {"Yes": 0.2, "No": 0.4, "Maybe": 0.4}}, received_at=T0)
    add_forecast(
        agent, question, {"probabilities": {"Yes": 0.6, "No": 0.2, "Maybe": 0.2}}, received_at=T0 + timedelta(days=5)
    )
    resolve(question, "Yes")
    standings_rebuild()
    row = overall(agent)
    first = ((0.2 - 1) ** 2 + 0.4**2 + 0.4**2) / 2  # halved onto [0, 1]
    latest = ((0.6 - 1) ** 2 + 0.2**2 + 0.2**2) / 2
    assert row.brier == pytest.approx(latest)
    assert row.time_brier == pytest.approx((first + latest) / 2)
