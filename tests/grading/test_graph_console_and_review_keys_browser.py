"""In a real browser: the hindsight graph page and a forecast's graph page log no console warning or
error, and on the review page the first j goes to the first event to review, not past it."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from grading.models import HindsightGraph
from grading.services import hindsight_build
from leaderboard.models import Forecast
from tests.browser import login
from tests.factories import AgentFactory
from tests.grading.corpus import T0, make_corpus, make_question, resolve

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _graph_question(settings: Any) -> tuple[HindsightGraph, Forecast]:
    settings.LLM_MODEL = ""
    question = make_question()
    make_corpus()
    forecast = Forecast.objects.create(
        agent=AgentFactory(),
        question=question,
        received_at=T0,
        prediction={"probability": 0.7},
        graph={
            "events": [
                {"id": "e1", "title": "Senate committee approves the lunar budget draft", "date": "2026-01-04"},
                {"id": "e2", "title": "Senate approves the lunar budget", "date": "2026-02-23"},
            ],
            "edges": [{"source": "e1", "target": "e2", "relation": "Causes", "strength": 0.7, "confidence": 0.8}],
        },
    )
    resolve(question)
    graph = hindsight_build(question_id=question.pk, builder="offline")
    assert graph is not None
    return graph, forecast


def test_graph_pages_log_no_console_warnings(browser_page: Any, settings: Any) -> None:
    graph, forecast = _graph_question(settings)
    page = browser_page
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}") if m.type in ("warning", "error") else None)
    page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
    for url in (f"/hindsight/questions/{graph.question_id}/", f"/forecasts/{forecast.pk}/graph/"):
        page.goto(url)
        page.wait_for_selector("#graph canvas")
        page.wait_for_timeout(300)
    assert messages == []


def test_first_j_goes_to_the_first_event_to_review(browser_page: Any, settings: Any, staff: Any) -> None:
    graph, _ = _graph_question(settings)
    events = list(graph.events.filter(is_outcome=False).order_by("occurred_on", "id"))
    page = browser_page
    login(page, staff.username)
    page.goto(f"/hindsight/review/{graph.question_id}/")
    page.keyboard.press("j")
    expect(page.locator("table.review tbody tr.active")).to_have_id(f"event-{events[0].pk}")
    page.keyboard.press("j")
    expect(page.locator("table.review tbody tr.active")).to_have_id(f"event-{events[1].pk}")
    page.keyboard.press("k")
    expect(page.locator("table.review tbody tr.active")).to_have_id(f"event-{events[0].pk}")
