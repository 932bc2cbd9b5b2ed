"""After the demo (clock stopped at the world's present), the home page ranks agents on the replay
track and the leaderboard says which score ranks them: a real run of `manage.py demo`, then a browser."""

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
    assert replay.locator("ol li").count() >= 2, replay.inner_text()
    assert "No ranked agent yet" not in replay.inner_text()
    screenshot(page, "demo-home")
    page.goto("/leaderboard/?track=replay")
    assert "Ranked by Adjusted Brier" in page.inner_text("main")
    assert page.locator("tr.baseline").count() >= 1
    screenshot(page, "demo-leaderboard-replay")

    # The Real replay view holds the baselines' scores on the real questions whose outcomes the demo
    # published, while one real question of each type stays on offer for a new agent.
    page.goto("/leaderboard/?track=replay&origin=archive")
    assert page.locator("tr.baseline").count() >= 1, page.inner_text("main")
    real = Question.objects.filter(origin=Question.Origin.ARCHIVE)
    on_offer = real.filter(outcome_published_at=None)
    assert real.exclude(outcome_published_at=None).exists()
    assert sorted(on_offer.values_list("type", flat=True)) == sorted(set(real.values_list("type", flat=True)))
