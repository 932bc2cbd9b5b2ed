"""The fair-comparison scores reach the API, the CSV and JSON exports and the open data, over real HTTP."""

from __future__ import annotations

import csv
import io
import math

import pytest

from leaderboard.models import Grade, QuestionDifficulty
from leaderboard.services.standings import standings_rebuild
from leaderboard.stats.metrics import STANDINGS_VERSION
from tests.leaderboard.standings_data import build_world

pytestmark = pytest.mark.django_db(transaction=True)

NEW_COLUMNS = ("brier_adjusted", "peer_score", "time_brier", "time_coverage", "leaks")


@pytest.fixture
def world(settings):
    settings.HINDSIGHT_MIN_RANKED_N = 3
    built = build_world()
    # Two leaked citations in one of Dull Falcon's forecasts.
    Grade.objects.filter(forecast__agent=built.agents[1], forecast__question=built.live[2]).update(leaks=2)
    Grade.objects.filter(forecast__agent=built.agents[1]).exclude(forecast__question=built.live[2]).update(leaks=0)
    standings_rebuild()
    return built


def test_api_ranks_by_the_adjusted_brier_and_carries_every_new_score(http, world) -> None:
    body = http.get("/api/v1/leaderboard/").json()
    assert body["rank_metric"] == "brier_adjusted"
    assert body["standings_version"] == body["methods_version"] == STANDINGS_VERSION
    rows = {r["agent"]: r for r in body["results"]}
    sharp, dull = rows["sharp-falcon"], rows["dull-falcon"]
    # Every agent answered every question: the adjusted Brier equals the plain mean.
    assert sharp["brier_adjusted"] == pytest.approx(sharp["brier"], abs=1e-9)
    assert sharp["brier_adjusted_n"] == 6 and sharp["rank_n"] == 6
    assert sharp["brier_adjusted_index"] == pytest.approx(100 * (1 - math.sqrt(sharp["brier_adjusted"])))
    # Peer scores of the three agents sum to zero on every question, so their means do too.
    assert sum(r["peer_score"] for r in rows.values()) == pytest.approx(0.0, abs=1e-9)
    assert sharp["peer_score"] > 0 > dull["peer_score"]
    # One forecast each on live questions: it stood from a day after the open to the close.
    assert sharp["time_brier"] == pytest.approx(sharp["brier"])
    assert sharp["time_coverage"] == pytest.approx(0.9)
    assert dull["leaks"] == 2 and dull["leaks_n"] == 6 and sharp["leaks"] is None
    assert all(r["standings_version"] == STANDINGS_VERSION for r in rows.values())


def test_baselines_stand_among_the_agents(http, world) -> None:
    body = http.get("/api/v1/leaderboard/").json()
    half = next(b for b in body["baselines"] if b["baseline"] == "always_half")
    assert half["rank"] is None and half["brier_adjusted"] == pytest.approx(0.25)
    ranked = sorted(r["brier_adjusted"] for r in body["results"] if r["rank"])
    assert half["place"] == 1 + sum(v < 0.25 for v in ranked)
    # Interleaved in the export: the baseline row sits just before the first agent it beats.
    rows = http.get("/leaderboard/", params={"format": "json"}).json()["results"]
    at = next(i for i, r in enumerate(rows) if r["baseline"] == "always_half")
    assert all(r["brier_adjusted"] < 0.25 for r in rows[:at] if not r["baseline"])
    assert all(r["brier_adjusted"] >= 0.25 for r in rows[at + 1 :] if not r["baseline"] and r["rank"])


def test_csv_and_json_exports_carry_the_new_columns(http, world) -> None:
    table = list(csv.DictReader(io.StringIO(http.get("/leaderboard.csv").text)))
    for column in (*NEW_COLUMNS, "brier_adjusted_index", "rank_n", "place", "standings_version"):
        assert column in table[0], column
    sharp = next(r for r in table if r["agent"] == "sharp-falcon")
    assert float(sharp["brier_adjusted"]) == pytest.approx(0.01) and float(sharp["peer_score"]) > 0
    body = http.get("/leaderboard/", params={"format": "json"}).json()
    assert body["rank_metric"] == "brier_adjusted" and body["standings_version"] == STANDINGS_VERSION
    assert all(column in body["results"][0] for column in NEW_COLUMNS)


def test_question_difficulties_are_published(http, world) -> None:
    assert QuestionDifficulty.objects.filter(contamination_filter=True).count() == 6
    body = http.get("/api/v1/leaderboard/difficulty/").json()
    assert body["count"] == 6 and body["order"] == "hardest"
    effects = [r["difficulty"] for r in body["results"]]
    assert effects == sorted(effects, reverse=True)
    assert sum(effects) == pytest.approx(0.0, abs=1e-9)  # question effects average zero
    hardest = body["results"][0]
    assert hardest["agents"] == 3 and hardest["mean_brier"] > 0 and hardest["title"].startswith("Will live event")
    assert http.get("/api/v1/leaderboard/difficulty/", params={"order": "sideways"}).status_code == 400
    assert http.get("/api/v1/leaderboard/difficulty/", params={"contamination": "maybe"}).status_code == 400
    assert world.replay_hidden.pk not in {r["question"] for r in body["results"]}
    exported = list(csv.DictReader(io.StringIO(http.get("/data/question-difficulty.csv").text)))
    assert len(exported) == 12 and {"question_id", "difficulty", "agents", "mean_brier"} <= set(exported[0])
    document = http.get("/data/question-difficulty.json").json()
    assert "difficulty" in document["columns"] and len(document["question-difficulty"]) == 12


def test_views_computed_on_request_use_the_published_difficulties(http, world) -> None:
    body = http.get("/api/v1/leaderboard/", params={"track": "live", "domain": "politics", "type": "binary"}).json()
    rows = {r["agent"]: r for r in body["results"]}
    assert body["rank_metric"] == "brier_adjusted" and rows["sharp-falcon"]["rank"] == 1
    effects = dict(QuestionDifficulty.objects.filter(contamination_filter=True).values_list("question_id", "effect"))
    politics = [q for q in world.live if q.domain == "politics"]
    sharp = Grade.objects.filter(forecast__agent=world.agents[0], forecast__question__in=politics)
    expected = sum(g.brier - effects[g.forecast.question_id] for g in sharp) / len(politics)
    assert rows["sharp-falcon"]["brier_adjusted"] == pytest.approx(expected)
    assert sum(r["peer_score"] for r in rows.values()) == pytest.approx(0.0, abs=1e-9)


def test_the_page_shows_the_new_columns_and_says_what_ranks(http, world) -> None:
    page = http.get("/leaderboard/").text
    assert "Ranked by <strong" in page and "Adjusted Brier</strong> (lower is better)" in page
    for header in ("Adjusted Brier", "Peer score", "Leaks", "KER"):
        assert f">{header}" in page, header
    assert "BI</abbr> 90.0" in page  # Sharp Falcon's adjusted Brier 0.01 as a Brier Index
    assert "Time-averaged Brier" not in page.split("<table", 1)[1].split("</thead>", 1)[0]
    more = http.get("/leaderboard/", params={"columns": "all"}).text
    head = more.split("<table", 1)[1].split("</thead>", 1)[0]
    assert "Time-averaged Brier" in head and "Log score" in head and "Market edge" in head
    assert "cov</abbr> 90.0%" in more  # each forecast stood from a day after the open to the close
