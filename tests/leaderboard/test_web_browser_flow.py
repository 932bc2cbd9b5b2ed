"""A person's whole path through the site in a real browser: sign up, log out and in, create a
team, register an agent, issue a token (seen once), submit a forecast, see a validation error
beside its field, fix it and see the stored forecast. Screenshots go to test-artifacts/."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from leaderboard.models import Agent, ApiToken, Forecast
from tests.browser import login, screenshot
from tests.factories import QuestionFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-Long-passphrase-42"


def test_sign_up_to_first_forecast(browser_page: Any, live_server: Any) -> None:
    page = browser_page
    question = QuestionFactory(title="Will the browser test pass?")

    page.goto("/signup/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.click("main form button[type=submit]")
    page.wait_for_url("**/dashboard/")
    assert "You are not in a team yet" in page.inner_text("main")
    screenshot(page, "web-01-dashboard-after-signup")

    page.click("header.site button:has-text('Log out')")
    page.wait_for_url(f"{live_server.url}/")
    login(page, "ada", PASSWORD)
    assert page.url.endswith("/dashboard/")

    page.click("text=Create a team")
    page.fill("input[name=name]", "Analytical Engines")
    page.click("main form button[type=submit]")
    page.wait_for_url("**/teams/analytical-engines/")
    assert "ada" in page.inner_text("#members-h + table")

    page.click("text=Register an agent")
    page.fill("input[name=name]", "Engine One")
    page.fill("input[name=model_name]", "difference-engine-2")
    page.fill("input[name=provider]", "Babbage")
    page.fill("input[name=knowledge_cutoff]", "2025-06-30")
    page.fill("textarea[name=tools_description]", "Punched cards")
    page.click("main form button[type=submit]")
    page.wait_for_url("**/agents/engine-one/")
    agent = Agent.objects.get(slug="engine-one")
    assert str(agent.knowledge_cutoff) == "2025-06-30"

    page.fill("input[name=name]", "notebook")
    page.click("button:has-text('Create token')")
    key = page.inner_text("[data-testid=token-key]").strip()
    assert "shown only once" in page.inner_text("main")
    screenshot(page, "web-02-token-shown-once")
    token = ApiToken.objects.get(agent=agent)
    assert key.startswith(f"hs_{token.prefix}_")
    page.click("text=Back to Engine One")
    agent_page = page.inner_text("main")
    assert key not in page.content() and token.prefix in agent_page and "active" in agent_page
    with httpx.Client(base_url=live_server.url) as api:
        assert api.get("/api/v1/forecasts/", headers={"Authorization": f"Token {key}"}).status_code == 200

    page.goto("/dashboard/")
    page.click("text=Submit a forecast >> nth=-1")
    page.fill("input[name=find]", question.title)
    page.click("button:has-text('Search')")
    page.click(f"a[data-question='{question.pk}']")
    page.fill("input[name=probability]", "1.5")
    page.fill("textarea[name=sources]", "https://example.org/analysis")
    page.fill("textarea[name=rationale]", "The engine computes it.")
    page.click("button:has-text('Submit forecast')")
    error = page.locator("ul.errorlist[data-field=probability]")
    assert error.inner_text().strip() == "The probability of YES must be a probability between 0 and 1, got 1.5."
    screenshot(page, "web-03-forecast-validation-error")
    assert not Forecast.objects.exists()
    assert page.input_value("textarea[name=rationale]") == "The engine computes it."

    page.fill("input[name=probability]", "0.65")
    page.click("button:has-text('Submit forecast')")
    stored = page.locator("#stored-forecast")
    stored.wait_for()
    forecast = Forecast.objects.get()
    assert f"Stored forecast #{forecast.pk}" in stored.inner_text()
    assert forecast.prediction == {"probability": 0.65}
    assert forecast.channel == Forecast.Channel.WEB and forecast.submitted_by.username == "ada"
    assert forecast.sources == ["https://example.org/analysis"]
    screenshot(page, "web-04-forecast-stored")
