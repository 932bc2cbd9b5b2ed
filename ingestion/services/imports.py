"""Importing ForecastBench rounds (read and validated by ``ingestion.forecastbench``).

Mapping (README "Imports"):
- market questions (polymarket, manifold, infer) -> one binary question, linked to a
  Market(platform="forecastbench"); each round's freeze value is a PricePoint at its freeze time,
  and an unresolved resolution row's ``resolved_to`` (the market value that day) is another.
- dataset questions (acled, dbnomics, fred, wikipedia, yfinance) -> one binary question per
  resolution date, placeholders ``{forecast_due_date}`` and ``{resolution_date}`` filled in.
- a question whose resolution row says ``resolved: true`` goes to the replay track with outcome
  ``resolved_to == 1`` and ``resolved_at`` = the resolution date; the others stay live until their
  answer is determined (the market's close time, or the dataset question's resolution date).

Rounds are additive history. A market question appears in several rounds under one external id,
and a later file says nothing about what an earlier one resolved, so nothing goes backwards:

- track, outcome and resolution: once resolved (replay), a question stays resolved; a round that
  does not resolve it changes neither. A different outcome for a question already resolved is
  counted and left for staff (``resolve_question``), never applied silently.
- ``open_at`` is the earliest freeze of any round, and the question's text, attribution and the
  market's payload are those of that round (what was known when the question opened, so a later
  round's background cannot reach a replay agent early); ``attribution["rounds"]`` lists every
  round's forecast due date.
- a live question's deadline is the latest market close any round gives.
- each round's freeze value is its own price point; a stored point is never overwritten.

So importing the same rounds in any order, or any of them again, gives the same questions and
changes nothing the second time. The writes are in bulk (a few queries per thousand questions).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ingestion.forecastbench import (
    DATASET_TOPICS,
    ImportReport,
    Round,
    RoundQuestion,
    midnight,
    question_title,
    read_round,
)
from ingestion.models import Market, Question, Resolution
from ingestion.question_data import question_data_clean
from ingestion.selectors.questions import CHUNK, question_current_resolutions
from ingestion.services.forecastbench_markets import latest, merge_markets, store_prices, sync_market_status
from ingestion.services.questions import NewResolution, questions_resolve_many

LICENCE = "CC BY-SA 4.0"
LICENCE_URL = "https://creativecommons.org/licenses/by-sa/4.0/"
REPOSITORY_URL = "https://github.com/forecastingresearch/forecastbench-datasets"
AUTHOR = "import"
CONFLICT = "resolutions that contradict the stored outcome (kept; resolve by hand)"
OTHER_ROUND = "dataset questions already imported from another round (kept)"
# Question fields the round's text decides (taken from the round that opened the question).
TEXT_FIELDS = ("title", "resolution_criteria", "background", "domain", "provenance_url", "attribution")

Progress = Callable[[str], None]


@dataclass
class _Incoming:
    """One Hindsight question as this round describes it, validated like ``load_questions``."""

    values: dict[str, Any]
    resolution: tuple[bool, datetime] | None
    dataset: bool
    market_key: str = ""


def _details(text: str, title: str) -> str:
    return text.strip()[len(title) :].strip() if text.strip().startswith(title) else text.strip()


def _fill(text: str, *, due: date, resolution_date: date) -> str:
    return text.replace("{forecast_due_date}", due.isoformat()).replace(
        "{resolution_date}", resolution_date.isoformat()
    )


def _common(question: RoundQuestion, *, round_: Round, names: tuple[str, str]) -> dict[str, Any]:
    item = question.item
    background = "\n\n".join(p for p in (str(item.get("source_intro") or "").strip(), item["background"].strip()) if p)
    return {
        "type": Question.Type.BINARY,
        "background": background,
        "domain": DATASET_TOPICS.get(question.source, ""),
        "provenance_url": item["url"][:2000],
        "open_at": question.freeze,
        "attribution": {
            "source": "ForecastBench (Forecasting Research Institute)",
            "dataset": question.source,
            "forecastbench_id": question.id,
            "url": item["url"],
            "repository": REPOSITORY_URL,
            "question_set": names[0],
            "resolution_set": names[1],
            "forecast_due_date": round_.forecast_due_date.isoformat(),
            "rounds": [round_.forecast_due_date.isoformat()],
            "licence": LICENCE,
            "licence_url": LICENCE_URL,
        },
    }


def _incoming(round_: Round, *, names: tuple[str, str]) -> Iterable[_Incoming]:
    due = round_.forecast_due_date
    for question in round_.questions:
        item = question.item
        rows = round_.resolutions.get((question.source, question.id), {})
        common = _common(question, round_=round_, names=names)
        if question.is_market:
            title = question_title(item["question"])
            details = _details(item["question"], title)
            criteria = item["resolution_criteria"].strip()
            data = {
                **common,
                "external_id": f"forecastbench:{question.source}:{question.id}",
                "title": title,
                "resolution_criteria": f"{details}\n\n{criteria}" if details else criteria,
                "resolve_by": question.market_close,
            }
            resolved = sorted((r for r in rows.values() if r.resolved), key=lambda r: r.resolution_date)
            if resolved:
                at = midnight(resolved[0].resolution_date)
                data.update(track=Question.Track.REPLAY, close_at=at, outcome=resolved[0].value == 1.0, resolved_at=at)
            else:
                close = question.market_close
                if close is None or close <= question.freeze:
                    raise ValidationError(
                        f"question {question.id}: field 'market_info_close_datetime': "
                        "a live market question needs a close time after the freeze."
                    )
                data.update(track=Question.Track.LIVE, close_at=close)
            yield _clean(data, dataset=False, market_key=f"{question.source}:{question.id}")
            continue
        value = item.get("freeze_datetime_value")
        explanation = str(item.get("freeze_datetime_value_explanation") or "").strip()
        freeze_note = f"Value at the freeze ({question.freeze.date().isoformat()}): {value}. {explanation}".strip()
        for day in question.resolution_dates:
            text = _fill(item["question"], due=due, resolution_date=day)
            title = question_title(text)
            criteria = _fill(item["resolution_criteria"], due=due, resolution_date=day).strip()
            at = midnight(day)
            data = {
                **common,
                "external_id": f"forecastbench:{question.source}:{question.id}:{day.isoformat()}",
                "title": title,
                "resolution_criteria": "\n\n".join(p for p in (_details(text, title), criteria) if p),
                "background": "\n\n".join(p for p in (common["background"], freeze_note) if p),
                "close_at": at,
                "resolve_by": at,
            }
            row = rows.get(day)
            if row is not None and row.resolved:
                data.update(track=Question.Track.REPLAY, outcome=row.value == 1.0, resolved_at=at)
            else:
                data.update(track=Question.Track.LIVE)
            yield _clean(data, dataset=True)


def _clean(data: dict[str, Any], *, dataset: bool, market_key: str = "") -> _Incoming:
    try:
        values, outcome, resolved_at = question_data_clean(data)
    except ValidationError as exc:
        details = (
            "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
            if hasattr(exc, "error_dict")
            else " ".join(exc.messages)
        )
        raise ValidationError(f"question {data['external_id']}: {details}") from exc
    values["origin"] = Question.Origin.IMPORTED
    resolution = (bool(outcome), resolved_at) if outcome is not None and resolved_at is not None else None
    return _Incoming(values=values, resolution=resolution, dataset=dataset, market_key=market_key)


@transaction.atomic
def forecastbench_import(
    *,
    question_set: Any,
    resolution_set: Any | None = None,
    question_set_name: str = "",
    resolution_set_name: str = "",
    now: datetime | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    """Import a ForecastBench round into what earlier rounds stored (see the module docstring);
    a file not in the expected format raises and stores nothing."""
    now = now or timezone.now()
    say = progress or (lambda text: None)
    round_ = read_round(question_set, resolution_set)
    report = ImportReport(skipped=Counter(round_.skipped))
    incoming = list(_incoming(round_, names=(question_set_name, resolution_set_name)))
    say(f"read {len(round_.questions)} ForecastBench questions: {len(incoming)} Hindsight questions to merge")
    markets = merge_markets(round_, report=report)
    say(f"markets: {report.markets_created} created, {report.markets_updated} updated")
    questions = _merge_questions(incoming, markets=markets, report=report, now=now, say=say)
    store_prices(round_, markets=markets, report=report)
    sync_market_status(markets, questions=questions)
    return report


def _chunks(values: list[str]) -> Iterable[list[str]]:
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


def _merge_questions(
    incoming: list[_Incoming], *, markets: Mapping[str, Market], report: ImportReport, now: datetime, say: Progress
) -> dict[str, Question]:
    ids = [entry.values["external_id"] for entry in incoming]
    stored: dict[str, Question] = {}
    for chunk in _chunks(ids):
        stored.update((q.external_id, q) for q in Question.objects.filter(external_id__in=chunk) if q.external_id)
    currents = question_current_resolutions(q.pk for q in stored.values())
    create: list[Question] = []
    update: dict[int, tuple[Question, set[str]]] = {}
    resolve: list[tuple[Question, tuple[bool, datetime], Resolution | None]] = []
    for entry in incoming:
        values = dict(entry.values)
        if entry.market_key:
            values["market_id"] = markets[entry.market_key].pk
        question = stored.get(values["external_id"])
        if question is None:
            track_live = entry.resolution is None
            values["status"] = (
                Question.Status.RESOLVED
                if not track_live
                else (Question.Status.OPEN if values["close_at"] > now else Question.Status.CLOSED)
            )
            question = Question(**values)
            create.append(question)
            stored[values["external_id"]] = question
            report.questions_created += 1
            if entry.resolution is not None:
                resolve.append((question, entry.resolution, None))
        else:
            changed, resolution = _merge_question(
                question, entry, values, current=currents.get(question.pk), report=report
            )
            if changed:
                update[question.pk] = (question, changed)
                report.questions_updated += 1
            elif resolution is None:
                report.questions_unchanged += 1
            if resolution is not None:
                resolve.append((question, resolution, currents.get(question.pk)))
                if not changed:
                    report.questions_updated += 1
        if question.track == Question.Track.REPLAY:
            report.replay += 1
        else:
            report.live += 1
    if create:
        Question.objects.bulk_create(create, batch_size=500)
        if any(q.pk is None for q in create):
            pks: dict[str | None, int] = {}
            for chunk in _chunks([q.external_id or "" for q in create]):
                pks.update(Question.objects.filter(external_id__in=chunk).values_list("external_id", "pk"))
            for question in create:
                question.pk = pks[question.external_id]
    say(f"questions: {report.questions_created} created, {report.questions_updated} updated")
    if update:
        stamp = timezone.now()
        fields: set[str] = set()
        for question, changed in update.values():
            question.updated_at = stamp
            fields |= changed
        Question.objects.bulk_update([q for q, _ in update.values()], [*sorted(fields), "updated_at"], batch_size=500)
    added = questions_resolve_many(
        items=[NewResolution(question=q, outcome=o, resolved_at=at, current=c) for q, (o, at), c in resolve],
        note="ForecastBench resolution set",
        author_label=AUTHOR,
        now=now,
    )
    report.resolutions_added += len(added)
    if added:
        say(f"resolutions: {len(added)} added (announced for grading when the import commits)")
    return stored


def _merge_question(
    question: Question,
    entry: _Incoming,
    values: dict[str, Any],
    *,
    current: Resolution | None,
    report: ImportReport,
) -> tuple[set[str], tuple[bool, datetime] | None]:
    """Merge this round into a stored question (the rules of the module docstring): the fields
    that change, and the resolution to add, if any."""
    attribution = question.attribution if isinstance(question.attribution, dict) else {}
    if entry.dataset and attribution.get("forecast_due_date") not in (
        None,
        values["attribution"]["forecast_due_date"],
    ):
        # Another round's question under the same id and date: a different comparison date.
        report.skipped[OTHER_ROUND] += 1
        return set(), None
    target: dict[str, Any] = {}
    rounds = sorted({*(attribution.get("rounds") or []), *values["attribution"]["rounds"]})
    if values["open_at"] < question.open_at:
        # This round opened the question: its text is what was known then.
        target.update({name: values[name] for name in TEXT_FIELDS if name in values})
        target["open_at"] = values["open_at"]
        attribution = values["attribution"]
    target["attribution"] = {**attribution, "rounds": rounds}
    if "market_id" in values:
        target["market_id"] = values["market_id"]
    resolution: tuple[bool, datetime] | None = None
    resolved = current is not None and current.kind in (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND)
    if entry.resolution is not None:
        outcome = entry.resolution[0]
        if current is None or current.kind == Resolution.Kind.UNRESOLVE:
            resolution = entry.resolution
        elif resolved and current.outcome != outcome:
            report.skipped[CONFLICT] += 1
        if question.track != Question.Track.REPLAY and (resolution is not None or resolved):
            # Resolved upstream: a replay question, whose outcome stays hidden until published.
            target.update(track=Question.Track.REPLAY, close_at=values["close_at"])
    if question.track == Question.Track.LIVE and "track" not in target:
        # Still live: the latest deadline any round gives.
        target["close_at"] = latest(question.close_at, values["close_at"])
    target["resolve_by"] = latest(question.resolve_by, values.get("resolve_by"))
    changed = {name for name, value in target.items() if getattr(question, name) != value}
    for name in changed:
        setattr(question, name, target[name])
    return changed, resolution
