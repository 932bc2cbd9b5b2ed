"""A small graded world for the standings and public-page tests (grades written directly)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from ingestion.models import Market, PricePoint, Question, Resolution
from leaderboard.models import Agent, Forecast, Grade
from tests.factories import AgentFactory, QuestionFactory, TeamFactory

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class World:
    agents: list[Agent]
    live: list[Question]
    replay_hidden: Question
    open_question: Question


def grade(
    agent: Agent,
    question: Question,
    p: float,
    *,
    outcome: bool,
    contaminated: bool = False,
    market_p: float | None = None,
    at: datetime | None = None,
    leaks: int | None = None,
) -> Grade:
    forecast = Forecast.objects.create(
        agent=agent,
        question=question,
        received_at=at or question.open_at + timedelta(days=1),
        prediction={"probability": p},
    )
    y = 1.0 if outcome else 0.0
    p_y = p if outcome else 1 - p
    log = math.log(min(max(p_y, 1e-6), 1 - 1e-6))
    edge = None
    if market_p is not None:
        m_y = market_p if outcome else 1 - market_p
        edge = log - math.log(m_y)
    return Grade.objects.create(
        forecast=forecast,
        version=1,
        grader_version="1.0",
        resolution_version=1,
        contaminated=contaminated,
        cutoff_declared=agent.knowledge_cutoff is not None,
        correct=(p >= 0.5) == outcome,
        brier=(p - y) ** 2,
        log_score=log,
        market_edge=edge,
        source_precision=0.5,
        key_event_recall=0.4,
        leaks=leaks,
        created_at=question.close_at,
    )


def resolve(question: Question, outcome: bool, at: datetime) -> None:
    Resolution.objects.create(
        question=question, version=1, kind=Resolution.Kind.RESOLVE, outcome=outcome, resolved_at=at, created_at=at
    )
    question.status = Question.Status.RESOLVED
    question.save(update_fields=["status"])


def build_world(n_questions: int = 6) -> World:
    team = TeamFactory(name="Falcons", slug="falcons")
    good = AgentFactory(team=team, name="Sharp Falcon", slug="sharp-falcon", knowledge_cutoff=date(2025, 1, 1))
    bad = AgentFactory(team=team, name="Dull Falcon", slug="dull-falcon", knowledge_cutoff=date(2025, 1, 1))
    nocut = AgentFactory(team=team, name="Vague Falcon", slug="vague-falcon", knowledge_cutoff=None)
    market = Market.objects.create(platform=Market.Platform.SAMPLE, external_id="m1", title="m")
    live: list[Question] = []
    for i in range(n_questions):
        q = QuestionFactory(
            title=f"Will live event {i} happen?",
            open_at=T0 + timedelta(days=i),
            close_at=T0 + timedelta(days=i + 10),
            domain="politics" if i % 2 else "economy",
            market=market if i == 0 else None,
        )
        outcome = i % 3 != 0
        resolve(q, outcome, T0 + timedelta(days=i + 20))
        grade(good, q, 0.9 if outcome else 0.1, outcome=outcome, market_p=0.7 if i == 0 else None)
        grade(bad, q, 0.4, outcome=outcome)
        grade(nocut, q, 0.6, outcome=outcome)
        live.append(q)
    PricePoint.objects.create(market=market, outcome="Yes", time=T0, probability=0.6)
    PricePoint.objects.create(market=market, outcome="Yes", time=T0 + timedelta(days=2), probability=0.7)
    hidden = QuestionFactory(
        title="Replay question with a secret outcome",
        track=Question.Track.REPLAY,
        open_at=T0 - timedelta(days=60),
        close_at=T0 - timedelta(days=30),
    )
    Resolution.objects.create(
        question=hidden,
        version=1,
        kind=Resolution.Kind.RESOLVE,
        outcome=True,
        resolved_at=T0 - timedelta(days=29),
        note="SECRET-NOTE",
        created_at=T0,
    )
    hidden.status = Question.Status.RESOLVED
    hidden.save(update_fields=["status"])
    grade(good, hidden, 0.77, outcome=True)
    open_q = QuestionFactory(title="Will the open thing happen?", status=Question.Status.OPEN)
    return World(agents=[good, bad, nocut], live=live, replay_hidden=hidden, open_question=open_q)
