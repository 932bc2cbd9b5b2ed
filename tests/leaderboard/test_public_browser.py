"""The public site in a real browser: leaderboard filters and sorting, agent and question pages,
then log in, create a token and submit a forecast through the form (with a validation error).
Screenshots go to test-artifacts/."""

from __future__ import annotations

from typing import Any

import pytest

from leaderboard.models import Forecast
from leaderboard.services.standings import standings_rebuild
from tests.browser import login, screenshot
from tests.factories import AgentFactory, MembershipFactory, UserFactory
from tests.leaderboard.standings_data import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_browse_leaderboard_and_submit(browser_page: Any, live_server: Any, settings: Any) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 3
    world = build_world()
    standings_rebuild()
    page = browser_page
    page.goto("/")
    page.click("header.site >> text=Leaderboard")
    page.wait_for_url("**/leaderboard/")
    first = page.locator("table.leaderboard tbody:not(.baselines) tr").first
    assert "Sharp Falcon" in first.inner_text()
    assert page.locator("tr.baseline").count() == 3
    screenshot(page, "public-01-leaderboard")

    page.select_option("select[name=track]", "live")
    page.select_option("select[name=domain]", "politics")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**track=live**")
    assert "Computed on request" not in page.inner_text("main")  # one filter + track: materialised
    screenshot(page, "public-02-leaderboard-filtered")

    page.click("thead >> text=Accuracy")
    page.wait_for_url("**sort=-accuracy**")
    screenshot(page, "public-03-leaderboard-sorted")
    page.click("#contamination-toggle")
    page.wait_for_url("**contamination=off**")
    assert "Unfiltered" in page.inner_text("main")

    page.click("table.leaderboard >> text=Sharp Falcon")
    page.wait_for_url("**/agents/sharp-falcon/")
    assert page.locator("svg[role=img]").count() >= 1 and "Reliability diagram" in page.inner_text("main")
    screenshot(page, "public-04-agent")
    page.click(f"text={world.live[0].title}")
    page.wait_for_url(f"**/questions/{world.live[0].pk}/")
    assert "Market price" in page.inner_text("main")
    screenshot(page, "public-05-question")

    user = UserFactory(username="pilot")
    agent = AgentFactory(team=world.agents[0].team, name="Pilot Agent", slug="pilot-agent")
    MembershipFactory(team=agent.team, user=user)
    login(page, "pilot")
    page.goto(f"/teams/{agent.team.slug}/agents/{agent.slug}/")
    page.fill("input[name=name]", "ci")
    page.click("button:has-text('Create token')")
    assert page.inner_text("[data-testid=token-key]").strip().startswith("hs_")
    screenshot(page, "public-06-token")
    page.goto(f"/forecast/?agent={agent.slug}&question={world.open_question.pk}")
    page.fill("input[name=probability]", "7")
    page.click("button:has-text('Submit forecast')")
    assert "probability" in page.locator("ul.errorlist[data-field=probability]").inner_text()
    screenshot(page, "public-07-forecast-error")
    page.fill("input[name=probability]", "0.3")
    page.click("button:has-text('Submit forecast')")
    page.locator("#stored-forecast").wait_for()
    assert Forecast.objects.filter(agent=agent).count() == 1
    page.goto("/dashboard/")
    assert "Your latest forecasts" in page.inner_text("main")
    screenshot(page, "public-08-dashboard")
