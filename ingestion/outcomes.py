"""Outcomes and predictions as people read them: the one place that turns stored JSON into words.

Pure module (no Django import): pages, exports and the hindsight builders' texts all call it, so an
outcome reads the same everywhere. A value that does not have its type's shape is shown as it is
stored rather than hidden, so a malformed row is visible instead of silently blank.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ingestion.periods import parse_period
from ingestion.reference_data import cameo_name

NOTHING = "—"


def _number(value: float) -> str:
    """A number without float noise: 1200 -> "1,200", 0.25 -> "0.25", 3e-07 -> "3e-07"."""
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.6g}" if abs(value) >= 1e-4 else f"{value:.3g}"


def quantity_text(value: Any, unit: str = "") -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _raw(value)
    return f"{_number(value)} {unit}".strip()


def period_text(label: Any, granularity: str = "") -> str:
    """``2026-Q3 (1 Jul 2026 to 30 Sep 2026)``; a day is just its date."""
    if not isinstance(label, str):
        return _raw(label)
    if not granularity:
        return label
    try:
        period = parse_period(granularity, label)  # type: ignore[arg-type]
    except ValueError:
        return label
    if period.start == period.end:
        return period.start.strftime("%-d %b %Y")
    return f"{period.label} ({period.start.strftime('%-d %b %Y')} to {period.end.strftime('%-d %b %Y')})"


def cameo_text(code: str) -> str:
    name = cameo_name(code)
    return f"{code} {name}" if name else code


def relation_codes(value: Any) -> list[str]:
    """The CAMEO codes of a relation answer (``{"relations": {...}}`` or the mapping itself), each
    first-level code followed by its second-level children; a first-level code that only stands
    for its children is not repeated."""
    relations = value.get("relations", value) if isinstance(value, Mapping) else None
    if not isinstance(relations, Mapping):
        return []
    codes: list[str] = []
    for root in sorted(relations, key=str):
        children = relations[root] if isinstance(relations[root], list | tuple) else []
        if children:
            codes.extend(str(c) for c in sorted(children, key=str))
        else:
            codes.append(str(root))
    return codes


def relation_text(value: Any) -> str:
    codes = relation_codes(value)
    if not codes:
        return "No relation" if isinstance(value, Mapping) else _raw(value)
    return "; ".join(cameo_text(c) for c in codes)


def _raw(value: Any) -> str:
    if value is None:
        return NOTHING
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def outcome_text(question_type: str, outcome: Any, *, unit: str = "", granularity: str = "") -> str:
    """A resolved outcome in words: Yes/No, the option, the number with its unit, the period, the
    CAMEO codes with their names, the gold events of an open-ended question."""
    if outcome is None:
        return NOTHING
    if question_type == "binary":
        return "Yes" if outcome is True else "No" if outcome is False else _raw(outcome)
    if question_type == "quantity":
        return quantity_text(outcome, unit)
    if question_type == "timeframe":
        return period_text(outcome, granularity)
    if question_type == "relation":
        return relation_text(outcome)
    if isinstance(outcome, list):
        return "; ".join(str(item) for item in outcome)
    return _raw(outcome)


def _percent(p: Any) -> str:
    if isinstance(p, bool) or not isinstance(p, int | float):
        return _raw(p)
    return f"{p * 100:.0f}%" if abs(p * 100 - round(p * 100)) < 1e-9 else f"{p * 100:.1f}%"


def prediction_text(
    question_type: str, prediction: Any, *, unit: str = "", granularity: str = "", options: Sequence[str] = ()
) -> str:
    """A submitted prediction in words (the counterpart of :func:`outcome_text`)."""
    if not isinstance(prediction, Mapping):
        return _raw(prediction)
    if question_type == "binary" and "probability" in prediction:
        return f"Yes {_percent(prediction['probability'])}"
    if question_type == "multiple_choice" and isinstance(prediction.get("probabilities"), Mapping):
        probs = prediction["probabilities"]
        order = [o for o in options if o in probs] + [o for o in probs if o not in options]
        return " · ".join(f"{o} {_percent(probs[o])}" for o in order)
    if question_type == "quantity":
        if "value" in prediction:
            return quantity_text(prediction["value"], unit)
        interval = prediction.get("interval")
        if isinstance(interval, list | tuple) and len(interval) == 2:
            return f"{quantity_text(interval[0])} to {quantity_text(interval[1], unit)}"
        quantiles = prediction.get("quantiles")
        if isinstance(quantiles, Mapping):
            parts = [f"q{_percent(float(k))} {quantity_text(v)}" for k, v in sorted(quantiles.items(), key=_level)]
            return f"{', '.join(parts)} {unit}".strip()
    if question_type == "timeframe" and "period" in prediction:
        return period_text(prediction["period"], granularity)
    if question_type == "relation" and "relations" in prediction:
        return relation_text(prediction)
    if question_type == "open_ended":
        if isinstance(prediction.get("events"), list):
            return "; ".join(str(e) for e in prediction["events"])
        if "answer" in prediction:
            return str(prediction["answer"])
    return _raw(dict(prediction))


def _level(item: tuple[Any, Any]) -> float:
    try:
        return float(item[0])
    except (TypeError, ValueError):
        return 0.0
