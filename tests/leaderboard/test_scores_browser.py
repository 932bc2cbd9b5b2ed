"""In a real browser: scores of every question type, outcomes in words, an annulled question, a
forecast's grade history and its events on the hindsight graph, the reliability diagram (with data
and empty) and the leaderboard's calibration view. Screenshots go to test-artifacts/."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from ingestion.services.questions import question_annul
from leaderboard.models import Agent
from leaderboard.services.grade_runs import grade_question
from leaderboard.services.standings import standings_rebuild
from tests.browser import login, screenshot
from tests.factories import T0, AgentFactory
from tests.leaderboard.grading_support import (
    RESOLVED_AT,
    RefEvent,
    add_forecast,
    articles,
    make_question,
    make_reference,
    resolve,
)
from tests.leaderboard.standings_data import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def no_llm(settings: Any) -> None:
    settings.LLM_MODEL = ""


def _graded(agent: Agent, qtype: str, prediction: dict[str, Any], outcome: Any, **kwargs: Any) -> Any:
    question = make_question(qtype, **kwargs)
    forecast = add_forecast(agent, question, prediction)
    resolve(question, outcome)
    grade_question(question_id=question.pk)
    return question, forecast


def test_scores_outcomes_and_grade_history(browser_page: Any, live_server: Any, owner: Any, agent: Agent) -> None:
    page = browser_page
    relation, _ = _graded(
        agent,
        "relation",
        {"relations": {"04": ["042", "043"], "05": []}},
        {"relations": {"04": ["042"], "16": ["163"]}},
        title="Which relations will USA and CHN show on 1 June 2026?",
    )
    open_ended, _ = _graded(
        agent, "open_ended", {"events": ["Ceasefire signed"]}, ["Ceasefire signed", "Talks fail"], title="What follows?"
    )
    _graded(agent, "quantity", {"interval": [10, 20]}, 15.0, title="How many launches?")
    _graded(agent, "timeframe", {"period": "2026-Q3"}, "2026-Q4", title="When will the bridge open?")
    annulled = make_question("binary", title="Will the voided market settle?")
    add_forecast(agent, annulled, {"probability": 0.6})
    resolve(annulled, True)
    question_annul(question=annulled, reason="The exchange voided the market.", now=RESOLVED_AT)
    grade_question(question_id=annulled.pk)

    page.goto(f"/questions/{relation.pk}/")
    main = page.inner_text("main")
    assert "042 Make a visit" in main and "163 Impose embargo or boycott or sanctions" in main
    assert "{'relations'" not in main
    for label in ("1st P", "1st F1", "2nd F1", "KL bin", "KL quad"):
        assert label in main
    screenshot(page, "scores-01-relation-question")

    page.goto(f"/questions/{open_ended.pk}/")
    assert "lexical judge" in page.inner_text("table.forecasts")
    screenshot(page, "scores-02-open-ended-question")

    page.goto(f"/questions/{annulled.pk}/")
    assert "Annulled: The exchange voided the market." in page.inner_text("#annulled")
    assert "Outcome: No" not in page.inner_text("main")
    screenshot(page, "scores-03-annulled-question")

    page.goto(f"/agents/{agent.slug}/")
    graded = page.inner_text("table.graded")
    for words in ("1st F1", "lexical judge", "Interval holds", "Exact period", "Annulled", "15 USD"):
        assert words in graded
    screenshot(page, "scores-04-agent")

    login(page, "owner")
    page.goto("/dashboard/")
    assert "Interval holds" in page.inner_text("table.own-forecasts")
    screenshot(page, "scores-05-dashboard")


def test_forecast_history_and_overlay_on_the_graph(browser_page: Any, live_server: Any, agent: Agent) -> None:
    page = browser_page
    question = make_question("binary", title="Will the Senate pass the lunar budget?")
    docs = articles(3)
    forecast = add_forecast(
        agent,
        question,
        {"probability": 0.8},
        cited=docs[:1],
        graph={
            "events": [
                {"id": "a", "title": "Senate committee approves lunar budget draft", "date": "2026-01-04"},
                {"id": "b", "title": "Unrelated weather report", "date": "2026-01-20"},
            ],
            "edges": [],
        },
    )
    resolve(question, True)
    grade_question(question_id=question.pk)
    make_reference(
        question,
        [
            RefEvent(
                "e1",
                "Senate committee approves lunar budget draft",
                (T0 + timedelta(days=3)).date(),
                0.8,
                0.9,
                sources=docs[:1],
            ),
            RefEvent(
                "e2", "Treasury confirms funding room", (T0 + timedelta(days=9)).date(), 0.5, 0.8, sources=docs[1:2]
            ),
            RefEvent(
                "e3", "Senate approves lunar budget", (T0 + timedelta(days=40)).date(), 0.9, 0.9, sources=docs[2:]
            ),
            RefEvent("out", "Outcome", (T0 + timedelta(days=70)).date(), is_outcome=True),
        ],
    )
    grade_question(question_id=question.pk)

    page.goto(f"/forecasts/{forecast.pk}/")
    history = page.inner_text("table.grade-history")
    assert "first grade" in history and "hindsight graph v— → v1" in history
    assert page.locator("table.grade-history tbody tr").count() == 2
    screenshot(page, "scores-06-forecast-history")

    page.click("#overlay-link")
    page.wait_for_url(f"**/forecasts/{forecast.pk}/graph/**")
    page.locator("#graph canvas").first.wait_for()
    found = page.evaluate(
        "({forecast: hindsightGraph.nodes('.forecast').length, matches: hindsightGraph.edges('.match').length,"
        " matched: hindsightGraph.nodes('.event.matched').length})"
    )
    assert found == {"forecast": 2, "matches": 1, "matched": 1}
    assert "Showing the forecast of" in page.inner_text("#overlay-note")
    page.locator("#graph-section").screenshot(
        path=str(screenshot(page, "scores-07-overlay-page").with_name("scores-07-overlay-graph.png"))
    )


def test_reliability_diagram_and_calibration_view(browser_page: Any, live_server: Any, settings: Any) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 3
    build_world()
    standings_rebuild()
    newcomer = AgentFactory(name="New Agent", slug="new-agent")
    page = browser_page

    page.goto("/agents/sharp-falcon/")
    chart = page.locator("svg.reliability")
    assert chart.locator("text.tick").count() == 12 and chart.locator("line.diagonal").count() == 1
    assert chart.locator("circle.bin").count() >= 1 and chart.locator("rect.bin-count").count() == 10
    chart.screenshot(path=str(screenshot(page, "charts-01-agent").with_name("charts-01-reliability.png")))

    page.goto(f"/agents/{newcomer.slug}/")
    assert "No graded binary forecast yet" in page.locator("svg.reliability").inner_html()
    page.locator("svg.reliability").screenshot(
        path=str(screenshot(page, "charts-02-agent-empty").with_name("charts-02-reliability-empty.png"))
    )

    page.goto("/leaderboard/")
    page.click("#calibration-link a")
    page.wait_for_url("**/leaderboard/calibration/")
    assert page.locator("svg.reliability polyline, svg.reliability circle.bin").count() >= 2
    assert "Sharp Falcon" in page.inner_text("main")
    screenshot(page, "charts-03-calibration")
