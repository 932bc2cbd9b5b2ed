"""The whole-loop commands: demo (without serving afterwards), sample_world and run_baselines, on
both databases. demo runs here on PostgreSQL; on SQLite, its embedded default, it runs (and serves)
in tests/test_embedded_concurrency.py."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from ingestion.models import Article, Question
from leaderboard.baselines import BASELINE_TEAM
from leaderboard.models import Forecast, Grade, Standing
from tests.embedded_load import free_port
from tests.leaderboard.api_support import live_question, replay_question

pytestmark = pytest.mark.django_db(transaction=True)


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.slow
def test_demo_runs_the_loop_then_reuses_the_database(monkeypatch: Any) -> None:
    monkeypatch.setenv("HINDSIGHT_ADMIN_PASSWORD", "demo-test-password")
    out = run("demo", "--size", "tiny", "--no-serve", "--addrport", f"127.0.0.1:{free_port()}")
    assert "Loop finished" in out and "log in as user 'admin'" in out
    assert Forecast.objects.filter(agent__team__name=BASELINE_TEAM).exists()
    assert Grade.objects.filter(is_current=True).exists() and Standing.objects.exists()
    again = run("demo", "--no-serve")
    assert "already in this database" in again


@pytest.mark.dual_db
def test_sample_world_publishes_and_resumes() -> None:
    out = run("sample_world", "--size", "tiny", "--until", "present", "--no-measure")
    assert "Generating a tiny sample world" in out
    questions, articles = Question.objects.count(), Article.objects.count()
    assert questions and articles
    again = run("sample_world", "--until", "present", "--no-measure")
    assert "Resuming the tiny sample world" in again
    assert (Question.objects.count(), Article.objects.count()) == (questions, articles)


@pytest.mark.dual_db
def test_run_baselines_forecasts_over_http(live_server: Any) -> None:
    live_question("binary")
    replay_question("binary", outcome=True)
    out = run("run_baselines", "--base-url", live_server.url)
    assert "always-half: {201: 2}" in out
    created = Forecast.objects.filter(agent__team__name=BASELINE_TEAM).count()
    assert created >= 2
    again = run("run_baselines", "--base-url", live_server.url, "--only", "always-half")
    assert "always-half: {200: 2}" in again  # the same idempotency keys: nothing new
    assert Forecast.objects.filter(agent__team__name=BASELINE_TEAM).count() == created
