"""One definition per score, shown the same everywhere: for a world with every question type, live and
replay, each agent's scores read from the API (its own forecasts' grades and the public agent API),
the standings page, the agent page with its monthly table, the forecast pages, the leaderboard CSV and
JSON exports and the open-data grades agree; a careful reader's hand calculations agree with them; and
every score any of them shows lies inside the range /methods/ states for it."""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable
from typing import Any

import httpx
import pytest

from grading.scoring.definitions import GRADE_SCORES
from leaderboard.models import Agent, Forecast
from leaderboard.stats.metrics import METRIC_RANGES
from tests.leaderboard.scores_world import HAND, RECEIVED_LIVE, REPLAY_SIMULATED, build_scores_world

pytestmark = [pytest.mark.django_db(transaction=True)]

# What the standings average, per metric: the grade field, and the question types it comes from.
AVERAGED = {
    "brier": "brier",
    "accuracy": "correct",
    "second_level_f1": "second_level_f1",
    "open_f1": "open_f1",
    "source_precision": "source_precision",
    "key_event_recall": "key_event_recall",
}
# How far a value shown on a page may be from the exact one: half its last shown digit.
SHOWN = {"score": 0.0005 + 1e-9, "share": 0.0005 + 1e-9}


@pytest.fixture(autouse=True)
def no_llm(settings: Any) -> None:
    settings.LLM_MODEL = ""
    settings.HINDSIGHT_MIN_RANKED_N = 3


def _number(text: str) -> float | None:
    """A value as a page shows it: "0.390", "56.2%" (a share), "+3.1", "—"."""
    text = text.strip().split(" ")[0]
    if text in ("", "—"):
        return None
    if text.endswith("%"):
        return float(text[:-1]) / 100
    return float(text)


def _spans(html: str, attribute: str) -> list[tuple[str, str]]:
    return re.findall(rf'{attribute}="([a-z_0-9]+)"[^>]*>([^<]*)<', html)


def _part(html: str, pattern: str) -> str:
    found = re.search(pattern, html, re.DOTALL)
    assert found is not None, pattern
    return found.group(1)


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return math.fsum(kept) / len(kept) if kept else None


def _expected(grades: list[dict[str, Any]], *, contamination_filter: bool) -> dict[str, float | None]:
    """An agent's standings in the all-tracks view, computed from its grades as the API gives them."""
    kept = [g for g in grades if not g["void"] and not (contamination_filter and g["contaminated"])]
    return {metric: _mean(g[field] for g in kept) for metric, field in AVERAGED.items()}


def _close(shown: float | None, exact: float | None, tolerance: float, what: str) -> None:
    if exact is None:
        assert shown is None, what
        return
    assert shown is not None, what
    assert abs(shown - exact) <= tolerance, (what, shown, exact)


def _leaderboard_rows(html: str) -> dict[str, dict[str, str]]:
    """slug (or the baseline's name) -> metric -> text shown, from the standings page."""
    rows: dict[str, dict[str, str]] = {}
    for body in re.findall(r"<tr class=\"[^\"]*\">(.*?)</tr>", _part(html, r"<tbody>(.*?)</tbody>"), re.DOTALL):
        who = re.search(r'href="/agents/([^/]+)/"', body) or re.search(r"<em>([^<]+)</em>", body)
        assert who is not None, body
        rows[who.group(1)] = dict(_spans(body, "data-metric"))
    return rows


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_every_page_and_export_shows_the_same_scores(
    live_server: Any, http: httpx.Client, agent: Agent, agent_http: httpx.Client, rival_agent: Agent
) -> None:
    world = build_scores_world({"alba": agent, "brest": rival_agent})
    slugs = {name: a.slug for name, a in world.agents.items()}
    public = {name: http.get(f"/api/v1/agents/{slug}/").json() for name, slug in slugs.items()}
    grades = {name: p["recent_grades"] for name, p in public.items()}
    assert all(len(g) == len(world.forecasts[name]) for name, g in grades.items())

    # The agent's own forecasts through its token carry the same grades as the public agent API.
    own = agent_http.get("/api/v1/forecasts/", params={"limit": 200}).json()["results"]
    own_by_id = {f["id"]: f["grade"] for f in own}
    for g in grades["alba"]:
        for field in ("brier", "correct", "log_score", "second_level_f1", "open_f1", "source_precision"):
            assert own_by_id[g["forecast"]][field] == g.get(field, own_by_id[g["forecast"]][field]), field

    # A careful reader's figures.
    for name, hand in HAND.items():
        expected = _expected(grades[name], contamination_filter=False)
        for metric, value in hand.items():
            assert expected[metric] == pytest.approx(value), (name, metric)
    alba = {f.question.title: f for f in world.forecasts["alba"]}
    assert own_by_id[alba["Live binary question"].pk]["brier"] == pytest.approx(0.04)
    assert own_by_id[alba["Live binary question"].pk]["correct"] is True
    assert own_by_id[alba["Replay binary question"].pk]["correct"] is False  # 0.5: no call
    assert own_by_id[alba["Live multiple_choice question"].pk]["brier"] == pytest.approx(0.39)
    assert own_by_id[alba["Live relation question"].pk]["first_level_f1"] == pytest.approx(1.0)

    exports = {
        flag: {
            (r["agent"] or r["baseline"]): r
            for r in _csv_rows(http.get("/leaderboard.csv", params={"contamination": flag}).text)
        }
        for flag in ("on", "off")
    }
    pages = {
        flag: _leaderboard_rows(http.get("/leaderboard/", params={"contamination": flag}).text)
        for flag in ("on", "off")
    }
    json_rows: dict[str, dict[str, Any]] = {}
    for flag in ("on", "off"):
        body = http.get("/api/v1/leaderboard/", params={"contamination": flag, "page_size": 1000}).json()
        json_rows[flag] = {(r["agent"] or r["baseline"]): r for r in body["results"] + body["baselines"]}
    for name, slug in slugs.items():
        agent_page = http.get(f"/agents/{slug}/").text
        for flag, filtered in (("on", True), ("off", False)):
            expected = _expected(grades[name], contamination_filter=filtered)
            exported, shown, api_row = exports[flag][slug], pages[flag][slug], json_rows[flag][slug]
            standing = dict(_spans(_part(agent_page, rf'<tr data-view="all-{flag}">(.*?)</tr>'), "data-metric"))
            for metric, value in expected.items():
                what = (name, flag, metric)
                _close(float(exported[metric]) if exported[metric] else None, value, 1e-9, what)
                _close(api_row[metric], value, 1e-9, what)
                if metric in shown:
                    _close(_number(shown[metric]), value, SHOWN["share"], what)
                if metric in standing:
                    _close(_number(standing[metric]), value, SHOWN["share"], what)
        # The monthly table: the same forecasts as the "All tracks, off" row, under the month they were
        # made at (replay: the simulated date, not the month the server received them).
        monthly = _part(agent_page, r'<table id="monthly">(.*?)</table>')
        months = re.findall(r"<tr><td>(\d{4}-\d{2})</td>(.*?)</tr>", monthly, re.DOTALL)
        assert [m for m, _ in months] == sorted({REPLAY_SIMULATED.strftime("%Y-%m"), RECEIVED_LIVE.strftime("%Y-%m")})
        expected = _expected(grades[name], contamination_filter=False)
        for metric in ("brier", "source_precision", "key_event_recall"):
            cells = [dict(_spans(body, "data-metric")).get(metric, "—") for _, body in months]
            pairs = [(_number(c), int(c.split("(")[1].rstrip(")"))) for c in cells if c.strip() != "—"]
            total = sum(n for _, n in pairs)
            field = AVERAGED[metric]
            assert total == sum(1 for g in grades[name] if g[field] is not None), (name, metric)
            mean = math.fsum((v or 0.0) * n for v, n in pairs) / total if total else None
            _close(mean, expected[metric], SHOWN["share"], (name, "monthly", metric))

    # Each forecast's page and the open-data grades show the grade the API gives.
    open_data = {int(r["forecast_id"]): r for r in _csv_rows(http.get("/data/grades.csv").text)}
    for name, forecasts in world.forecasts.items():
        by_forecast = {g["forecast"]: g for g in grades[name]}
        for forecast in forecasts:
            grade = by_forecast[forecast.pk]
            page = http.get(f"/forecasts/{forecast.pk}/").text
            scores = dict(_spans(_part(page, r"<dt>Current scores</dt><dd>(.*?)</dd>"), "data-score"))
            if grade["brier"] is not None:
                assert scores["brier"] == f"{grade['brier']:.3f}", (name, forecast.question.title)
            row = open_data[forecast.pk]
            for field in ("brier", "second_level_f1", "open_f1", "source_precision"):
                value = grade[field]
                assert (float(row[field]) if row[field] else None) == (value if value is None else pytest.approx(value))


def _in_range(value: float, low: float | None, high: float | None, slack: float) -> bool:
    return (low is None or value >= low - slack) and (high is None or value <= high + slack)


def test_every_shown_score_lies_in_its_stated_range(
    live_server: Any, http: httpx.Client, agent: Agent, rival_agent: Agent
) -> None:
    world = build_scores_world({"alba": agent, "brest": rival_agent})
    checked = 0
    # The standings of every view a reader can open from the type tabs, both filter settings, as
    # exported and as shown.
    for qtype in ("", "binary", "multiple_choice", "quantity", "timeframe", "relation", "open_ended"):
        for flag in ("on", "off"):
            params = {"contamination": flag, "type": qtype}
            for row in _csv_rows(http.get("/leaderboard.csv", params=params).text):
                for metric, (low, high) in METRIC_RANGES.items():
                    if row[metric]:
                        assert _in_range(float(row[metric]), low, high, 1e-9), (qtype, flag, metric, row[metric])
                        checked += 1
                for index in ("brier_index", "brier_adjusted_index"):
                    if row[index]:
                        assert 0.0 <= float(row[index]) <= 100.0, (index, row[index])
            for cells in _leaderboard_rows(http.get("/leaderboard/", params=params).text).values():
                for metric, text in cells.items():
                    value = _number(text)
                    if value is not None:
                        assert _in_range(value, *METRIC_RANGES[metric], 0.0005), (qtype, metric, text)
                        checked += 1
    # Every grade score on the agent, question and forecast pages and in the API.
    pages = [f"/agents/{a.slug}/" for a in world.agents.values()]
    pages += [f"/questions/{q.pk}/" for q in world.questions]
    pages += [f"/forecasts/{f.pk}/" for f in Forecast.objects.all()]
    for path in pages:
        html = http.get(path).text
        for name, text in _spans(html, "data-score"):
            value = _number(text)
            if value is not None:
                assert GRADE_SCORES[name].contains(value, slack=0.0005), (path, name, text)
                checked += 1
        for metric, text in _spans(html, "data-metric"):
            value = _number(text.split("(")[0])
            if value is not None:
                assert _in_range(value, *METRIC_RANGES[metric], 0.0005), (path, metric, text)
                checked += 1
    for a in world.agents.values():
        for grade in http.get(f"/api/v1/agents/{a.slug}/").json()["recent_grades"]:
            for field, value in grade.items():
                if field in GRADE_SCORES and isinstance(value, int | float) and not isinstance(value, bool):
                    assert GRADE_SCORES[field].contains(float(value)), (a.slug, field, value)
                    checked += 1
    assert checked > 200
