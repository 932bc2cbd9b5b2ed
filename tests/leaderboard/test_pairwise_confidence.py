"""Pairwise confidence on the agent page and in the agent API: which gaps between agents are real."""

from __future__ import annotations

import pytest

from leaderboard.services.standings import standings_rebuild
from tests.leaderboard.standings_data import build_world

pytestmark = pytest.mark.django_db(transaction=True)


def test_agent_page_and_api_say_how_often_an_agent_beats_its_neighbours(http, settings) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 3
    build_world()
    standings_rebuild()
    page = http.get("/agents/sharp-falcon/").text
    # Sharp Falcon is better on every one of the six questions: it wins every resample.
    assert (
        'Beats <a href="/agents/dull-falcon/">Dull Falcon</a> (rank 3) in 100% of resamples on 6 shared questions'
        in page
    )
    assert 'Beats <a href="/agents/vague-falcon/">Vague Falcon</a> (rank 2)' in page
    dull = http.get("/agents/dull-falcon/").text
    assert 'Loses to <a href="/agents/sharp-falcon/">Sharp Falcon</a> (rank 1) in 100% of resamples' in dull
    body = http.get("/api/v1/agents/sharp-falcon/").json()
    pairs = {p["agent"]: p for p in body["pairwise"]}
    assert pairs["dull-falcon"]["win_share"] == 1.0 and pairs["dull-falcon"]["shared_questions"] == 6
    assert pairs["dull-falcon"]["brier_difference"] < 0 and pairs["dull-falcon"]["resamples"] == 1000
    standing = next(s for s in body["standings"] if s["track"] == "all" and s["contamination_filter"])
    assert standing["rank_metric"] == "brier_adjusted" and standing["peer_score"] > 0
    assert standing["brier_adjusted_index"] == pytest.approx(90.0)  # 100 x (1 - sqrt(0.01))
