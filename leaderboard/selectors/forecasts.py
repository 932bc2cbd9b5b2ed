"""Reads of forecasts: for the agent that made them, and which questions have any."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import django_filters
from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from ingestion.models import Question
from ingestion.selectors.questions import CHUNK
from leaderboard.models import Agent, Forecast, Grade


class ForecastFilter(django_filters.FilterSet):
    question = django_filters.NumberFilter(field_name="question_id")
    session = django_filters.UUIDFilter(field_name="session_id")
    track = django_filters.ChoiceFilter(field_name="question__track", choices=Question.Track.choices)

    class Meta:
        model = Forecast
        fields = ["question", "session", "track"]


def forecast_list_for_agent(*, agent: Agent, filters: Any = None) -> QuerySet[Forecast]:
    """The agent's own forecasts, newest first. ``filters``: question, session, track."""
    qs = Forecast.objects.filter(agent=agent).select_related("question").prefetch_related("cited_articles")
    filterset = ForecastFilter(filters or {}, queryset=qs)
    if not filterset.is_valid():
        raise ValidationError({k: [str(m) for m in v] for k, v in filterset.errors.items()})
    return filterset.qs.order_by("-received_at", "-id")


def forecast_current_grades(*, forecasts: Iterable[Forecast]) -> dict[int, Grade]:
    """forecast id -> current grade, only where the question's outcome may be shown.

    A grade says whether a forecast was right, so on an unpublished replay question it would leak
    the outcome: those forecasts get no grade until staff publish it.
    """
    ids = [f.pk for f in forecasts if f.question.is_revealed]
    if not ids:
        return {}
    return {g.forecast_id: g for g in Grade.objects.filter(forecast_id__in=ids, is_current=True)}


def questions_with_forecasts(question_ids: Iterable[int]) -> list[int]:
    """The given questions that have at least one forecast (the others have nothing to grade)."""
    ids = sorted(set(question_ids))
    found: set[int] = set()
    for start in range(0, len(ids), CHUNK):
        found.update(
            Forecast.objects.filter(question_id__in=ids[start : start + CHUNK])
            .values_list("question_id", flat=True)
            .distinct()
        )
    return sorted(found)
