"""What a grading run reads, in bulk for all its questions: forecast heads and current grades,
forecast data, current resolutions and the evidence gateway's reads."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import orjson
from django.db.models import Count, Max, Q, TextField
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import Cast

from ingestion.models import Resolution
from leaderboard.models import EvidenceAccess, Forecast
from leaderboard.services.evidence import evidence_log_flush

# ------------------------------------------------------------------------------------ bulk loads


@dataclass(frozen=True, slots=True)
class ForecastHead:
    """What deciding which forecast counts needs."""

    id: int
    agent_id: int
    session_id: Any
    received_at: datetime


def _json_text(field: str | KeyTransform) -> Cast:
    """A JSON value as its text, decoded by ``_decode`` (orjson) instead of the field's json.loads:
    the forecast graphs are most of the bytes a grading run reads."""
    return Cast(field, output_field=TextField())


def _decode(text: str | None, *, strict: bool = True) -> Any:
    """``text`` decoded; not ``strict``: None when it is not JSON (SQLite gives a JSON string
    value inside a document as the bare string)."""
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # orjson is stricter than the json module on a few inputs
        try:
            return json.loads(text)
        except ValueError:
            if strict:
                raise
            return None


@dataclass(frozen=True, slots=True)
class CurrentGrade:
    forecast_id: int
    inputs_key: str
    counts: bool


HeadsAndGrades = tuple[list[ForecastHead], dict[int, CurrentGrade], dict[int, int]]


def forecast_heads_and_grades_of(question_ids: Sequence[int]) -> dict[int, HeadsAndGrades]:
    """question id -> (its forecasts' heads ordered by received_at and id, forecast id -> current
    grade, forecast id -> latest grade version), for several questions in one grouped query
    (questions without forecasts are absent)."""
    current_grade = Q(grades__is_current=True)
    rows = (
        Forecast.objects.filter(question_id__in=question_ids)
        .annotate(
            latest_version=Max("grades__version"),
            n_current=Count("grades", filter=current_grade),
            current_key=Max("grades__inputs_key", filter=current_grade),
            n_counting=Count("grades", filter=current_grade & Q(grades__counts=True)),
        )
        .order_by("received_at", "id")
        .values_list(
            "question_id",
            "id",
            "agent_id",
            "session_id",
            "received_at",
            "latest_version",
            "n_current",
            "current_key",
            "n_counting",
        )
    )
    found: dict[int, HeadsAndGrades] = {}
    for question_id, forecast_id, agent_id, session_id, received, version, n_current, key, n_counting in rows:
        if question_id not in found:
            found[question_id] = ([], {}, {})
        heads, current, versions = found[question_id]
        heads.append(ForecastHead(forecast_id, agent_id, session_id, received))
        if version is not None:
            versions[forecast_id] = version
        if n_current:
            current[forecast_id] = CurrentGrade(forecast_id, key, n_counting > 0)
    return found


def current_resolutions(question_ids: Sequence[int]) -> dict[int, Resolution]:
    """question id -> its current (latest) resolution version, for questions that have one."""
    latest: dict[int, Resolution] = {}
    for resolution in Resolution.objects.filter(question_id__in=question_ids).order_by("question_id", "version"):
        latest[resolution.question_id] = resolution
    return latest


@dataclass(slots=True)
class ForecastData:
    """Everything grading one forecast needs, loaded in bulk for a batch."""

    id: int
    agent_id: int
    session_id: Any
    received_at: datetime
    prediction: Any
    sources: list[Any]
    graph_events: Any  # the forecast graph's "events" value (edges are not graded)
    simulated_at: datetime | None
    knowledge_cutoff: date | None
    cited: list[tuple[int, datetime | None]]


def forecast_data(forecast_ids: Sequence[int]) -> list[ForecastData]:
    """The forecasts' grading inputs, ordered by id, in two queries (the forecasts, their citations)."""
    through = Forecast.cited_articles.through
    columns: list[Any] = [
        "id",
        "agent_id",
        "session_id",
        "received_at",
        _json_text("prediction"),
        _json_text("sources"),
        _json_text(KeyTransform("events", "graph")),
        "session__simulated_at",
        "agent__knowledge_cutoff",
    ]
    forecasts = Forecast.objects.filter(pk__in=forecast_ids).order_by("id")
    cited: dict[int, list[tuple[int, datetime | None]]] = defaultdict(list)
    for forecast_id, article_id, published in (
        through.objects.filter(forecast_id__in=forecast_ids)
        .order_by("id")
        .values_list("forecast_id", "article_id", "article__published_at")
    ):
        cited[forecast_id].append((article_id, published))
    return [
        ForecastData(
            id=forecast_id,
            agent_id=agent_id,
            session_id=session_id,
            received_at=received_at,
            prediction=_decode(prediction),
            sources=_decode(sources),
            graph_events=_decode(graph_events, strict=False),
            simulated_at=simulated_at,
            knowledge_cutoff=cutoff,
            cited=cited[forecast_id],
        )
        for (
            forecast_id,
            agent_id,
            session_id,
            received_at,
            prediction,
            sources,
            graph_events,
            simulated_at,
            cutoff,
        ) in forecasts.values_list(*columns)
    ]


@dataclass(frozen=True, slots=True)
class Read:
    agent_id: int
    session_id: Any
    article_ids: tuple[int, ...]
    at: datetime


def gateway_reads_for_questions(question_ids: Sequence[int]) -> dict[int, dict[int, list[Read]]]:
    """question id -> agent id -> article reads made through the gateway for that question (oldest
    first), for several questions in one query.

    Same reading of the log as ``leaderboard.selectors.evidence.articles_read_for`` (a read whose
    article row was deleted still counts by its logged id).
    """
    if not question_ids:
        return {}
    evidence_log_flush()
    reads: dict[int, dict[int, list[Read]]] = {}
    rows = (
        EvidenceAccess.objects.filter(question_id__in=question_ids, kind=EvidenceAccess.Kind.READ)
        .order_by("created_at", "id")
        .values_list("question_id", "agent_id", "session_id", "article_id", "item_ids", "created_at")
    )
    for question_id, agent_id, session_id, article_id, item_ids, created_at in rows:
        ids = (article_id,) if article_id is not None else tuple(int(i) for i in item_ids or ())
        reads.setdefault(question_id, defaultdict(list))[agent_id].append(Read(agent_id, session_id, ids, created_at))
    return reads
