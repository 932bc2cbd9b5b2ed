"""Import of ForecastBench question and resolution sets (forecastingresearch/forecastbench-datasets).

Mapping (README "Imports"):
- market questions (polymarket, manifold, infer) -> one binary question, linked to a
  Market(platform="forecastbench") whose freeze value is a PricePoint at the freeze time;
  an unresolved resolution row's ``resolved_to`` (the market value that day) is another price point.
- dataset questions (acled, dbnomics, fred, wikipedia, yfinance) -> one binary question per
  resolution date, placeholders ``{forecast_due_date}`` and ``{resolution_date}`` filled in.
- a question whose resolution row says ``resolved: true`` goes to the replay track with outcome
  ``resolved_to == 1`` and ``resolved_at`` = the resolution date; the others stay live.

Times: ``open_at`` is the freeze time (when ForecastBench released the question). A replay question
closes and resolves at its resolution date. A live question accepts forecasts until its answer is
determined: the market's close time, or the dataset question's resolution date (so a live question
whose date has passed but which the resolution set does not cover is stored closed).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from ingestion.models import Market, PricePoint, Question
from ingestion.services.questions import question_upsert

MARKET_SOURCES = frozenset({"polymarket", "manifold", "infer"})
DATASET_SOURCES = frozenset({"acled", "dbnomics", "fred", "wikipedia", "yfinance"})
LICENCE = "CC BY-SA 4.0"
LICENCE_URL = "https://creativecommons.org/licenses/by-sa/4.0/"
REPOSITORY_URL = "https://github.com/forecastingresearch/forecastbench-datasets"
PRICE_OUTCOME = "Yes"
QUESTION_KEYS = ("id", "source", "question", "resolution_criteria", "background", "url", "freeze_datetime")


@dataclass
class ImportReport:
    questions_created: int = 0
    questions_updated: int = 0
    questions_unchanged: int = 0
    replay: int = 0
    live: int = 0
    markets_created: int = 0
    markets_updated: int = 0
    prices_created: int = 0
    prices_updated: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(
            self.questions_created
            or self.questions_updated
            or self.markets_created
            or self.markets_updated
            or self.prices_created
            or self.prices_updated
        )

    def summary(self) -> str:
        text = (
            f"questions: {self.questions_created} created, {self.questions_updated} updated, "
            f"{self.questions_unchanged} unchanged ({self.replay} replay, {self.live} live); "
            f"markets: {self.markets_created} created, {self.markets_updated} updated; "
            f"price points: {self.prices_created} created, {self.prices_updated} updated"
        )
        if self.skipped:
            text += "; skipped: " + ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()))
        if not self.changed:
            text += ". Nothing changed (already imported)."
        return text


@dataclass(frozen=True)
class _Resolution:
    resolution_date: date
    resolved: bool
    value: float


def _fail(where: str, key: str, message: str) -> ValidationError:
    return ValidationError(f"{where}: field '{key}': {message}")


def _as_datetime(value: Any, *, where: str, key: str) -> datetime:
    parsed: datetime | None = None
    if isinstance(value, str):
        try:
            parsed = parse_datetime(value)
        except ValueError:
            parsed = None
        if parsed is None:
            day = _as_date_or_none(value)
            parsed = datetime.combine(day, time.min, tzinfo=UTC) if day else None
    if parsed is None:
        raise _fail(where, key, f"{value!r} is not an ISO 8601 date or datetime.")
    if timezone.is_naive(parsed):
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _as_date_or_none(value: str) -> date | None:
    try:
        return parse_date(value)
    except ValueError:
        return None


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


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _validate_question_set(data: Any) -> tuple[date, list[dict[str, Any]]]:
    if not isinstance(data, Mapping) or not isinstance(data.get("questions"), list):
        raise ValidationError(
            "question set: not a ForecastBench question set (expected an object with a 'questions' list)."
        )
    due = _as_date(data.get("forecast_due_date"), where="question set", key="forecast_due_date")
    questions: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for index, item in enumerate(data["questions"]):
        where = f"questions[{index}]"
        if not isinstance(item, Mapping):
            raise ValidationError(f"{where}: not an object.")
        if isinstance(item.get("id"), str):
            where += f" (id {item['id']})"
        for key in QUESTION_KEYS:
            if key not in item:
                raise _fail(where, key, "missing.")
        source = item["source"]
        if source not in MARKET_SOURCES | DATASET_SOURCES:
            raise _fail(
                where, "source", f"{source!r} is not one of {', '.join(sorted(MARKET_SOURCES | DATASET_SOURCES))}."
            )
        for key in ("question", "resolution_criteria", "background", "url"):
            if not isinstance(item[key], str):
                raise _fail(where, key, "must be a string.")
        if not item["question"].strip():
            raise _fail(where, "question", "is empty.")
        if isinstance(item["id"], list):
            questions.append(dict(item, _combination=True))
            continue
        if not isinstance(item["id"], str) or not item["id"]:
            raise _fail(where, "id", "must be a non-empty string.")
        if (source, item["id"]) in seen:
            raise _fail(where, "id", "appears twice in the question set.")
        seen.add((source, item["id"]))
        clean = dict(item)
        clean["_freeze"] = _as_datetime(item["freeze_datetime"], where=where, key="freeze_datetime")
        if source in MARKET_SOURCES:
            value = _as_float(item.get("freeze_datetime_value"), where=where, key="freeze_datetime_value")
            if not 0 <= value <= 1:
                raise _fail(where, "freeze_datetime_value", f"{value} is not a market probability in [0, 1].")
            clean["_freeze_value"] = value
            for key in ("market_info_open_datetime", "market_info_close_datetime"):
                raw = item.get(key)
                clean["_" + key] = None if raw in (None, "N/A", "") else _as_datetime(raw, where=where, key=key)
        else:
            dates = item.get("resolution_dates")
            if not isinstance(dates, list) or not dates:
                raise _fail(where, "resolution_dates", "a dataset question needs a list of resolution dates.")
            clean["_dates"] = sorted({_as_date(d, where=where, key="resolution_dates") for d in dates})
        questions.append(clean)
    return due, questions


def _validate_resolution_set(data: Any, *, due: date) -> dict[tuple[str, str], dict[date, _Resolution]]:
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
    out: dict[tuple[str, str], dict[date, _Resolution]] = defaultdict(dict)
    for index, item in enumerate(data["resolutions"]):
        where = f"resolutions[{index}]"
        if not isinstance(item, Mapping):
            raise ValidationError(f"{where}: not an object.")
        for key in ("id", "source", "resolution_date", "resolved_to", "resolved"):
            if key not in item:
                raise _fail(where, key, "missing.")
        if isinstance(item["id"], list):
            continue  # combination questions are skipped together with their questions
        if not isinstance(item["id"], str):
            raise _fail(where, "id", "must be a string.")
        where += f" (id {item['id']})"
        if not isinstance(item["resolved"], bool):
            raise _fail(where, "resolved", "must be true or false.")
        day = _as_date(item["resolution_date"], where=where, key="resolution_date")
        value = _as_float(item["resolved_to"], where=where, key="resolved_to")
        if item["resolved"] and value not in (0.0, 1.0):
            raise _fail(where, "resolved_to", f"{value} is not 0 or 1 for a resolved question.")
        out[(str(item["source"]), item["id"])][day] = _Resolution(day, item["resolved"], value)
    return out


def _fill(text: str, *, due: date, resolution_date: date) -> str:
    return text.replace("{forecast_due_date}", due.isoformat()).replace(
        "{resolution_date}", resolution_date.isoformat()
    )


def _title(text: str) -> str:
    first = text.strip().split("\n\n", 1)[0].strip()
    return first if len(first) <= 1000 else first[:999] + "…"


def _details(text: str, title: str) -> str:
    rest = text.strip()[len(title) :].strip() if text.strip().startswith(title) else text.strip()
    return rest


def _attribution(item: Mapping[str, Any], *, question_set_name: str, resolution_set_name: str) -> dict[str, Any]:
    return {
        "source": "ForecastBench (Forecasting Research Institute)",
        "dataset": item["source"],
        "forecastbench_id": item["id"],
        "url": item["url"],
        "repository": REPOSITORY_URL,
        "question_set": question_set_name,
        "resolution_set": resolution_set_name,
        "licence": LICENCE,
        "licence_url": LICENCE_URL,
    }


def _background(item: Mapping[str, Any]) -> str:
    parts = [str(item.get("source_intro") or "").strip(), item["background"].strip()]
    return "\n\n".join(p for p in parts if p)


def _upsert_market(item: Mapping[str, Any], report: ImportReport, *, status: str) -> Market:
    external_id = f"{item['source']}:{item['id']}"
    values: dict[str, Any] = {
        "title": _title(item["question"]),
        "outcomes": ["Yes", "No"],
        "url": item["url"][:1000],
        "open_at": item["_market_info_open_datetime"],
        "close_at": item["_market_info_close_datetime"],
        "status": status,
        "raw": {k: v for k, v in item.items() if not k.startswith("_")},
    }
    market = Market.objects.filter(platform=Market.Platform.FORECASTBENCH, external_id=external_id).first()
    if market is None:
        report.markets_created += 1
        return Market.objects.create(platform=Market.Platform.FORECASTBENCH, external_id=external_id, **values)
    updates = {k: v for k, v in values.items() if getattr(market, k) != v}
    if updates:
        for k, v in updates.items():
            setattr(market, k, v)
        market.save()
        report.markets_updated += 1
    return market


def _upsert_price(market: Market, at: datetime, probability: float, report: ImportReport) -> None:
    point, created = PricePoint.objects.get_or_create(
        market=market, outcome=PRICE_OUTCOME, time=at, defaults={"probability": probability}
    )
    if created:
        report.prices_created += 1
    elif point.probability != probability:
        point.probability = probability
        point.save(update_fields=["probability"])
        report.prices_updated += 1


def _store_question(data: dict[str, Any], report: ImportReport, *, now: datetime, market: Market | None) -> Question:
    existed = Question.objects.filter(external_id=data["external_id"]).exists()
    try:
        question, changed = question_upsert(data=data, origin=Question.Origin.IMPORTED, now=now)
    except ValidationError as exc:
        details = (
            "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
            if hasattr(exc, "error_dict")
            else " ".join(exc.messages)
        )
        raise ValidationError(f"question {data['external_id']}: {details}") from exc
    if market is not None and question.market_id != market.pk:
        question.market = market
        question.save(update_fields=["market", "updated_at"])
        changed = True
    if not existed:
        report.questions_created += 1
    elif changed:
        report.questions_updated += 1
    else:
        report.questions_unchanged += 1
    if data["track"] == Question.Track.REPLAY:
        report.replay += 1
    else:
        report.live += 1
    return question


@transaction.atomic
def forecastbench_import(
    *,
    question_set: Any,
    resolution_set: Any | None = None,
    question_set_name: str = "",
    resolution_set_name: str = "",
    now: datetime | None = None,
) -> ImportReport:
    """Import a ForecastBench round; a file not in the expected format raises and stores nothing."""
    now = now or timezone.now()
    due, questions = _validate_question_set(question_set)
    resolutions = _validate_resolution_set(resolution_set, due=due) if resolution_set is not None else {}
    report = ImportReport()
    known = {(item["source"], item["id"]) for item in questions if not item.get("_combination")}
    orphans = sum(len(rows) for key, rows in resolutions.items() if key not in known)
    if orphans:
        report.skipped["resolutions without a question"] = orphans
    for item in questions:
        if item.get("_combination"):
            report.skipped["combination questions"] = report.skipped.get("combination questions", 0) + 1
            continue
        attribution = _attribution(item, question_set_name=question_set_name, resolution_set_name=resolution_set_name)
        rows = resolutions.get((item["source"], item["id"]), {})
        freeze: datetime = item["_freeze"]
        common = {
            "type": Question.Type.BINARY,
            "background": _background(item),
            "domain": item["source"],
            "provenance_url": item["url"][:2000],
            "attribution": attribution,
            "open_at": freeze,
        }
        if item["source"] in MARKET_SOURCES:
            _import_market_question(item, rows, common, report, now=now)
        else:
            _import_dataset_question(item, rows, common, report, due=due, now=now)
    return report


def _import_market_question(
    item: Mapping[str, Any],
    rows: Mapping[date, _Resolution],
    common: dict[str, Any],
    report: ImportReport,
    *,
    now: datetime,
) -> None:
    resolved = sorted((r for r in rows.values() if r.resolved), key=lambda r: r.resolution_date)
    market = _upsert_market(item, report, status="resolved" if resolved else "open")
    _upsert_price(market, item["_freeze"], item["_freeze_value"], report)
    for row in rows.values():
        # An unresolved row carries the market value on that date: part of the price path.
        if not row.resolved and 0 <= row.value <= 1:
            _upsert_price(market, _midnight(row.resolution_date), row.value, report)
    title = _title(item["question"])
    criteria = item["resolution_criteria"].strip()
    details = _details(item["question"], title)
    data: dict[str, Any] = {
        **common,
        "external_id": f"forecastbench:{item['source']}:{item['id']}",
        "title": title,
        "resolution_criteria": f"{details}\n\n{criteria}" if details else criteria,
        "resolve_by": item["_market_info_close_datetime"],
    }
    if resolved:
        first = resolved[0]
        data.update(
            track=Question.Track.REPLAY,
            close_at=_midnight(first.resolution_date),
            outcome=first.value == 1.0,
            resolved_at=_midnight(first.resolution_date),
        )
    else:
        close = item["_market_info_close_datetime"]
        if close is None or close <= common["open_at"]:
            raise _fail(
                f"question {item['id']}",
                "market_info_close_datetime",
                "a live market question needs a close time after the freeze.",
            )
        data.update(track=Question.Track.LIVE, close_at=close)
    _store_question(data, report, now=now, market=market)


def _import_dataset_question(
    item: Mapping[str, Any],
    rows: Mapping[date, _Resolution],
    common: dict[str, Any],
    report: ImportReport,
    *,
    due: date,
    now: datetime,
) -> None:
    explanation = str(item.get("freeze_datetime_value_explanation") or "").strip()
    value = item.get("freeze_datetime_value")
    freeze_note = f"Value at the freeze ({item['_freeze'].date().isoformat()}): {value}. {explanation}".strip()
    for day in item["_dates"]:
        text = _fill(item["question"], due=due, resolution_date=day)
        title = _title(text)
        details = _details(text, title)
        criteria = _fill(item["resolution_criteria"], due=due, resolution_date=day).strip()
        at = _midnight(day)
        data: dict[str, Any] = {
            **common,
            "external_id": f"forecastbench:{item['source']}:{item['id']}:{day.isoformat()}",
            "title": title,
            "resolution_criteria": "\n\n".join(p for p in (details, criteria) if p),
            "background": "\n\n".join(p for p in (common["background"], freeze_note) if p),
            "close_at": at,
            "resolve_by": at,
        }
        row = rows.get(day)
        if row is not None and row.resolved:
            data.update(track=Question.Track.REPLAY, outcome=row.value == 1.0, resolved_at=at)
        else:
            data.update(track=Question.Track.LIVE)
        _store_question(data, report, now=now, market=None)
