"""After the demo (clock stopped at the world's present) only the platform's baseline agents have
forecast: the leaderboard lists them for reference, unranked, says which score will rank the agents
that join and that none competes yet, and the home page says no agent is ranked yet: a real run of
`manage.py demo`, then a browser."""

from __future__ import annotations

import socket
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from ingestion.models import Question
from tests.browser import screenshot

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_demo_ranks_agents(browser_page: Any, settings: Any) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 10
    out = StringIO()
    call_command("demo", "--no-serve", "--size", "tiny", "--addrport", f"127.0.0.1:{_free_port()}", stdout=out)
    assert "Rebuilt standings" in out.getvalue()
    page = browser_page
    page.goto("/")
    replay = page.locator("section[aria-label='Top agents: Replay']")
    assert replay.locator("ol li").count() == 0, replay.inner_text()
    assert "No ranked agent yet" in replay.inner_text() and "never ranked" in replay.inner_text()
    screenshot(page, "demo-home")
    page.goto("/leaderboard/?track=replay")
    rule = page.inner_text("#rank-rule")
    assert "Ranks go by Adjusted Brier" in rule and "No agent competes in this view yet" in rule
    baselines = page.locator("tr.baseline")
    assert baselines.count() >= 3  # the baseline agents, and the rows the platform computes
    assert page.locator("tbody tr:not(.baseline)").count() == 0
    assert f"The {baselines.count()} rows marked baseline" in rule
    screenshot(page, "demo-leaderboard-replay")

    # The Real replay view holds the baselines' scores on the real questions whose outcomes the demo
    # published, while one real question of each type stays on offer for a new agent.
    page.goto("/leaderboard/?track=replay&origin=archive")
    assert page.locator("tr.baseline").count() >= 1, page.inner_text("main")
    real = Question.objects.filter(origin=Question.Origin.ARCHIVE)
    on_offer = real.filter(outcome_published_at=None)
    assert real.exclude(outcome_published_at=None).exists()
    assert sorted(on_offer.values_list("type", flat=True)) == sorted(set(real.values_list("type", flat=True)))
