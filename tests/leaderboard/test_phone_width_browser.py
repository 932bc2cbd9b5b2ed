"""The public pages fit a 390 px phone in a real browser: nothing scrolls the page sideways (wide
tables scroll inside their own boxes), long team and agent names wrap, dates stay on one line, and
the leaderboard's ranking score is on screen next to the agent's name. Screenshots go to
test-artifacts/."""

from __future__ import annotations

from typing import Any

import pytest

from ingestion.models import Question
from leaderboard.models import Forecast
from tests.browser import login, screenshot
from tests.sweep_world import build_sweep_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def _page_width(page: Any) -> int:
    return int(page.evaluate("() => document.documentElement.scrollWidth"))


def test_pages_fit_a_phone(browser_page: Any) -> None:
    world = build_sweep_world()
    page = browser_page
    page.set_viewport_size(PHONE)
    multiple_choice = Question.objects.filter(type="multiple_choice", status="resolved", track="live").first()
    assert multiple_choice is not None
    pages = {
        "questions": "/questions/",
        "question-graph": f"/questions/{world.graph_question.pk}/",
        "question-choice": f"/questions/{multiple_choice.pk}/",
        "agent": f"/agents/{world.agent.slug}/",
        "leaderboard": "/leaderboard/",
        "home": "/",
    }
    widths = {}
    for name, url in pages.items():
        page.goto(url)
        widths[name] = _page_width(page)
        screenshot(page, f"phone-{name}")
    # A member's own pages carry the long team name too.
    forecast = Forecast.objects.filter(agent=world.agent, question=world.graph_question).get()
    login(page, world.member.username)
    for name, url in {
        "dashboard": "/dashboard/",
        "team": f"/teams/{world.agent.team.slug}/",
        "forecast": f"/forecasts/{forecast.pk}/",
    }.items():
        page.goto(url)
        widths[name] = _page_width(page)
        screenshot(page, f"phone-{name}")
    print(f"document widths at {PHONE['width']} px: {widths}")
    assert all(w <= PHONE["width"] for w in widths.values()), widths

    # Dates never wrap mid-value.
    page.goto(f"/agents/{world.agent.slug}/")
    for date in page.locator("table time").all()[:5]:
        box = date.bounding_box()
        assert box is not None and box["height"] < 30, date.inner_text()

    # The ranking score sits beside the agent's name, on screen without scrolling.
    page.goto("/leaderboard/")
    key = page.locator("table.leaderboard thead th.key").first
    box = key.bounding_box()
    assert box is not None and box["x"] + box["width"] <= PHONE["width"], box
