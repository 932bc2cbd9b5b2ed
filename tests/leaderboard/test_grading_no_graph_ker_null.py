"""A forecast without a graph has no KER and no event P/R/F1 (null, not 0) in its grade, the API, the
pages, the CSV and the standings; the standings average KER over forecasts with a graph and show the
KER coverage beside it."""

from __future__ import annotations

import csv
import io

import httpx
import pytest

from leaderboard.models import Agent, Standing
from tests.factories import AgentFactory
from tests.leaderboard.grading_support import (
    RefEvent,
    add_forecast,
    articles,
    current,
    day,
    make_question,
    make_reference,
    resolve,
)

pytestmark = pytest.mark.django_db(transaction=True)

GRAPH = {
    "events": [
        {"id": "a", "title": "Parliament passes the budget bill", "description": "", "date": day(11).isoformat()},
        {"id": "b", "title": "Prime minister resigns suddenly", "description": "", "date": day(40).isoformat()},
    ],
    "edges": [{"source": "a", "target": "b", "relation": "Causes", "strength": 0.5, "confidence": 0.7}],
}


def _overall(agent: Agent) -> Standing:
    return Standing.objects.get(
        agent=agent, track="all", question_type="", domain="", origin="", horizon="", contamination_filter=False
    )


def test_no_graph_means_null_reasoning_everywhere(agent: Agent, http: httpx.Client) -> None:
    question = make_question("binary")
    src = articles(4)
    make_reference(
        question,
        [
            RefEvent("e1", "Parliament passes budget bill", day(10), 0.9, 1.0, sources=[src[0]]),
            RefEvent("e2", "Central bank cuts interest rates", day(20), 0.8, 1.0, sources=[src[1]]),
            RefEvent("e3", "Prime minister resigns", day(40), 0.6, 1.0, sources=[src[2]]),
            RefEvent("out", "Snap election called", day(50), sources=[src[3]], is_outcome=True),
        ],
    )
    bare_agent = AgentFactory()
    with_graph = add_forecast(agent, question, {"probability": 0.8}, cited=[src[0]], graph=GRAPH)
    bare = add_forecast(bare_agent, question, {"probability": 0.6}, cited=[src[1]])
    resolve(question, True)  # grades and updates the standings

    # Grades: KER over the three key events (the outcome node is none of them) for the graph ...
    g = current(with_graph)
    assert g.carried_graph is True and g.key_event_recall == pytest.approx(2 / 3)
    assert g.event_recall == pytest.approx(2 / 3)  # the outcome node is not in the denominator
    # ... and nothing at all without one; its evidence is still scored.
    b = current(bare)
    assert b.carried_graph is False and b.source_precision == 1.0
    assert (b.key_event_recall, b.event_precision, b.event_recall, b.event_f1, b.temporal_mae) == (None,) * 5

    # Standings: KER averaged over forecasts with a graph, coverage beside it.
    mine, theirs = _overall(agent), _overall(bare_agent)
    assert (mine.key_event_recall, mine.key_event_recall_n) == (pytest.approx(2 / 3), 1)
    assert (mine.ker_coverage, mine.ker_coverage_n) == (1.0, 1)
    assert (theirs.key_event_recall, theirs.key_event_recall_n) == (None, 0)
    assert (theirs.ker_coverage, theirs.ker_coverage_n) == (0.0, 1)

    # The public API: the agent's standings and recent grades.
    body = http.get(f"/api/v1/agents/{bare_agent.slug}/").json()
    overall = next(s for s in body["standings"] if s["track"] == "all" and not s["contamination_filter"])
    assert overall["key_event_recall"] is None and overall["ker_coverage"] == 0.0
    (recent,) = body["recent_grades"]
    assert recent["key_event_recall"] is None and recent["ker_coverage"] == 0.0
    board = http.get("/api/v1/leaderboard/", params={"contamination": "off"}).json()
    rows = {r["agent"]: r for r in board["results"] if r["agent"]}
    assert rows[bare_agent.slug]["key_event_recall"] is None and rows[bare_agent.slug]["ker_coverage"] == 0.0
    assert rows[agent.slug]["key_event_recall"] == pytest.approx(2 / 3) and rows[agent.slug]["ker_coverage"] == 1.0

    # The CSV export: an empty KER cell, not 0.
    text = http.get("/leaderboard.csv", params={"contamination": "off"}).text
    csv_rows = {r["agent"]: r for r in csv.DictReader(io.StringIO(text)) if r["agent"]}
    assert csv_rows[bare_agent.slug]["key_event_recall"] == "" and csv_rows[bare_agent.slug]["ker_coverage"] == "0.0"
    assert float(csv_rows[agent.slug]["key_event_recall"]) == pytest.approx(2 / 3)

    # The pages: the agent's graded forecasts show SrcP 100.0% (a share, as in the standings) and an empty KER.
    page = http.get(f"/agents/{bare_agent.slug}/").text
    assert '<td class="num">100.0%</td><td class="num">—</td>' in page
    assert "KER coverage" in http.get("/leaderboard/", params={"contamination": "off"}).text
