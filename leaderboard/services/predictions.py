"""Validation and normalisation of a forecast body: the prediction here, its sources
(``forecast_sources``) and graph (``forecast_graphs``), and the whole body (``forecast_body_clean``).

Shared by the API and the web form so both give the same messages. Every problem is collected
and raised at once as a django ``ValidationError`` whose ``message_dict`` maps a field path to
its messages, e.g. ``prediction.probabilities.Yes``, ``sources[3]``, ``graph.edges[2].target``.

Prediction shapes by question type (docs/design.md, Questions):

- binary: ``{"probability": p}``, p a number in [0, 1]
- multiple_choice: ``{"probabilities": {OPTION: p, ...}}`` covering every option, summing to 1 (to within 0.000001)
- quantity: ``{"value": x}`` | ``{"interval": [lo, hi]}`` (lo <= hi) |
  ``{"quantiles": {"0.1": x, ...}}`` (levels in (0, 1), values non-decreasing with the level);
  numbers must lie within the question's bounds when it has them
- timeframe: ``{"period": TEXT}`` at the question's granularity (see ``ingestion.periods``)
- relation: ``{"relations": {"04": ["042", "043"], ...}}``, CAMEO codes of ``ingestion.reference_data``
- open_ended: ``{"events": [TEXT, ...]}`` (1..50 non-empty strings) or ``{"answer": TEXT}``
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Final

from ingestion.models import Question
from ingestion.periods import parse_period
from ingestion.reference_data import cameo_children, cameo_parent
from leaderboard.services.forecast_fields import (
    MAX_EVENTS,
    MAX_RATIONALE_CHARS,
    MAX_TEXT_CHARS,
    FieldErrors,
    describe,
    number,
    only_keys,
    probability,
    text,
)
from leaderboard.services.forecast_graphs import validate_graph
from leaderboard.services.forecast_sources import ArticleResolver, validate_sources

PROBABILITY_SUM_TOLERANCE: Final = 1e-6


# ---------------------------------------------------------------------------------------------
# Predictions by type
# ---------------------------------------------------------------------------------------------

_SHAPES: Final[dict[str, str]] = {
    Question.Type.BINARY: '{"probability": p}',
    Question.Type.MULTIPLE_CHOICE: '{"probabilities": {OPTION: p, ...}}',
    Question.Type.QUANTITY: '{"value": x} or {"interval": [lo, hi]} or {"quantiles": {"0.1": x, ...}}',
    Question.Type.TIMEFRAME: '{"period": "..."}',
    Question.Type.RELATION: '{"relations": {"04": ["042", ...], ...}}',
    Question.Type.OPEN_ENDED: '{"events": ["...", ...]} or {"answer": "..."}',
}


def question_options(question: Question) -> list[str]:
    """The multiple-choice option labels, in the question's order."""
    labels: list[str] = []
    for option in question.options or []:
        if isinstance(option, dict):
            option = option.get("label", option.get("name", ""))
        labels.append(str(option))
    return labels


def _binary(data: dict[str, Any], errors: FieldErrors) -> dict[str, Any]:
    only_keys(data, ["probability"], "prediction", errors, _SHAPES[Question.Type.BINARY])
    if "probability" not in data:
        errors.add("prediction.probability", "is required")
        return {}
    p = probability(data["probability"], "prediction.probability", errors)
    return {"probability": p}


def _multiple_choice(question: Question, data: dict[str, Any], errors: FieldErrors) -> dict[str, Any]:
    only_keys(data, ["probabilities"], "prediction", errors, _SHAPES[Question.Type.MULTIPLE_CHOICE])
    vector = data.get("probabilities")
    if not isinstance(vector, dict):
        errors.add(
            "prediction.probabilities",
            f"must be an object mapping each option to a probability, got {describe(vector)}",
        )
        return {}
    options = question_options(question)
    clean: dict[str, float] = {}
    ok = True
    for key, value in vector.items():
        if key not in options:
            errors.add(
                f"prediction.probabilities.{key}", f"is not an option of this question; the options are {options}"
            )
            ok = False
            continue
        p = probability(value, f"prediction.probabilities.{key}", errors)
        if p is None:
            ok = False
        else:
            clean[key] = p
    for option in options:
        if option not in vector:
            errors.add(f"prediction.probabilities.{option}", "is missing: every option needs a probability")
            ok = False
    if ok:
        total = math.fsum(clean.values())
        if abs(total - 1.0) > PROBABILITY_SUM_TOLERANCE:
            errors.add(
                "prediction.probabilities",
                f"must add up to 1 (to within {PROBABILITY_SUM_TOLERANCE:.6f}), but they add up to {total:.9g}",
            )
    return {"probabilities": {option: clean.get(option) for option in options}}


def _in_bounds(question: Question, x: float, field: str, errors: FieldErrors) -> None:
    lo, hi = question.lower_bound, question.upper_bound
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        errors.add(
            field,
            f"must lie within the question's bounds [{lo if lo is not None else '-inf'}, "
            f"{hi if hi is not None else 'inf'}], got {x:g}",
        )


def _quantity(question: Question, data: dict[str, Any], errors: FieldErrors) -> dict[str, Any]:
    shape = _SHAPES[Question.Type.QUANTITY]
    kinds = [k for k in ("value", "interval", "quantiles") if k in data]
    only_keys(data, ["value", "interval", "quantiles"], "prediction", errors, shape)
    if len(kinds) != 1:
        errors.add("prediction", "must give exactly one of value, interval or quantiles")
        return {}
    kind = kinds[0]
    field = f"prediction.{kind}"
    raw = data[kind]
    if kind == "value":
        x = number(raw, field, errors)
        if x is not None:
            _in_bounds(question, x, field, errors)
        return {"value": x}
    if kind == "interval":
        if not isinstance(raw, list) or len(raw) != 2:
            errors.add(field, f"must be a list [lo, hi] of two numbers, got {describe(raw)}")
            return {}
        lo = number(raw[0], f"{field}[0]", errors)
        hi = number(raw[1], f"{field}[1]", errors)
        if lo is not None and hi is not None:
            if lo > hi:
                errors.add(field, f"must not have its lower end above its upper end, got {lo:g} above {hi:g}")
            _in_bounds(question, lo, f"{field}[0]", errors)
            _in_bounds(question, hi, f"{field}[1]", errors)
        return {"interval": [lo, hi]}
    if not isinstance(raw, dict) or not raw:
        errors.add(field, f'must be a non-empty object like {{"0.1": x, "0.5": y, "0.9": z}}, got {describe(raw)}')
        return {}
    levels: dict[float, float] = {}
    for key, value in raw.items():
        item = f"{field}.{key}"
        try:
            q = float(key)
        except (TypeError, ValueError):
            errors.add(item, f"must be named by a number between 0 and 1 (its level), got {key!r}")
            continue
        if not (math.isfinite(q) and 0.0 < q < 1.0):
            errors.add(item, f"must have a level strictly between 0 and 1, got {key!r}")
            continue
        if q in levels:
            errors.add(item, "is given twice")
            continue
        x = number(value, item, errors)
        if x is not None:
            _in_bounds(question, x, item, errors)
            levels[q] = x
    ordered = sorted(levels.items())
    for (q1, x1), (q2, x2) in pairwise(ordered):
        if x2 < x1:
            errors.add(field, f"must not decrease as the level rises: q{q1:g}={x1:g} is above q{q2:g}={x2:g}")
    return {"quantiles": {f"{q:g}": x for q, x in ordered}}


def _timeframe(question: Question, data: dict[str, Any], errors: FieldErrors) -> dict[str, Any]:
    only_keys(data, ["period"], "prediction", errors, _SHAPES[Question.Type.TIMEFRAME])
    if "period" not in data:
        errors.add("prediction.period", "is required")
        return {}
    if not question.granularity:
        errors.add(
            "prediction.period", "cannot be given: this question has no granularity set, so it takes no forecasts"
        )
        return {}
    try:
        period = parse_period(question.granularity, data["period"])
    except ValueError as exc:
        errors.add("prediction.period", f"is not valid: {exc}")
        return {}
    return {"period": period.label}


def _relation(data: dict[str, Any], errors: FieldErrors) -> dict[str, Any]:
    only_keys(data, ["relations"], "prediction", errors, _SHAPES[Question.Type.RELATION])
    relations = data.get("relations")
    if not isinstance(relations, dict):
        errors.add(
            "prediction.relations",
            f"must be an object of first-level CAMEO code -> list of second-level codes, got {describe(relations)}",
        )
        return {}
    children = cameo_children()
    clean: dict[str, list[str]] = {}
    for parent, codes in relations.items():
        field = f"prediction.relations.{parent}"
        if parent not in children:
            errors.add(field, f"is not a first-level CAMEO code ('01' to '20'), got {parent!r}")
            continue
        if not isinstance(codes, list):
            errors.add(field, f"must be a list of second-level CAMEO codes, got {describe(codes)}")
            continue
        kept: set[str] = set()
        for i, code in enumerate(codes):
            item = f"{field}[{i}]"
            if not isinstance(code, str):
                errors.add(item, f"must be a CAMEO code written as text, like '042', got {describe(code)}")
            elif code in children[parent]:
                kept.add(code)
            elif cameo_parent(code) is not None:
                errors.add(
                    item, f"is CAMEO code {code!r}, which belongs under {cameo_parent(code)!r}, not under {parent!r}"
                )
            else:
                errors.add(item, f"is not a CAMEO code, got {code!r}")
        clean[parent] = sorted(kept)
    return {"relations": dict(sorted(clean.items()))}


def _open_ended(data: dict[str, Any], errors: FieldErrors) -> dict[str, Any]:
    shape = _SHAPES[Question.Type.OPEN_ENDED]
    only_keys(data, ["events", "answer"], "prediction", errors, shape)
    if ("events" in data) == ("answer" in data):
        errors.add("prediction", "must give exactly one of events (a list) or answer (a text), not both or neither")
        return {}
    if "answer" in data:
        return {
            "answer": text(data["answer"], "prediction.answer", errors, max_chars=MAX_RATIONALE_CHARS, required=True)
        }
    events = data["events"]
    if not isinstance(events, list):
        errors.add("prediction.events", f"must be a list of event descriptions, got {describe(events)}")
        return {}
    if not events:
        errors.add("prediction.events", "must name at least one event")
        return {}
    if len(events) > MAX_EVENTS:
        errors.add("prediction.events", f"has {len(events)} events; at most {MAX_EVENTS} are allowed")
        return {}
    clean = [
        text(e, f"prediction.events[{i}]", errors, max_chars=MAX_TEXT_CHARS, required=True)
        for i, e in enumerate(events)
    ]
    return {"events": clean}


def validate_prediction(*, question: Question, prediction: Any, errors: FieldErrors | None = None) -> dict[str, Any]:
    """The normalised prediction for ``question``; raises ValidationError unless ``errors`` collects."""
    own = errors is None
    errs = errors if errors is not None else FieldErrors()
    clean: dict[str, Any] = {}
    if not isinstance(prediction, dict):
        errs.add(
            "prediction", f"must be an object shaped {_SHAPES.get(question.type, '{...}')}, got {describe(prediction)}"
        )
    elif question.type == Question.Type.BINARY:
        clean = _binary(prediction, errs)
    elif question.type == Question.Type.MULTIPLE_CHOICE:
        clean = _multiple_choice(question, prediction, errs)
    elif question.type == Question.Type.QUANTITY:
        clean = _quantity(question, prediction, errs)
    elif question.type == Question.Type.TIMEFRAME:
        clean = _timeframe(question, prediction, errs)
    elif question.type == Question.Type.RELATION:
        clean = _relation(prediction, errs)
    elif question.type == Question.Type.OPEN_ENDED:
        clean = _open_ended(prediction, errs)
    else:
        errs.add("question", f"question type {question.type!r} does not take forecasts")
    if own:
        errs.raise_if_any()
    return clean


# ---------------------------------------------------------------------------------------------
# The whole body
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CleanForecast:
    prediction: dict[str, Any]
    sources: list[int | str]
    article_ids: list[int]
    rationale: str
    graph: dict[str, Any] | None


def forecast_body_clean(
    *,
    question: Question,
    prediction: Any,
    sources: Any = None,
    rationale: Any = "",
    graph: Any = None,
    resolver: ArticleResolver | None = None,
    extra_errors: dict[str, list[str]] | None = None,
) -> CleanForecast:
    """Validate and normalise every part of a forecast body; all problems are raised together."""
    errors = FieldErrors()
    for field, messages in (extra_errors or {}).items():
        for message in messages:
            errors.add(field, message)
    clean_prediction = validate_prediction(question=question, prediction=prediction, errors=errors)
    clean_sources, article_ids = validate_sources(sources=sources, resolver=resolver, errors=errors)
    clean_rationale = text(rationale, "rationale", errors, max_chars=MAX_RATIONALE_CHARS, required=False)
    clean_graph = validate_graph(graph=graph, errors=errors)
    errors.raise_if_any()
    return CleanForecast(
        prediction=clean_prediction,
        sources=clean_sources,
        article_ids=article_ids,
        rationale=clean_rationale or "",
        graph=clean_graph,
    )
