"""What every builder shares: the question's build context, results, errors and settings."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings

from grading.builders.draft import GraphDraft
from grading.quality import QualityReport, Thresholds
from ingestion.models import Question, Resolution

_TOKEN = re.compile(r"[^\W_]+")


def words_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = words_set(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers him his how i if in into is it its itself just me more most my now of off on
    once only or other our ours out over own same she should so some such than that the their theirs them
    then there these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours s t"""
)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens without stop words (negations such as 'not' and 'no' are kept)."""
    return [t for t in _TOKEN.findall(text.lower().replace("'", "")) if t not in STOPWORDS]


def thresholds_from_settings() -> Thresholds:
    return Thresholds(
        min_depth=settings.HINDSIGHT_GRAPH_MIN_DEPTH,
        min_events=settings.HINDSIGHT_GRAPH_MIN_EVENTS,
        min_sources=settings.HINDSIGHT_GRAPH_MIN_SOURCES,
        min_links=settings.HINDSIGHT_GRAPH_MIN_LINKS,
        min_link_confidence=settings.HINDSIGHT_GRAPH_MIN_LINK_CONFIDENCE,
        min_link_strength=settings.HINDSIGHT_GRAPH_MIN_LINK_STRENGTH,
    )


def outcome_text(question: Question, outcome: Any) -> str:
    """The resolved outcome as a reader would say it."""
    if question.type == Question.Type.BINARY:
        return "Yes" if outcome else "No"
    if question.type == Question.Type.QUANTITY:
        return f"{outcome:g} {question.unit}".strip() if isinstance(outcome, int | float) else str(outcome)
    if question.type == Question.Type.RELATION and isinstance(outcome, dict):
        relations = outcome.get("relations", {})
        return "CAMEO " + ", ".join(code for codes in relations.values() for code in codes) or "no relation"
    if isinstance(outcome, list):
        return "; ".join(str(item) for item in outcome)
    return str(outcome)


@dataclass(frozen=True)
class BuildContext:
    question_id: int
    title: str
    question_type: str
    options: list[str]
    resolution_criteria: str
    background: str
    outcome: Any
    outcome_text: str
    t0: datetime
    t_res: datetime
    resolution_version: int
    earliest: date
    latest: date

    @classmethod
    def for_question(cls, question: Question, resolution: Resolution) -> BuildContext:
        t_res = resolution.resolved_at or resolution.created_at
        return cls(
            question_id=question.pk,
            title=question.title,
            question_type=question.type,
            options=list(question.options or []),
            resolution_criteria=question.resolution_criteria,
            background=question.background,
            outcome=resolution.outcome,
            outcome_text=outcome_text(question, resolution.outcome),
            t0=question.open_at,
            t_res=t_res,
            resolution_version=resolution.version,
            earliest=(question.open_at - timedelta(days=settings.HINDSIGHT_GRAPH_LOOKBACK_DAYS)).date(),
            latest=t_res.date(),
        )


@dataclass
class BuildResult:
    draft: GraphDraft
    quality: QualityReport
    builder: str
    builder_version: str
    model_name: str = ""
    prompts: list[dict[str, Any]] = field(default_factory=list)
    token_usage: dict[str, int] = field(default_factory=dict)
    log: list[dict[str, Any]] = field(default_factory=list)


class BuildError(Exception):
    """A build that produced no graph; ``reason`` is a GraphBuildAttempt.Reason value."""

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        log: list[dict[str, Any]] | None = None,
        prompts: list[dict[str, Any]] | None = None,
        token_usage: dict[str, int] | None = None,
        model_name: str = "",
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.log = log or []
        self.prompts = prompts or []
        self.token_usage = token_usage or {}
        self.model_name = model_name
