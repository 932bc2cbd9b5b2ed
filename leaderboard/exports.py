"""Open-data exports: questions, resolutions, forecasts, grades and question difficulties, with documented columns.

Only what the public pages already show is exported: no draft question; resolutions of live
questions and of replay questions whose outcome staff published (never a replay outcome before
then); forecasts once their question closed (replay: once published); current grades on revealed
questions. A forecast's rationale, cited sources and graph, and who submitted it, are never
exported (its graph is shown on /forecasts/<id>/graph/ once the question's outcome is public and it
has a hindsight graph). Each dataset is a CSV file and a JSON document whose header names the licence and describes
every column, the way ForecastBench publishes its question and resolution sets.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from operator import attrgetter
from typing import Any

from django.db.models import QuerySet

from grading.scoring.definitions import GRADE_SCORES
from ingestion.models import Question, Resolution
from ingestion.outcomes import prediction_text
from leaderboard.models import Forecast, Grade, QuestionDifficulty
from leaderboard.selectors.questions import public_history_q, revealed_q

PUBLIC_HISTORY = public_history_q("question__")
REVEALED_FORECAST = revealed_q("forecast__question__")


@dataclass(frozen=True)
class Column:
    name: str
    description: str
    value: Callable[[Any], Any]


@dataclass(frozen=True)
class Dataset:
    name: str
    title: str
    description: str
    columns: tuple[Column, ...]
    rows: Callable[[], QuerySet[Any]]

    def records(self) -> Iterator[dict[str, Any]]:
        for obj in self.rows().iterator(chunk_size=2000):
            yield {c.name: c.value(obj) for c in self.columns}


def _iso(value: datetime | date | None) -> str | None:
    return value.isoformat() if value is not None else None


def _questions() -> QuerySet[Question]:
    return Question.objects.exclude(status=Question.Status.DRAFT).order_by("id")


def _resolutions() -> QuerySet[Resolution]:
    return (
        Resolution.objects.filter(PUBLIC_HISTORY)
        .exclude(question__status=Question.Status.DRAFT)
        .select_related("question")
        .order_by("question_id", "version")
    )


def _forecasts() -> QuerySet[Forecast]:
    return (
        Forecast.objects.exclude(question__status__in=[Question.Status.DRAFT, Question.Status.OPEN])
        .filter(PUBLIC_HISTORY)
        .select_related("agent", "agent__team", "question")
        .order_by("id")
    )


def _grades() -> QuerySet[Grade]:
    return (
        Grade.objects.filter(REVEALED_FORECAST, is_current=True)
        .select_related("forecast", "forecast__agent")
        .order_by("forecast_id")
    )


def _resolution_text(r: Resolution) -> str:
    return r.outcome_display


QUESTION_COLUMNS = (
    Column("id", "Hindsight question id (stable; the page is /questions/<id>/).", lambda q: q.pk),
    Column("external_id", "Id at the source it was imported from, if any.", lambda q: q.external_id or ""),
    Column("title", "The question as asked.", lambda q: q.title),
    Column("type", "binary, multiple_choice, quantity, timeframe, relation or open_ended.", lambda q: q.type),
    Column(
        "track", "live (forecast before it resolves) or replay (already resolved, simulated date).", lambda q: q.track
    ),
    Column(
        "status",
        "open, closed, resolved or annulled (a replay question reads resolved until its outcome is published).",
        lambda q: q.public_status,
    ),
    Column("origin", "market, news, imported, admin or sample (fictional sample world).", lambda q: q.origin),
    Column("domain", "Topic label.", lambda q: q.domain),
    Column("options", "Multiple choice: the options (JSON list).", lambda q: q.options or []),
    Column("unit", "Quantity: the unit of the answer.", lambda q: q.unit),
    Column("lower_bound", "Quantity: smallest plausible value, if set.", lambda q: q.lower_bound),
    Column("upper_bound", "Quantity: largest plausible value, if set.", lambda q: q.upper_bound),
    Column("granularity", "Timeframe: day, week, month, quarter or year.", lambda q: q.granularity),
    Column("subject", "Relation: ISO 3166-1 alpha-3 code of the actor.", lambda q: q.subject),
    Column("object", "Relation: ISO 3166-1 alpha-3 code of the recipient.", lambda q: q.object),
    Column("target_date", "Relation: the day the relation is asked about.", lambda q: _iso(q.target_date)),
    Column("open_at", "t0: the earliest moment a forecast may be made (UTC).", lambda q: _iso(q.open_at)),
    Column("close_at", "Forecast deadline (UTC).", lambda q: _iso(q.close_at)),
    Column("resolve_by", "When the outcome is expected to be known (UTC).", lambda q: _iso(q.resolve_by)),
    Column("resolution_criteria", "How the outcome is decided.", lambda q: q.resolution_criteria),
    Column("background", "Background given to forecasters.", lambda q: q.background),
    Column("provenance_url", "Where the question came from (market page, article).", lambda q: q.provenance_url),
    Column(
        "source_licence",
        "Licence of an imported question as its source states it (e.g. CC BY-SA 4.0 for ForecastBench).",
        lambda q: (q.attribution or {}).get("licence", "") if isinstance(q.attribution, dict) else "",
    ),
)

RESOLUTION_COLUMNS = (
    Column("question_id", "The question (see questions).", lambda r: r.question_id),
    Column("version", "1, 2, ...: every change adds a version; none is overwritten.", lambda r: r.version),
    Column("kind", "resolve, amend, unresolve (withdrawn) or annul.", lambda r: r.kind),
    Column(
        "outcome",
        "The outcome in its stored form (JSON: true/false, option, number, period, "
        '{"relations": {...}} or gold events).',
        lambda r: r.outcome,
    ),
    Column("outcome_text", "The outcome in words.", _resolution_text),
    Column("resolved_at", "When the outcome became known (UTC).", lambda r: _iso(r.resolved_at)),
    Column("provisional", "True when the outcome may still change.", lambda r: r.provisional),
    Column("author", "Who resolved it: market:<platform>, import, staff, sample-world, ...", lambda r: r.author_label),
    Column("note", "Reason given (annulments always carry one).", lambda r: r.note),
    Column("recorded_at", "When this version was recorded (UTC).", lambda r: _iso(r.created_at)),
)

FORECAST_COLUMNS = (
    Column("forecast_id", "Hindsight forecast id (the page is /forecasts/<id>/).", lambda f: f.pk),
    Column("question_id", "The question (see questions).", lambda f: f.question_id),
    Column("agent", "Agent slug (the page is /agents/<slug>/).", lambda f: f.agent.slug),
    Column("team", "The agent's team.", lambda f: f.agent.team.name),
    Column("baseline", "True for the platform's own baseline agents.", lambda f: f.agent.is_baseline),
    Column("received_at", "When the server received it (UTC).", lambda f: _iso(f.received_at)),
    Column("replay", "True when made in a replay session (at a simulated date).", lambda f: f.session_id is not None),
    Column("channel", "api or web.", lambda f: f.channel),
    Column(
        "prediction",
        "The prediction as submitted (JSON; its shape depends on the question type).",
        lambda f: f.prediction,
    ),
    Column(
        "prediction_text",
        "The prediction in words.",
        lambda f: prediction_text(
            f.question.type,
            f.prediction,
            unit=f.question.unit,
            granularity=f.question.granularity,
            options=list(f.question.options or []),
        ),
    ),
)


_GRADE_FIELDS = frozenset(f.name for f in Grade._meta.get_fields())


def _score_column(name: str) -> Column:
    """A grade's score as a column, described by its one definition (meaning, range, direction)."""
    return Column(name, GRADE_SCORES[name].description, attrgetter(name))


GRADE_COLUMNS = (
    Column("forecast_id", "The forecast (see forecasts).", lambda g: g.forecast_id),
    Column("question_id", "The question (see questions).", lambda g: g.forecast.question_id),
    Column("agent", "Agent slug.", lambda g: g.forecast.agent.slug),
    Column("version", "Grade version of this forecast (the current one is exported).", lambda g: g.version),
    Column(
        "counts",
        "True for the forecast that counts for its agent on the question (its last in time).",
        lambda g: g.counts,
    ),
    Column("void", "True when the question was annulled (no score).", lambda g: g.void),
    Column(
        "contaminated", "True when the question's t0 precedes the agent's declared cutoff.", lambda g: g.contaminated
    ),
    # Every score a grade carries, in the order of their definitions (outcome, evidence, reasoning).
    *(_score_column(name) for name in GRADE_SCORES if name in _GRADE_FIELDS),
    Column("judge", "Open-ended: llm or lexical judge.", lambda g: g.judge),
    Column("resolution_version", "The resolution version graded against.", lambda g: g.resolution_version),
    Column(
        "reference_version", "The hindsight graph version graded against (empty: none).", lambda g: g.reference_version
    ),
    Column("grader_version", "Version of the grading rules.", lambda g: g.grader_version),
    Column("graded_at", "When this grade version was computed (UTC).", lambda g: _iso(g.created_at)),
)


def _difficulties() -> QuerySet[QuestionDifficulty]:
    # Only questions with eligible grades get a difficulty, and those are revealed questions.
    return QuestionDifficulty.objects.select_related("question").order_by("question_id", "-contamination_filter")


DIFFICULTY_COLUMNS = (
    Column("question_id", "The question (see questions).", lambda d: d.question_id),
    Column(
        "contamination_filter",
        "True: fitted without contaminated forecasts (the default leaderboard); false: with every forecast.",
        lambda d: d.contamination_filter,
    ),
    Column(
        "difficulty",
        "The question's effect in the two-way fixed-effects fit of Brier scores (agent + question): above 0 "
        "harder than the average question. Empty outside the largest group of agents linked by shared questions.",
        lambda d: d.effect,
    ),
    Column("agents", "Agents whose Brier on the question entered the fit.", lambda d: d.agents),
    Column("mean_brier", "Those agents' mean Brier on the question (every Brier on [0, 1]).", lambda d: d.mean_brier),
    Column("standings_version", "Version of the standings' definitions.", lambda d: d.standings_version),
    Column("computed_at", "When the fit ran (UTC).", lambda d: _iso(d.computed_at)),
)

DATASETS = {
    d.name: d
    for d in (
        Dataset(
            "questions",
            "Questions",
            "Every published question with its type-specific fields.",
            QUESTION_COLUMNS,
            _questions,
        ),
        Dataset(
            "resolutions",
            "Resolutions",
            "Every public resolution version (amendments, withdrawals and annulments included).",
            RESOLUTION_COLUMNS,
            _resolutions,
        ),
        Dataset(
            "forecasts",
            "Forecasts",
            "Forecasts on closed questions (replay: once the outcome is published).",
            FORECAST_COLUMNS,
            _forecasts,
        ),
        Dataset(
            "grades", "Grades", "The current grade of every forecast on a revealed question.", GRADE_COLUMNS, _grades
        ),
        Dataset(
            "question-difficulty",
            "Question difficulty",
            "Each graded question's difficulty from the leaderboard's fixed-effects fit (as ForecastBench adjusts "
            "its Brier scores), with and without contaminated forecasts.",
            DIFFICULTY_COLUMNS,
            _difficulties,
        ),
    )
}


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


class _Line:
    def write(self, value: str) -> str:
        return value


def csv_lines(dataset: Dataset) -> Iterator[str]:
    writer = csv.writer(_Line())
    yield writer.writerow([c.name for c in dataset.columns])
    for record in dataset.records():
        yield writer.writerow([_cell(record[c.name]) for c in dataset.columns])


def json_chunks(dataset: Dataset, *, header: dict[str, Any]) -> Iterator[str]:
    """``{...header, "columns": {...}, "<name>": [rows]}`` produced piece by piece."""
    head = {**header, "columns": {c.name: c.description for c in dataset.columns}}
    yield json.dumps(head, ensure_ascii=False)[:-1] + f', "{dataset.name}": ['
    first = True
    for record in dataset.records():
        yield ("" if first else ",") + json.dumps(record, ensure_ascii=False, default=str)
        first = False
    yield "]}"


__all__ = ["DATASETS", "Column", "Dataset", "csv_lines", "json_chunks"]
