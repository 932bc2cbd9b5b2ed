"""Reads for grading: the inputs key of a question, bulk loads of forecast data, the sweeper's finds.

The *inputs key* names everything a question's grades are computed from: grader version, the
current resolution version (and whether it resolves, annuls or withdraws), the current hindsight
reference with its review state, the matcher settings and, for open-ended questions, the judge.
A current grade whose ``inputs_key`` equals the question's key is up to date; a regrade skips it.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import orjson
from django.conf import settings
from django.contrib.postgres.expressions import ArraySubquery
from django.db import connection
from django.db.models import BigIntegerField, Count, Exists, F, Func, Max, OuterRef, Q, QuerySet, TextField
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import Cast

from grading.models import HindsightEvent, HindsightGraph
from grading.scoring import GRADER_VERSION
from grading.scoring.matching import MatcherSettings
from grading.scoring.semantic import semantic_matcher_settings
from grading.scoring.worldreasoner import worldreasoner_matcher_settings
from grading.selectors import Reference
from ingestion.models import Question, Resolution
from leaderboard.models import EvidenceAccess, Forecast, Grade, QuestionGradingState
from leaderboard.services.evidence import evidence_log_flush

RESOLVED_KINDS = (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND)
GRADE_STATUS_WITHHELD = "withheld until the outcome is published"


# ------------------------------------------------------------------------------------ settings


def matcher_settings() -> MatcherSettings:
    """The event matcher's parameters from settings (stored on every grade)."""
    if settings.HINDSIGHT_MATCHER == "semantic":
        return semantic_matcher_settings(
            threshold=settings.HINDSIGHT_SEMANTIC_MATCHER_THRESHOLD,
            date_window_days=settings.HINDSIGHT_MATCHER_DATE_WINDOW_DAYS,
            top_k=settings.HINDSIGHT_KEY_EVENTS_TOP_K,
        )
    if settings.HINDSIGHT_MATCHER == "worldreasoner":
        return worldreasoner_matcher_settings(
            threshold=settings.HINDSIGHT_MATCHER_THRESHOLD,
            date_window_days=settings.HINDSIGHT_MATCHER_DATE_WINDOW_DAYS,
            top_k=settings.HINDSIGHT_KEY_EVENTS_TOP_K,
        )
    return MatcherSettings(
        matcher=settings.HINDSIGHT_MATCHER,
        bm25_weight=settings.HINDSIGHT_MATCHER_BM25_WEIGHT,
        token_f1_weight=settings.HINDSIGHT_MATCHER_TOKEN_F1_WEIGHT,
        threshold=settings.HINDSIGHT_MATCHER_THRESHOLD,
        date_window_days=settings.HINDSIGHT_MATCHER_DATE_WINDOW_DAYS,
        top_k=settings.HINDSIGHT_KEY_EVENTS_TOP_K,
    )


def judge_label() -> str:
    """``llm`` when a model is configured, else ``lexical`` (the two are never mixed)."""
    return "llm" if settings.LLM_MODEL else "lexical"


def _digest(payload: Any, n: int = 12) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:n]


def matcher_digest(matcher: MatcherSettings) -> str:
    return _digest(matcher.as_dict(), 8)


# ------------------------------------------------------------------------------------ inputs key


def reference_key(
    *, graph_id: int, version: int, graph_built: bool, events: Iterable[tuple[int, bool, str, str, date]]
) -> str:
    """Key of a reference and its review state: events are (id, rejected, title, description, date).

    Reviews can reject an event or revise its title or date; all of these change the key.
    """
    rows = sorted((e[0], bool(e[1]), e[2], e[3], e[4].isoformat()) for e in events)
    return f"g{graph_id}.{version}.{int(graph_built)}.{_digest(rows, 10)}"


def reference_key_of(reference: Reference | None) -> str:
    if reference is None:
        return "g-"
    return reference_key(
        graph_id=reference.graph_id,
        version=reference.version,
        graph_built=reference.graph_built,
        events=((e.id, e.rejected, e.title, e.description, e.date) for e in reference.events),
    )


def inputs_key(
    *,
    question_type: str,
    resolution_version: int | None,
    resolution_kind: str | None,
    reference: str,
    matcher: str,
    judge: str,
) -> str:
    """The key current grades must carry (see the module docstring); ``""`` when there is nothing to grade."""
    if resolution_version is None:
        return ""
    if resolution_kind == Resolution.Kind.UNRESOLVE:
        return ""
    if resolution_kind == Resolution.Kind.ANNUL:
        return f"{GRADER_VERSION}|void|r{resolution_version}"
    judge_part = judge if question_type == Question.Type.OPEN_ENDED else "-"
    return f"{GRADER_VERSION}|r{resolution_version}|{reference}|m{matcher}|j{judge_part}"


# ------------------------------------------------------------------------------------ bulk loads


@dataclass(frozen=True, slots=True)
class ForecastHead:
    """What deciding which forecast counts needs."""

    id: int
    agent_id: int
    session_id: Any
    received_at: datetime


# Timestamps of bulk grading reads come as whole microseconds since the epoch: Django's timestamptz
# loader parses each value in Python (several microseconds apiece, seven per forecast), while
# adding a timedelta to the epoch gives the same aware UTC datetime in a fraction of that.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _on_postgresql() -> bool:
    return connection.vendor == "postgresql"


def _epoch_us(field: str) -> Func | F:
    """Microseconds since the epoch, computed by PostgreSQL (cheaper to read than datetimes); other
    databases return the datetime itself, which ``_utc`` accepts too."""
    if not _on_postgresql():
        return F(field)
    return Func(
        F(field),
        template="(EXTRACT(EPOCH FROM %(expressions)s) * 1000000)::bigint",
        output_field=BigIntegerField(),
    )


def _utc(value: int | datetime | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return _EPOCH + timedelta(microseconds=value)


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
            _epoch_us("received_at"),
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
        heads.append(ForecastHead(forecast_id, agent_id, session_id, _utc(received)))  # type: ignore[arg-type]
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
    """The forecasts' grading inputs, ordered by id, in one query (cited articles as arrays)."""
    through = Forecast.cited_articles.through
    columns: list[Any] = [
        "id",
        "agent_id",
        "session_id",
        _epoch_us("received_at"),
        _json_text("prediction"),
        _json_text("sources"),
        _json_text(KeyTransform("events", "graph")),
        _epoch_us("session__simulated_at"),
        "agent__knowledge_cutoff",
    ]
    forecasts = Forecast.objects.filter(pk__in=forecast_ids).order_by("id")
    rows: Iterable[tuple[Any, ...]]
    if _on_postgresql():
        cited = through.objects.filter(forecast_id=OuterRef("pk")).order_by("id")
        rows = forecasts.annotate(
            cited_ids=ArraySubquery(cited.values("article_id")),
            cited_published=ArraySubquery(cited.values(us=_epoch_us("article__published_at"))),
        ).values_list(*columns, "cited_ids", "cited_published")
    else:
        # Without array subqueries: the citations of the batch in a second query.
        by_forecast: dict[int, list[tuple[int, Any]]] = defaultdict(list)
        for forecast_id, article_id, published in (
            through.objects.filter(forecast_id__in=forecast_ids)
            .order_by("id")
            .values_list("forecast_id", "article_id", "article__published_at")
        ):
            by_forecast[forecast_id].append((article_id, published))
        rows = [
            (*row, [a for a, _ in by_forecast[row[0]]], [p for _, p in by_forecast[row[0]]])
            for row in forecasts.values_list(*columns)
        ]
    return [
        ForecastData(
            id=forecast_id,
            agent_id=agent_id,
            session_id=session_id,
            received_at=_utc(received_us),  # type: ignore[arg-type]
            prediction=_decode(prediction),
            sources=_decode(sources),
            graph_events=_decode(graph_events, strict=False),
            simulated_at=_utc(simulated_us),
            knowledge_cutoff=cutoff,
            cited=[(a, _utc(p)) for a, p in zip(cited_ids, cited_published, strict=True)],
        )
        for (
            forecast_id,
            agent_id,
            session_id,
            received_us,
            prediction,
            sources,
            graph_events,
            simulated_us,
            cutoff,
            cited_ids,
            cited_published,
        ) in rows
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


# ------------------------------------------------------------------------------------ sweeper


def _question_keys(question_ids: Sequence[int]) -> dict[int, str]:
    """The current inputs key of each question, computed in a few bulk queries."""
    if not question_ids:
        return {}
    types = dict(Question.objects.filter(pk__in=question_ids).values_list("id", "type"))
    latest: dict[int, tuple[int, str]] = {}
    for qid, res_version, res_kind in Resolution.objects.filter(question_id__in=question_ids).values_list(
        "question_id", "version", "kind"
    ):
        if qid not in latest or res_version > latest[qid][0]:
            latest[qid] = (res_version, res_kind)
    graphs = {
        row[1]: row
        for row in HindsightGraph.objects.filter(question_id__in=question_ids, is_current=True).values_list(
            "id", "question_id", "version", "graph_built"
        )
    }
    events: dict[int, list[tuple[int, bool, str, str, date]]] = defaultdict(list)
    for graph_id, event_id, status, title, description, day in HindsightEvent.objects.filter(
        graph_id__in=[g[0] for g in graphs.values()]
    ).values_list("graph_id", "id", "review_status", "title", "description", "occurred_on"):
        events[graph_id].append((event_id, status == HindsightEvent.ReviewStatus.REJECTED, title, description, day))
    matcher = matcher_digest(matcher_settings())
    judge = judge_label()
    keys: dict[int, str] = {}
    for qid in question_ids:
        version: int | None = None
        kind: str | None = None
        if qid in latest:
            version, kind = latest[qid]
        graph = graphs.get(qid)
        ref = (
            reference_key(graph_id=graph[0], version=graph[2], graph_built=graph[3], events=events.get(graph[0], []))
            if graph
            else "g-"
        )
        keys[qid] = inputs_key(
            question_type=types.get(qid, ""),
            resolution_version=version,
            resolution_kind=kind,
            reference=ref,
            matcher=matcher,
            judge=judge,
        )
    return keys


def questions_needing_grading(*, limit: int = 500) -> list[int]:
    """Questions whose grades are missing or stale, oldest id first (what the sweeper re-drives).

    - resolved/annulled questions with a forecast that has no current grade;
    - resolved/annulled questions whose last completed run used another inputs key than now;
    - questions no longer resolved (un-resolved) that still have current grades.
    """
    graded_statuses = (Question.Status.RESOLVED, Question.Status.ANNULLED)
    ungraded = Forecast.objects.filter(question=OuterRef("pk")).exclude(
        Exists(Grade.objects.filter(forecast=OuterRef("pk"), is_current=True))
    )
    missing = list(
        Question.objects.filter(status__in=graded_statuses)
        .filter(Exists(ungraded))
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    withdrawn = list(
        Question.objects.exclude(status__in=graded_statuses)
        .filter(Exists(Grade.objects.filter(forecast__question=OuterRef("pk"), is_current=True)))
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    # Questions with forecasts whose state does not match the key computed now.
    with_forecasts = list(
        Question.objects.filter(status__in=graded_statuses)
        .filter(Exists(Forecast.objects.filter(question=OuterRef("pk"))))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    stale: list[int] = []
    states = dict(
        QuestionGradingState.objects.filter(question_id__in=with_forecasts).values_list("question_id", "inputs_key")
    )
    for start in range(0, len(with_forecasts), 1000):
        chunk = with_forecasts[start : start + 1000]
        for qid, key in _question_keys(chunk).items():
            if states.get(qid) != key:
                stale.append(qid)
        if len(stale) >= limit:
            break
    return sorted(set(missing) | set(withdrawn) | set(stale))[:limit]


# ------------------------------------------------------------------------------------ API reads


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


__all__ = [
    "GRADE_STATUS_WITHHELD",
    "ForecastData",
    "ForecastHead",
    "grade_history",
    "grade_status",
    "grades_for_forecasts",
    "inputs_key",
    "judge_label",
    "matcher_settings",
    "question_grades",
    "questions_needing_grading",
    "reference_key",
    "reference_key_of",
]
