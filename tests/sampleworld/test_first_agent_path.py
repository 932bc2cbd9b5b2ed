"""The README's "Your first agent" path, end to end: the demo's sample world stops at its present,
a new agent registered with create_agent runs the reference agent over HTTP, `sample_world
--advance` moves the fictional clock on, and the agent's page shows its grades. Screenshots go to
test-artifacts/."""

from __future__ import annotations

import io
import logging
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from ingestion.models import Question
from leaderboard.models import Agent, Forecast, Grade
from leaderboard.selectors.questions import SAMPLE_WORLD
from tests.browser import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_llm(settings: Any) -> None:
    settings.LLM_MODEL = ""


def _command(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_first_agent_is_graded_after_advancing_the_clock(browser_page: Any, live_server: Any, caplog: Any) -> None:
    with pytest.raises(CommandError, match="No sample world in this database"):
        _command("sample_world", "--advance", "--no-measure")
    started = time.monotonic()
    _command("sample_world", "--size", "tiny", "--until", "present", "--no-measure")
    open_sample = Question.objects.filter(SAMPLE_WORLD, status=Question.Status.OPEN)
    assert open_sample.exists()
    # The replay questions wait for the new agent: their outcomes are published by --advance.
    sample_replays = Question.objects.filter(SAMPLE_WORLD, track=Question.Track.REPLAY)
    assert sample_replays.exists() and not sample_replays.exclude(outcome_published_at=None).exists()

    page = browser_page
    page.goto("/questions/")
    assert "sample world" in page.inner_text("table.questions tbody tr >> nth=0")
    screenshot(page, "first-agent-01-questions")

    key = _command("create_agent", "--team", "My team", "--agent", "first-agent", "--cutoff", "2024-06-01")
    key = key.strip().splitlines()[-1]
    agent = Agent.objects.get(slug="first-agent")
    result = subprocess.run(
        [sys.executable, str(REPO / "examples" / "reference_agent.py"), "--base-url", live_server.url, "--token", key],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    live_forecasts = Forecast.objects.filter(agent=agent, question__in=open_sample)
    assert live_forecasts.exists(), result.stdout[-2000:]
    replay_forecasts = Forecast.objects.filter(agent=agent, question__in=sample_replays)
    assert replay_forecasts.count() == sample_replays.count(), result.stdout[-2000:]
    assert "refused" not in result.stdout

    caplog.clear()
    out = _command("sample_world", "--advance", "--no-measure")
    assert "Advancing the fictional clock" in out and "current grades" in out
    assert not [r for r in caplog.records if r.levelno < logging.WARNING]  # progress lines only
    graded = Grade.objects.filter(forecast__in=live_forecasts, is_current=True, counts=True)
    assert graded.count() == live_forecasts.values("question").distinct().count()
    graded_now = int(re.search(r"(\d+) forecasts graded now", out).group(1))  # type: ignore[union-attr]
    assert graded_now >= graded.count()
    assert not sample_replays.filter(outcome_published_at=None).exists()
    replay = replay_forecasts.select_related("session").first()
    assert replay is not None and Grade.objects.filter(forecast=replay, is_current=True).exists()
    elapsed = time.monotonic() - started

    page.goto(f"/agents/{agent.slug}/")
    rows = page.locator("table.graded tbody tr")
    assert rows.count() >= graded.count()
    assert "—" not in rows.first.locator("td >> nth=4").inner_text()  # its own type's scores
    screenshot(page, "first-agent-02-agent-graded")
    # A replay forecast reads as made at its simulated date, not as received late.
    page.goto(f"/forecasts/{replay.pk}/")
    assert f"{replay.session.simulated_at:%Y-%m-%d}" in page.inner_text("main")
    assert "simulated date" in page.inner_text("main")
    again = _command("sample_world", "--advance", "--no-measure")
    assert "already at the world's end" in again
    print(f"first-agent path on a tiny world: {elapsed:.0f}s")
