"""Replay sessions: an agent's session on a replay question places it at a simulated date
(t_sim) inside the question's window, where its evidence calls are answered and its forecasts
made; a question takes sessions and forecasts only while it is offered on the replay track."""

from __future__ import annotations

import uuid
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from ingestion.models import Question
from ingestion.services.questions import SIMULATED_DATE_FRACTIONS, default_window_end
from leaderboard.models import Agent, ReplaySession
from leaderboard.selectors.questions import replay_not_offered
from leaderboard.services.errors import ForecastConflict, NotFound


def refuse_unless_offered(question: Question, *, what: str) -> None:
    """ForecastConflict (409) naming why a replay question does not take ``what``."""
    problem = replay_not_offered(question, what=what)
    if problem:
        raise ForecastConflict(problem, field="question")


def replay_simulated_at(*, question: Question) -> datetime:
    """t_sim for a new session: the policy's fraction of the window [open_at, t_res)."""
    end = default_window_end(question)
    if end <= question.open_at:
        raise ForecastConflict(
            f"replay question {question.pk} has an empty forecast window (t0 {question.open_at.isoformat()} "
            f"is not before its resolution time {end.isoformat()})",
            field="question",
        )
    fraction = SIMULATED_DATE_FRACTIONS.get(question.simulated_date_policy, 0.5)  # type: ignore[call-overload]
    return question.open_at + (end - question.open_at) * fraction


@transaction.atomic
def replay_session_open(*, agent: Agent, question_id: int, now: datetime | None = None) -> tuple[ReplaySession, bool]:
    """The agent's replay session on the question, created on first request and never changed."""
    now = now or timezone.now()
    question = Question.objects.filter(pk=question_id).first()
    if question is None:
        raise NotFound(f"question {question_id} does not exist", field="question")
    if question.track != Question.Track.REPLAY:
        raise ForecastConflict(
            f"question {question.pk} is on the live track; forecast it directly, without a replay session",
            field="question",
        )
    existing = ReplaySession.objects.filter(agent=agent, question=question).first()
    if existing is not None:
        return existing, False
    refuse_unless_offered(question, what="replay sessions")
    simulated_at = replay_simulated_at(question=question)
    try:
        with transaction.atomic():
            session = ReplaySession.objects.create(
                agent=agent, question=question, simulated_at=simulated_at, created_at=now
            )
    except IntegrityError:
        # A concurrent request created it first; the unique constraint keeps one per agent and question.
        return ReplaySession.objects.get(agent=agent, question=question), False
    return session, True


@transaction.atomic
def replay_session_close(*, agent: Agent, session_id: uuid.UUID | str, now: datetime | None = None) -> ReplaySession:
    """Close the agent's own replay session (idempotent): it takes no more forecasts, the ones made
    stand, and the agent is no longer working on that question for the evidence gateway."""
    now = now or timezone.now()
    session = ReplaySession.objects.select_for_update().filter(pk=session_id, agent=agent).first()
    if session is None:
        raise NotFound(f"replay session {session_id} not found for this agent", field="session")
    if session.closed_at is None:
        session.closed_at = now
        session.save(update_fields=["closed_at"])
    return session
