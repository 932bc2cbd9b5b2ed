"""In a real browser: a team member registers the agent's endpoint, copies the secret shown once,
asks for a replay question, and reads the outcome in the delivery log on the agent's page."""

from __future__ import annotations

from typing import Any

import pytest

from endpoints.tasks import sweep_deliveries
from leaderboard.models import Agent
from tests.browser import login, screenshot
from tests.endpoints.agent_server import AgentServer, Reply
from tests.leaderboard.api_support import replay_question

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_register_deliver_and_read_the_log(
    browser_page: Any, owner: Any, agent: Agent, agent_server: AgentServer, fast_deliveries: Any
) -> None:
    page = browser_page
    question = replay_question(title="Will the harbour reopen?")
    login(page, "owner")
    page.goto(f"/teams/{agent.team.slug}/agents/{agent.slug}/")
    assert "No endpoint registered" in page.inner_text("#endpoint")
    page.fill("#endpoint input[name=url]", agent_server.url)
    page.click("#endpoint button:has-text('Register endpoint')")
    secret = page.inner_text("[data-testid=endpoint-secret]").strip()
    assert secret.startswith("whsec_") and "shown only once" in page.inner_text("main")
    screenshot(page, "endpoint-01-secret-shown-once")
    agent_server.secret = secret
    agent_server.reply = Reply(status=200, body={"prediction": {"probability": 0.35}, "rationale": "Still closed."})

    page.click("text=Back to Owl One")
    assert secret not in page.content() and agent_server.url in page.inner_text("[data-testid=endpoint-url]")
    page.fill("#endpoint input[name=question]", str(question.pk))
    page.click("#endpoint button:has-text('Deliver')")
    assert f"Question {question.pk} queued for delivery" in page.inner_text(".messages")

    sweep_deliveries.apply()  # the in-process sweeper's next tick
    page.reload()
    row = page.locator("[data-testid=delivery-log] tbody tr").first
    assert row.locator("[data-testid=delivery-status]").inner_text().startswith("Answered with a forecast")
    row.locator("summary").click()
    assert "Forecast stored · HTTP 200" in row.inner_text()
    screenshot(page, "endpoint-02-delivery-log")
