"""Reads of grades as the pages and the API show them."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from ingestion.models import Question
from leaderboard.models import Forecast, Grade, QuestionGradingState

GRADE_STATUS_WITHHELD = "withheld until the outcome is published"


def grades_for_forecasts(*, forecast_ids: Iterable[int]) -> dict[int, Grade]:
    """forecast id -> current grade."""
    return {g.forecast_id: g for g in Grade.objects.filter(forecast_id__in=list(forecast_ids), is_current=True)}


def grade_status(*, forecast: Forecast, grade: Grade | None) -> str:
    """One word (or phrase) telling an agent where the grading of its forecast stands.

    ``withheld until the outcome is published`` for replay questions whose outcome staff have not
    published (a grade would reveal the outcome), ``void`` for annulled questions, ``graded``,
    ``pending`` (resolved, grading queued) or ``unresolved``.
    """
    question = forecast.question
    resolved = question.status in (Question.Status.RESOLVED, Question.Status.ANNULLED)
    if resolved and not question.is_revealed:
        return GRADE_STATUS_WITHHELD
    if grade is not None:
        return "void" if grade.void else "graded"
    return "pending" if resolved else "unresolved"


def grade_history(*, forecast_id: int) -> QuerySet[Grade]:
    """Every grade version of a forecast, newest first."""
    return Grade.objects.filter(forecast_id=forecast_id).order_by("-version")


def question_grades(*, question_id: int, current: bool = True) -> QuerySet[Grade]:
    qs = Grade.objects.filter(forecast__question_id=question_id)
    return qs.filter(is_current=True) if current else qs


def grading_state(question_id: int) -> QuestionGradingState | None:
    return QuestionGradingState.objects.filter(question_id=question_id).first()
