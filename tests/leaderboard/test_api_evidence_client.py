"""The README's example client (examples/gateway_client.py) runs end to end against a live server."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ingestion.models import Question, Resolution
from leaderboard.models import Agent, EvidenceAccess, Forecast
from leaderboard.services.evidence import evidence_log_flush
from tests.factories import ArticleFactory, QuestionFactory

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def test_example_client_opens_searches_reads_and_forecasts(live_server: Any, agent: Agent, agent_key: str) -> None:
    question = QuestionFactory(
        title="Will the harbour strike end",
        track=Question.Track.REPLAY,
        status=Question.Status.RESOLVED,
        open_at=T0,
        close_at=T0 + timedelta(days=40),
        resolve_by=T0 + timedelta(days=40),
    )
    Resolution.objects.create(
        question=question,
        version=1,
        kind=Resolution.Kind.RESOLVE,
        outcome={"value": True},
        resolved_at=T0 + timedelta(days=40),
        created_at=T0 + timedelta(days=40),
    )
    before = [ArticleFactory(title=f"Harbour strike day {i}", published_at=T0 - timedelta(days=i)) for i in (1, 2)]
    ArticleFactory(title="Harbour strike ends", published_at=T0 + timedelta(days=39))
    env = {**os.environ, "HINDSIGHT_URL": live_server.url, "HINDSIGHT_TOKEN": agent_key}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "gateway_client.py"), str(question.pk)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Harbour strike ends" not in done.stdout
    forecast = Forecast.objects.get(agent=agent, question=question)
    assert forecast.session is not None and forecast.prediction == {"probability": 0.6}
    evidence_log_flush()
    reads = set(EvidenceAccess.objects.filter(agent=agent, kind="read").values_list("article_id", flat=True))
    assert reads == {a.pk for a in before}
