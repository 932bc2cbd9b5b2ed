"""Reading one ForecastBench round (forecastingresearch/forecastbench-datasets): a question set and,
optionally, its resolution set, validated into plain records. No Django models, no database: the
import service (``ingestion.services.imports``) merges the records into what is stored.

Rows that are left out on purpose are counted by reason, never dropped silently:

* Metaculus questions and their resolution rows: Metaculus' terms forbid using its questions to
  evaluate AI systems, so they are never imported (every upstream round contains some).
* combination questions (ForecastBench pairs two questions under a list id) and their rows.
* resolution rows that name no question of the set.

Anything else that is not in the expected format rejects the whole round, naming the row and the
field, so that nothing of a broken file is stored.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.dateparse import parse_date, parse_datetime

MARKET_SOURCES = frozenset({"polymarket", "manifold", "infer"})
DATASET_SOURCES = frozenset({"acled", "dbnomics", "fred", "wikipedia", "yfinance"})
EXCLUDED_SOURCES = {"metaculus": "Metaculus questions (its terms forbid use for AI evaluation)"}
# The topic (a question's domain, as the site's Domain filter lists topics) of the datasets whose
# questions are all about one: ACLED counts armed-conflict events, DBnomics here holds Météo-France
# temperatures, FRED economic series, yfinance share prices. Wikipedia's questions (vaccines, chess
# ratings, world records) and the markets' span many topics and get none; the source itself stays
# in the question's attribution ("dataset").
DATASET_TOPICS = {"acled": "conflict", "dbnomics": "weather", "fred": "economics", "yfinance": "finance"}
QUESTION_KEYS = ("id", "source", "question", "resolution_criteria", "background", "url", "freeze_datetime")
COMBINATION = "combination questions (not imported)"
ORPHAN = "resolutions without a question"


@dataclass(frozen=True)
class ResolutionRow:
    resolution_date: date
    resolved: bool
    value: float


@dataclass(frozen=True)
class RoundQuestion:
    """One valid question-set row; ``item`` keeps the row as published."""

    source: str
    id: str
    item: Mapping[str, Any]
    freeze: datetime
    # Market questions: the price at the freeze and the market's own open and close.
    freeze_value: float | None = None
    market_open: datetime | None = None
    market_close: datetime | None = None
    # Dataset questions: one Hindsight question per date.
    resolution_dates: tuple[date, ...] = ()

    @property
    def is_market(self) -> bool:
        return self.source in MARKET_SOURCES


@dataclass
class Round:
    forecast_due_date: date
    questions: list[RoundQuestion]
    # (source, id) -> resolution date -> row.
    resolutions: dict[tuple[str, str], dict[date, ResolutionRow]]
    skipped: Counter[str] = field(default_factory=Counter)


def _fail(where: str, key: str, message: str) -> ValidationError:
    return ValidationError(f"{where}: field '{key}': {message}")


def question_title(text: str) -> str:
    """A ForecastBench question's first paragraph, as a title (at most 1,000 characters)."""
    first = text.strip().split("\n\n", 1)[0].strip()
    return first if len(first) <= 1000 else first[:999] + "…"


def midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _as_date_or_none(value: str) -> date | None:
    try:
        return parse_date(value)
    except ValueError:
        return None


def _as_datetime(value: Any, *, where: str, key: str) -> datetime:
    parsed: datetime | None = None
    if isinstance(value, str):
        try:
            parsed = parse_datetime(value)
        except ValueError:
            parsed = None
        if parsed is None:
            day = _as_date_or_none(value)
            parsed = midnight(day) if day else None
    if parsed is None:
        raise _fail(where, key, f"{value!r} is not an ISO 8601 date or datetime.")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _as_date(value: Any, *, where: str, key: str) -> date:
    day = _as_date_or_none(value) if isinstance(value, str) else None
    if day is None:
        raise _fail(where, key, f"{value!r} is not a date (YYYY-MM-DD).")
    return day


def _as_float(value: Any, *, where: str, key: str) -> float:
    if isinstance(value, bool):
        raise _fail(where, key, f"{value!r} is not a number.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise _fail(where, key, f"{value!r} is not a number.") from None
    if not math.isfinite(number):
        raise _fail(where, key, f"{value!r} is not a finite number.")
    return number


def read_round(question_set: Any, resolution_set: Any | None = None) -> Round:
    """Validate a round; raises ValidationError (naming row and field) for a file not in the format."""
    due, questions, skipped = _read_question_set(question_set)
    resolutions: dict[tuple[str, str], dict[date, ResolutionRow]] = {}
    if resolution_set is not None:
        resolutions = _read_resolution_set(resolution_set, due=due, skipped=skipped)
        known = {(q.source, q.id) for q in questions}
        orphans = sum(len(rows) for key, rows in resolutions.items() if key not in known)
        if orphans:
            skipped[ORPHAN] += orphans
    return Round(forecast_due_date=due, questions=questions, resolutions=resolutions, skipped=skipped)


def _read_question_set(data: Any) -> tuple[date, list[RoundQuestion], Counter[str]]:
    if not isinstance(data, Mapping) or not isinstance(data.get("questions"), list):
        raise ValidationError(
            "question set: not a ForecastBench question set (expected an object with a 'questions' list)."
        )
    due = _as_date(data.get("forecast_due_date"), where="question set", key="forecast_due_date")
    questions: list[RoundQuestion] = []
    skipped: Counter[str] = Counter()
    seen: set[tuple[str, str]] = set()
    for index, item in enumerate(data["questions"]):
        where = f"questions[{index}]"
        if not isinstance(item, Mapping):
            raise ValidationError(f"{where}: not an object.")
        source = item.get("source")
        if source in EXCLUDED_SOURCES:
            skipped[EXCLUDED_SOURCES[source]] += 1
            continue
        if isinstance(item.get("id"), str):
            where += f" (id {item['id']})"
        for key in QUESTION_KEYS:
            if key not in item:
                raise _fail(where, key, "missing.")
        if source not in MARKET_SOURCES | DATASET_SOURCES:
            known = ", ".join(sorted(MARKET_SOURCES | DATASET_SOURCES | set(EXCLUDED_SOURCES)))
            raise _fail(where, "source", f"{source!r} is not one of {known}.")
        for key in ("question", "resolution_criteria", "background", "url"):
            if not isinstance(item[key], str):
                raise _fail(where, key, "must be a string.")
        if not item["question"].strip():
            raise _fail(where, "question", "is empty.")
        if isinstance(item["id"], list):
            skipped[COMBINATION] += 1
            continue
        if not isinstance(item["id"], str) or not item["id"]:
            raise _fail(where, "id", "must be a non-empty string.")
        if (source, item["id"]) in seen:
            raise _fail(where, "id", "appears twice in the question set.")
        seen.add((source, item["id"]))
        questions.append(_read_question(item, source=source, where=where))
    return due, questions, skipped


def _read_question(item: Mapping[str, Any], *, source: str, where: str) -> RoundQuestion:
    freeze = _as_datetime(item["freeze_datetime"], where=where, key="freeze_datetime")
    if source in MARKET_SOURCES:
        value = _as_float(item.get("freeze_datetime_value"), where=where, key="freeze_datetime_value")
        if not 0 <= value <= 1:
            raise _fail(where, "freeze_datetime_value", f"{value} is not a market probability in [0, 1].")
        times: dict[str, datetime | None] = {}
        for key in ("market_info_open_datetime", "market_info_close_datetime"):
            raw = item.get(key)
            times[key] = None if raw in (None, "N/A", "") else _as_datetime(raw, where=where, key=key)
        return RoundQuestion(
            source=source,
            id=item["id"],
            item=item,
            freeze=freeze,
            freeze_value=value,
            market_open=times["market_info_open_datetime"],
            market_close=times["market_info_close_datetime"],
        )
    dates = item.get("resolution_dates")
    if not isinstance(dates, list) or not dates:
        raise _fail(where, "resolution_dates", "a dataset question needs a list of resolution dates.")
    days = tuple(sorted({_as_date(d, where=where, key="resolution_dates") for d in dates}))
    return RoundQuestion(source=source, id=item["id"], item=item, freeze=freeze, resolution_dates=days)


def _read_resolution_set(
    data: Any, *, due: date, skipped: Counter[str]
) -> dict[tuple[str, str], dict[date, ResolutionRow]]:
    if not isinstance(data, Mapping) or not isinstance(data.get("resolutions"), list):
        raise ValidationError(
            "resolution set: not a ForecastBench resolution set (expected an object with a 'resolutions' list)."
        )
    set_due = _as_date(data.get("forecast_due_date"), where="resolution set", key="forecast_due_date")
    if set_due != due:
        raise _fail(
            "resolution set",
            "forecast_due_date",
            f"{set_due} does not match the question set's forecast due date {due}.",
        )
    out: dict[tuple[str, str], dict[date, ResolutionRow]] = {}
    for index, item in enumerate(data["resolutions"]):
        where = f"resolutions[{index}]"
        if not isinstance(item, Mapping):
            raise ValidationError(f"{where}: not an object.")
        if item.get("source") in EXCLUDED_SOURCES:
            skipped[EXCLUDED_SOURCES[item["source"]]] += 1
            continue
        for key in ("id", "source", "resolution_date", "resolved_to", "resolved"):
            if key not in item:
                raise _fail(where, key, "missing.")
        if isinstance(item["id"], list):
            skipped[COMBINATION] += 1
            continue
        if not isinstance(item["id"], str):
            raise _fail(where, "id", "must be a string.")
        where += f" (id {item['id']})"
        if not isinstance(item["resolved"], bool):
            raise _fail(where, "resolved", "must be true or false.")
        day = _as_date(item["resolution_date"], where=where, key="resolution_date")
        value = _as_float(item["resolved_to"], where=where, key="resolved_to")
        if item["resolved"] and value not in (0.0, 1.0):
            raise _fail(where, "resolved_to", f"{value} is not 0 or 1 for a resolved question.")
        out.setdefault((str(item["source"]), item["id"]), {})[day] = ResolutionRow(day, item["resolved"], value)
    return out


@dataclass
class ImportReport:
    questions_created: int = 0
    questions_updated: int = 0
    questions_unchanged: int = 0
    replay: int = 0
    live: int = 0
    resolutions_added: int = 0
    markets_created: int = 0
    markets_updated: int = 0
    prices_created: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    @property
    def changed(self) -> bool:
        return bool(
            self.questions_created
            or self.questions_updated
            or self.resolutions_added
            or self.markets_created
            or self.markets_updated
            or self.prices_created
        )

    def summary(self) -> str:
        text = (
            f"questions: {self.questions_created} created, {self.questions_updated} updated, "
            f"{self.questions_unchanged} unchanged ({self.replay} replay, {self.live} live); "
            f"resolutions: {self.resolutions_added} added; "
            f"markets: {self.markets_created} created, {self.markets_updated} updated; "
            f"price points: {self.prices_created} created"
        )
        if self.skipped:
            text += "; skipped: " + ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()))
        if not self.changed:
            text += ". Nothing changed (already imported)."
        return text
