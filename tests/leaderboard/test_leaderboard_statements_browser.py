"""The leaderboard never says what its own rows contradict, as a visitor reads it in a real browser:
what it says of ranked baselines, provisional agents and how ties count matches the rows beside it,
before and after the clock runs on and more questions resolve."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from ingestion.models import Question
from leaderboard.models import Agent
from leaderboard.services.grade_runs import grade_question
from leaderboard.services.standings import standings_rebuild
from tests.browser import screenshot
from tests.factories import T0, AgentFactory, TeamFactory
from tests.leaderboard.grading_support import add_forecast, make_question, resolve

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MIN_N = 10
# Probability of YES each agent gives on a question that resolves YES / NO.
LEANS = {"Ada": (0.8, 0.3), "Bo": (0.6, 0.45), "Cy": (0.9, 0.1), "always-half": (0.5, 0.5)}


def _agents() -> dict[str, Agent]:
    team = TeamFactory(name="Forecasters", slug="forecasters")
    agents = {name: AgentFactory(team=team, name=name, slug=name.lower()) for name in ("Ada", "Bo", "Cy")}
    baselines = TeamFactory(name="Hindsight baselines", slug="hindsight-baselines")
    half = AgentFactory(team=baselines, name="always-half", slug="always-half")
    half.is_baseline = True
    half.save(update_fields=["is_baseline"])
    return {**agents, "always-half": half}


def _questions(agents: dict[str, Agent], numbers: range, who: tuple[str, ...]) -> None:
    """Binary questions, every other one resolving YES, forecast by ``who``, resolved and graded."""
    for k in numbers:
        yes = k % 2 == 0
        question = make_question("binary", title=f"Question {k}", open_at=T0 + timedelta(days=k))
        for name in who:
            add_forecast(agents[name], question, {"probability": LEANS[name][0 if yes else 1]})
        resolve(question, yes)
        grade_question(question_id=question.pk)


def _rows(page: Any) -> list[dict[str, str]]:
    rows = page.locator("table.leaderboard tbody tr")
    out = []
    for i in range(rows.count()):
        row = rows.nth(i)
        cells = row.locator("td")
        accuracy = row.locator("[data-metric=accuracy]")
        out.append(
            {
                "class": row.get_attribute("class") or "",
                "rank": cells.nth(0).inner_text().strip(),
                "who": row.locator("td.who a, td.who em").first.inner_text().strip(),
                "n": cells.nth(2).inner_text().strip(),
                "accuracy": accuracy.inner_text().strip() if accuracy.count() else "",
            }
        )
    return out


def _check_statements(page: Any) -> tuple[str, list[dict[str, str]]]:
    """Everything the text above the table says, checked against the rows; returns both."""
    rule = " ".join(page.inner_text("#rank-rule").split())
    rows = _rows(page)
    baselines = [r for r in rows if "baseline" in r["class"].split()]
    competing = [r for r in rows if "baseline" not in r["class"].split()]
    ranked = [r for r in competing if r["rank"].isdigit()]
    provisional = [r for r in competing if r["rank"] == "provisional"]
    assert len(ranked) + len(provisional) == len(competing)
    # Baselines: shown for reference, never ranked, and counted as the text says.
    assert baselines, rows
    assert all(not r["rank"].isdigit() and r["rank"] == "baseline" for r in baselines), baselines
    said = re.search(r"The (\d+) rows? marked baseline", rule)
    assert said is not None and int(said.group(1)) == len(baselines), (rule, baselines)
    assert "never ranked" in rule
    # Provisional agents: the text says all of them are provisional exactly when no agent is ranked.
    everyone = re.search(r"so all (\d+) agents are provisional", rule)
    if ranked:
        assert everyone is None and rule.startswith("Ranked by"), rule
    else:
        assert everyone is not None and int(everyone.group(1)) == len(provisional), rule
        assert rule.startswith("Ranks go by"), rule
    assert all(int(r["n"]) >= MIN_N for r in ranked) and all(int(r["n"]) < MIN_N for r in provisional)
    # Ties: a forecast at exactly 50% is not correct, and the rows of the forecasters that always say
    # 50% (the baseline agent and the computed "Always 0.5") show it.
    assert "Accuracy counts a forecast at exactly 50%" in rule and "as not correct" in rule
    halves = [r for r in baselines if r["who"] in ("always-half", "Always 0.5")]
    assert len(halves) == 2 and all(r["accuracy"] == "0.0%" for r in halves), halves
    return rule, rows


def test_the_text_above_the_table_matches_its_rows(browser_page: Any, settings: Any) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = MIN_N
    agents = _agents()
    _questions(agents, range(4), ("Ada", "Bo", "Cy", "always-half"))
    standings_rebuild()
    page = browser_page
    page.goto("/leaderboard/")
    rule, rows = _check_statements(page)
    assert "so all 3 agents are provisional" in rule
    screenshot(page, "leaderboard-statements-provisional")

    # The clock runs on: eight more questions resolve for Ada, Bo and the baseline agent.
    _questions(agents, range(4, 12), ("Ada", "Bo", "always-half"))
    assert Question.objects.filter(status=Question.Status.RESOLVED).count() == 12
    standings_rebuild()
    page.goto("/leaderboard/")
    rule, rows = _check_statements(page)
    ranks = {r["who"]: r["rank"] for r in rows}
    assert ranks["Ada"] == "1" and ranks["Bo"] == "2" and ranks["Cy"] == "provisional", ranks
    # The baseline agent has as many questions as Ada, and no rank: it stands where its score places it.
    half = next(r for r in rows if r["who"] == "always-half")
    assert int(half["n"]) >= MIN_N and half["rank"] == "baseline"
    screenshot(page, "leaderboard-statements-ranked")

    # The same statements as a visitor reads them on the agent page of the baseline agent.
    page.goto("/agents/always-half/")
    assert "never ranked" in page.inner_text("#baseline-note")
    assert "provisional" not in page.inner_text("table.standings")
