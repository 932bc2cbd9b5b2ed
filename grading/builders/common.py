"""What every builder shares: the question's build context, results, errors and settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings

from grading.builders.draft import GraphDraft
from grading.quality import QualityReport, Thresholds
from ingestion.models import Question, Resolution


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
    granularity: str = ""

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
            granularity=question.granularity or "",
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
