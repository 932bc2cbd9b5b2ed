"""Helpers for the grading tests: questions, forecasts, constructed hindsight references."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.utils import timezone

from grading.models import HindsightEvent, HindsightGraph, OutcomeImpact
from ingestion.models import Article, Question
from ingestion.services.questions import question_resolve
from leaderboard.models import Agent, Forecast, Grade, ReplaySession
from tests.factories import T0, ArticleFactory, QuestionFactory
from tests.leaderboard.api_support import TYPE_FIELDS

CLOSE = T0 + timedelta(days=60)
RESOLVED_AT = T0 + timedelta(days=70)


def make_question(qtype: str = "binary", **kwargs: Any) -> Question:
    fields = {"open_at": T0, "close_at": CLOSE, "resolve_by": RESOLVED_AT, **TYPE_FIELDS[qtype], **kwargs}
    return QuestionFactory(type=qtype, **fields)


def resolve(question: Question, outcome: Any, *, at: datetime = RESOLVED_AT) -> None:
    question.refresh_from_db()
    question_resolve(question=question, outcome=outcome, resolved_at=at, author_label="test", now=at)


def add_forecast(
    agent: Agent,
    question: Question,
    prediction: dict[str, Any],
    *,
    received_at: datetime | None = None,
    session: ReplaySession | None = None,
    cited: Sequence[Article] = (),
    sources: list[Any] | None = None,
    graph: dict[str, Any] | None = None,
) -> Forecast:
    forecast = Forecast.objects.create(
        agent=agent,
        question=question,
        session=session,
        received_at=received_at or T0 + timedelta(days=5),
        prediction=prediction,
        sources=sources if sources is not None else [a.pk for a in cited],
        graph=graph,
    )
    if cited:
        forecast.cited_articles.set(cited)
    return forecast


def current(forecast: Forecast) -> Grade:
    return Grade.objects.get(forecast=forecast, is_current=True)


@dataclass
class RefEvent:
    key: str
    title: str
    day: date
    magnitude: float | None = None
    confidence: float | None = None
    description: str = ""
    sources: list[Article] = field(default_factory=list)
    is_outcome: bool = False


def make_reference(
    question: Question, events: Sequence[RefEvent], *, graph_built: bool = True, version: int | None = None
) -> HindsightGraph:
    """A current hindsight graph built directly (not by a builder), replacing the current one."""
    HindsightGraph.objects.filter(question=question, is_current=True).update(is_current=False)
    if version is None:
        version = HindsightGraph.objects.filter(question=question).count() + 1
    graph = HindsightGraph.objects.create(
        question=question,
        version=version,
        is_current=True,
        builder=HindsightGraph.Builder.OFFLINE,
        builder_version="test",
        graph_built=graph_built,
        created_at=timezone.now(),
    )
    for e in events:
        row = HindsightEvent.objects.create(
            graph=graph,
            key=e.key,
            title=e.title,
            description=e.description,
            occurred_on=e.day,
            event_type=HindsightEvent.EventType.OUTCOME if e.is_outcome else HindsightEvent.EventType.DECISION,
            is_outcome=e.is_outcome,
        )
        row.sources.set(e.sources)
        if e.magnitude is not None:
            OutcomeImpact.objects.create(
                event=row,
                direction=OutcomeImpact.Direction.POSITIVE,
                magnitude=e.magnitude,
                confidence=e.confidence if e.confidence is not None else 1.0,
            )
    return graph


def articles(n: int, *, start: datetime = T0 + timedelta(days=1)) -> list[Article]:
    return [ArticleFactory(published_at=start + timedelta(days=i)) for i in range(n)]


def day(n: int) -> date:
    return (T0 + timedelta(days=n)).date()


def utc(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)
