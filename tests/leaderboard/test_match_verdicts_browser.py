"""In a real browser: the forecast graph page lists the matcher's verdict on every pair it considered,
with the reason a similar pair was refused, for a visitor and for the forecast's team; an event that
restates a hindsight event with one sentence more is matched, and a price in the graph is read."""

from __future__ import annotations

from typing import Any

import pytest

from leaderboard.models import Agent
from leaderboard.services.grade_runs import grade_question
from tests.browser import login, screenshot
from tests.leaderboard.grading_support import (
    RefEvent,
    add_forecast,
    articles,
    day,
    make_question,
    make_reference,
    resolve,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DEAL = "Solenne Energy agrees to buy Everin Aerospace in all-share deal"


def test_every_pair_and_why_it_was_refused_is_on_the_forecast_graph_page(
    browser_page: Any, live_server: Any, agent: Agent, owner: Any, settings: Any
) -> None:
    settings.LLM_MODEL = ""
    question = make_question("binary", title="Will the bureau approve Solenne Energy's takeover of Everin Aerospace?")
    src = articles(3)
    make_reference(
        question,
        [
            RefEvent("e1", f"Update: {DEAL}", day(10), 0.9, 0.9, f"{DEAL}.", [src[0]]),
            RefEvent("e2", "Everin Aerospace shareholders approve Solenne Energy takeover", day(13), 0.7, 0.8, sources=[src[1]]),
            RefEvent("e3", "Solenne Energy shares close at $1,234.56", day(30), 0.5, 0.8, sources=[src[2]]),
        ],
    )  # fmt: skip
    graph = {
        "events": [
            {"id": "a", "title": DEAL, "description": f"{DEAL}. Solenne Energy and Everin Aerospace boards agreed terms.", "date": day(10).isoformat()},
            {"id": "b", "title": "Everin Aerospace shareholders reject Solenne Energy takeover", "description": "", "date": day(13).isoformat()},
            {"id": "c", "title": "Solenne Energy shares close at $2,469.12", "description": "", "date": day(30).isoformat()},
        ],
        "edges": [],
    }  # fmt: skip
    forecast = add_forecast(agent, question, {"probability": 0.8}, graph=graph)
    resolve(question, True)
    grade_question(question_id=question.pk)

    page = browser_page
    page.goto(f"/forecasts/{forecast.pk}/graph/")
    rows = page.locator("#match-verdicts tbody tr")
    seen = {(r.locator("td").nth(0).inner_text(), r.locator("td").nth(3).inner_text()) for r in rows.all()}
    assert (DEAL, "matched") in seen
    assert ("Everin Aerospace shareholders reject Solenne Energy takeover", "opposite direction") in seen
    assert ("Solenne Energy shares close at $2,469.12", "different quantity") in seen
    assert "swapped roles" not in {verdict for _, verdict in seen}
    assert page.locator("#match-verdicts tr.verdict-opposite-direction").count() == 1
    screenshot(page, "verdicts-01-visitor")

    login(page, "owner")
    page.goto(f"/forecasts/{forecast.pk}/")
    page.click("#overlay-link")
    page.wait_for_url(f"**/forecasts/{forecast.pk}/graph/**")
    assert page.locator("#match-verdicts tbody tr").count() == len(seen)
    assert "opposite direction" in page.inner_text("#match-verdicts")
    page.locator("#match-verdicts").screenshot(
        path=str(screenshot(page, "verdicts-02-member").with_name("verdicts-02-table.png"))
    )
