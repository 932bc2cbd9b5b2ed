"""Standings follow grading: resolving a question updates the materialised rows without a rebuild."""

from __future__ import annotations

import pytest

from leaderboard.models import Agent, Standing
from tests.leaderboard.grading_support import add_forecast, make_question, resolve

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]


def overall(agent: Agent) -> Standing:
    return Standing.objects.get(
        agent=agent, track="all", question_type="", domain="", origin="", horizon="", contamination_filter=False
    )


def test_resolution_regrades_and_refreshes_standings(agent: Agent, rival_agent: Agent) -> None:
    question = make_question()
    add_forecast(agent, question, {"probability": 0.9})
    add_forecast(rival_agent, question, {"probability": 0.2})
    assert not Standing.objects.exists()

    resolve(question, True)
    mine, theirs = overall(agent), overall(rival_agent)
    assert mine.brier == pytest.approx(0.01) and theirs.brier == pytest.approx(0.64)
    assert mine.rank_metric == "brier" and mine.brier < theirs.brier

    resolve(question, False)  # amended: the standings follow the new grades
    assert overall(agent).brier == pytest.approx(0.81)
    assert overall(rival_agent).brier == pytest.approx(0.04)
