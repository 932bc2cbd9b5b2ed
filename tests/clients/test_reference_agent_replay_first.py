"""examples/reference_agent.py offered unpublished replay questions and live questions in one run:
it forecasts the replay questions first, in order of their sessions' simulated dates, then the live
ones, so the gateway never refuses it (no 403) and its replay grades show no leak although it also
read later news; a replay question it cannot forecast has its session closed, so no session stays
open; a rerun submits nothing new, skips the closed session and meets no 403 either."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db.models import Exists, OuterRef

from ingestion.models import Question
from leaderboard.models import Agent, EvidenceAccess, Forecast, Grade, ReplaySession
from leaderboard.services.evidence import evidence_log_flush
from tests.clients.test_reference_agent import reference_agent
from tests.factories import T0, ArticleFactory
from tests.leaderboard.api_support import live_question, replay_question
from tests.leaderboard.grading_support import RefEvent, make_reference

pytestmark = pytest.mark.django_db(transaction=True)

POLICY = Question.SimulatedDatePolicy


def progress(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("[")]


def test_replay_questions_first_by_simulated_date_then_live(live_server: Any, agent: Agent, agent_key: str) -> None:
    # Simulated dates: early T0+25d, mid T0+50d, late T0+75d (window [T0, T0+100d)). Listed by
    # deadline, the late question comes first, so only the agent's own ordering keeps it last.
    late = replay_question(
        "binary", title="Will the reservoir dam be completed?", simulated_date_policy=POLICY.LATE,
        close_at=T0 + timedelta(days=80), origin=Question.Origin.SAMPLE,
    )  # fmt: skip
    unforecastable = replay_question(
        "timeframe", outcome="2026-Q2", title="When will the reservoir turbines run?", granularity="",
        simulated_date_policy=POLICY.MID, background="The plan is to start them in May 2026.",
        close_at=T0 + timedelta(days=85), origin=Question.Origin.SAMPLE,
    )  # fmt: skip
    early = replay_question(
        "binary", title="Will the reservoir works begin?", simulated_date_policy=POLICY.EARLY,
        close_at=T0 + timedelta(days=90), origin=Question.Origin.SAMPLE,
    )  # fmt: skip
    live = live_question("binary", title="Will the reservoir open to the public?", origin=Question.Origin.SAMPLE)
    before = ArticleFactory(title="Reservoir works approved", published_at=T0 + timedelta(days=10))
    between = ArticleFactory(title="Reservoir works begin upstream", published_at=T0 + timedelta(days=40))
    after = ArticleFactory(title="Reservoir dam completed", published_at=T0 + timedelta(days=95))
    for question in (early, late):
        make_reference(
            question, [RefEvent("e1", "Works", (T0 + timedelta(days=40)).date(), 0.9, 1.0, sources=[between])]
        )

    first = reference_agent(live_server.url, agent_key)
    assert first.returncode == 0, first.stderr
    lines = progress(first.stdout)
    order = [early, unforecastable, late, live]
    assert all(f"#{q.pk} " in line for q, line in zip(order, lines, strict=True)), first.stdout
    assert "created" in lines[0] and "created" in lines[2] and "created" in lines[3]
    # Staff left the timeframe question without a granularity, so it takes no forecast: refused, and
    # its session closed.
    assert "refused: 400" in lines[1] and "its replay session is closed" in lines[1]
    assert "403" not in first.stdout and "3 forecasts accepted" in first.stdout

    sessions = ReplaySession.objects.filter(agent=agent)
    assert sessions.count() == 3
    assert not sessions.filter(closed_at__isnull=True).exclude(Exists(Forecast.objects.filter(session=OuterRef("pk"))))
    assert sessions.get(question=unforecastable).closed_at is not None
    evidence_log_flush()
    # Later reports were served: through the late session, and as of now through the live question.
    assert EvidenceAccess.objects.filter(agent=agent, kind="read", article=between, question=late).exists()
    assert EvidenceAccess.objects.filter(agent=agent, kind="read", article=after, question=live).exists()

    again = reference_agent(live_server.url, agent_key)
    assert again.returncode == 0, again.stderr
    lines = progress(again.stdout)
    assert all(f"#{q.pk} " in line for q, line in zip(order, lines, strict=True)), again.stdout
    assert "skipped: its replay session was closed" in lines[1]
    assert all("unchanged" in lines[i] for i in (0, 2, 3)) and "403" not in again.stdout
    assert Forecast.objects.filter(agent=agent).count() == 3 and sessions.count() == 3

    for question in (early, late):
        call_command("publish_outcome", str(question.pk), stdout=StringIO())
    grades = Grade.objects.filter(forecast__agent=agent, is_current=True, counts=True, forecast__session__isnull=False)
    assert {g.forecast.question_id: g.leaks for g in grades} == {early.pk: 0, late.pk: 0}
    cited = Forecast.objects.get(question=early).sources
    assert before.pk in cited and between.pk not in cited
