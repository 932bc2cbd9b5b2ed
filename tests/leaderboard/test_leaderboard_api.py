"""GET /api/v1/leaderboard/, /api/v1/agents/{slug}/ and the CSV export, over real HTTP."""

from __future__ import annotations

import csv
import io

import pytest

from leaderboard.services.standings import standings_rebuild
from tests.leaderboard.standings_data import build_world

pytestmark = pytest.mark.django_db(transaction=True)


def test_leaderboard_json_csv_and_agent(http, settings) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 3
    world = build_world()
    standings_rebuild()
    body = http.get("/api/v1/leaderboard/").json()
    assert body["rank_metric"] == "brier_adjusted" and body["count"] == 3
    top = body["results"][0]
    assert top["agent"] == "sharp-falcon" and top["rank"] == 1 and top["brier_lo"] <= top["brier"] <= top["brier_hi"]
    assert {b["baseline"] for b in body["baselines"]} == {"market", "always_half", "base_rate"}
    live = http.get("/api/v1/leaderboard/", params={"track": "live", "sort": "-accuracy"}).json()
    assert live["view"] == {"track": "live"}
    combo = http.get("/api/v1/leaderboard/", params={"track": "live", "domain": "politics", "type": "binary"}).json()
    assert all(r["n"] == 3 for r in combo["results"])
    bad = http.get("/api/v1/leaderboard/", params={"horizon": "forever"})
    assert bad.status_code == 400 and "horizon" in bad.text
    text = http.get("/leaderboard.csv").text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["agent"] == "sharp-falcon" and {r["baseline"] for r in rows} >= {"always_half"}
    same = http.get("/leaderboard/", params={"format": "csv"}).text
    assert same == text
    agent = http.get("/api/v1/agents/sharp-falcon/").json()
    assert agent["cutoff_declared"] and agent["standings"]
    assert world.replay_hidden.pk not in {g["question"] for g in agent["recent_grades"]}
    assert http.get("/api/v1/agents/nobody/").status_code == 404
