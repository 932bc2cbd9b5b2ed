"""examples/reference_agent.py, run as a newcomer runs it: by default it forecasts the questions that
have an evidence corpus (the sample world's first, replay before live) and not an imported set nor
any whose outcome is public, shows a line per question, submits nothing twice on a rerun, and --wait shows the first grades."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from ingestion.models import Question
from ingestion.services.questions import question_resolve
from leaderboard.models import Agent, EvidenceAccess, Forecast
from leaderboard.services.evidence import evidence_log_flush
from tests.factories import ArticleFactory
from tests.leaderboard.api_support import live_question, replay_question

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]


def reference_agent(url: str, key: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "reference_agent.py"), "--base-url", url, "--token", key, *args],
        env={**os.environ, "OPENAI_API_KEY": ""},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_default_scope_progress_and_rerun(live_server: Any, agent: Agent, agent_key: str) -> None:
    live_sample = live_question("binary", title="Will the canal reopen?", origin=Question.Origin.SAMPLE)
    replay_sample = replay_question("binary", title="Will the canal toll rise?", origin=Question.Origin.SAMPLE)
    staff_made = live_question("binary", title="Will the bridge open?", origin=Question.Origin.ADMIN)
    imported = [live_question("binary", origin=Question.Origin.IMPORTED) for _ in range(3)]
    # Its outcome is public: nothing is left to forecast.
    published = replay_question("binary", origin=Question.Origin.SAMPLE, outcome_published_at=timezone.now())
    ArticleFactory(title="Canal reopening approved", published_at=replay_sample.open_at - timedelta(days=2))

    first = reference_agent(live_server.url, agent_key, "--limit", "3")
    assert first.returncode == 0, first.stderr
    lines = [line for line in first.stdout.splitlines() if line.startswith("[")]
    assert [line[:8] for line in lines] == ["[  1/3] ", "[  2/3] ", "[  3/3] "]
    # The sample world's replay question, then its live one, then the rest of the corpus.
    assert all(f"#{q.pk} " in line for q, line in zip([replay_sample, live_sample, staff_made], lines, strict=True))
    assert all("created" in line for line in lines) and "3 forecasts accepted" in first.stdout
    assert not Forecast.objects.filter(question__in=[*imported, published]).exists()
    replayed = Forecast.objects.get(question=replay_sample)
    assert replayed.session is not None and replayed.sources
    evidence_log_flush()
    assert EvidenceAccess.objects.filter(agent=agent, kind="read", question=replay_sample).exists()

    again = reference_agent(live_server.url, agent_key, "--limit", "3")
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("unchanged") == 3 and Forecast.objects.filter(agent=agent).count() == 3

    with_imported = reference_agent(live_server.url, agent_key, "--include-imported", "--limit", "0")
    assert with_imported.returncode == 0, with_imported.stderr
    assert Forecast.objects.filter(question__in=imported).count() == 3


def test_wait_shows_the_first_grades(live_server: Any, agent_key: str, settings: Any) -> None:
    settings.LLM_MODEL = ""
    question = live_question("binary", title="Will the ferry sail?", origin=Question.Origin.SAMPLE)
    assert reference_agent(live_server.url, agent_key, "--track", "live").returncode == 0
    question.close_at = timezone.now()
    question.status = Question.Status.CLOSED
    question.save(update_fields=["close_at", "status"])
    question_resolve(question=question, outcome=True, author_label="test")

    waited = reference_agent(live_server.url, agent_key, "--track", "live", "--wait", "1")
    assert waited.returncode == 0, waited.stderr
    graded = next(line for line in waited.stdout.splitlines() if f"on question {question.pk}:" in line)
    assert "correct " in graded and "Brier " in graded and "log score " in graded
