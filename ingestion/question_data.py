"""The documented JSON shape of a question (load_questions, imports, market questions), checked
declaratively by a DRF serializer, and the outcome each question type takes.

``QUESTION_FIELDS`` lists the fields that define a question, in one place: an entry may give
them (and its outcome), and the API shows them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, date, datetime
from functools import cache
from typing import Any, ClassVar, NoReturn

from django.core.exceptions import ValidationError
from django.db.models import Choices
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from rest_framework import serializers
from rest_framework.fields import SkipField

from ingestion.models import Question
from ingestion.periods import parse_period
from ingestion.reference_data import cameo_children, iso3_countries

REQUIRED = "This key is required."


def parse_aware_datetime(value: Any, *, field_name: str) -> datetime:
    """An ISO 8601 date or datetime with an offset (a bare date means midnight UTC)."""
    if isinstance(value, datetime):
        parsed: datetime | None = value
    elif isinstance(value, str):
        # A bare date first: parse_datetime would read it as a naive midnight and refuse it.
        day = _parse_iso_date(value.strip())
        if day is not None:
            parsed = datetime(day.year, day.month, day.day, tzinfo=UTC)
        else:
            try:
                parsed = parse_datetime(value)
            except ValueError:
                parsed = None
    else:
        parsed = None
    if parsed is None:
        raise ValidationError({field_name: f"{value!r} is not an ISO 8601 date or datetime."})
    if timezone.is_naive(parsed):
        raise ValidationError({field_name: f"{value!r} has no time zone; give an offset such as +00:00 or Z."})
    return parsed.astimezone(UTC)


def _parse_iso_date(value: str) -> date | None:
    try:
        return parse_date(value)
    except ValueError:
        return None


def _finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@cache
def _choice_values(choices: type[Choices]) -> tuple[Any, ...]:
    # Django rebuilds ``Choices.values`` on every access. A tuple, not a set: a malformed entry
    # may hold a list or an object where a choice belongs, and must be refused by name.
    return tuple(choices.values)


# --- One field per kind of value -------------------------------------------------------------


class _Key(serializers.Field):  # type: ignore[type-arg]
    """A key of an entry. A required key that is missing, null or empty is reported as such; an
    optional one that is null counts as absent (``allow_null``: left out of the values)."""

    default_error_messages: ClassVar[dict[str, Any]] = {"required": REQUIRED, "null": REQUIRED}
    # The message for a value of the wrong kind; "{value!r}" in it names the value given.
    invalid = "is invalid."

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data == "" and self.required:
            self.fail("required")
        return super().validate_empty_values(data)

    def refuse(self, value: Any) -> NoReturn:
        raise serializers.ValidationError(self.invalid.format(value=value))


class _Text(_Key):
    invalid = "must be a string."

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.refuse(data)
        return data.strip()


class _ExternalId(_Key):
    def to_internal_value(self, data: Any) -> str:
        return str(data)


class _Choice(_Key):
    def __init__(self, choices: type[Choices], *, invalid: str = "", **kwargs: Any) -> None:
        self.choices = choices
        self.invalid = invalid or "{value!r} is not one of " + ", ".join(choices.values) + "."
        super().__init__(**kwargs)

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data == "" and self.required:
            # Both hold for "": the key has no value, and "" is none of the choices.
            messages = dict.fromkeys([self.error_messages["required"], self.invalid.format(value=data)])
            raise serializers.ValidationError(list(messages))
        return super().validate_empty_values(data)

    def to_internal_value(self, data: Any) -> Any:
        if data not in _choice_values(self.choices):
            self.refuse(data)
        return data


class _AwareDateTime(_Key):
    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        # An optional time given as "" is as good as none.
        return super().validate_empty_values(None if data == "" and not self.required else data)

    def to_internal_value(self, data: Any) -> datetime:
        name = str(self.field_name)
        try:
            return parse_aware_datetime(data, field_name=name)
        except ValidationError as exc:
            raise serializers.ValidationError(exc.message_dict[name]) from exc


class _Number(_Key):
    invalid = "must be a number."

    def to_internal_value(self, data: Any) -> float:
        if not _finite_number(data):
            self.refuse(data)
        return float(data)


class _PositiveInteger(_Key):
    invalid = "must be a positive integer."
    default_error_messages: ClassVar[dict[str, Any]] = {"null": invalid}

    def to_internal_value(self, data: Any) -> int:
        if not isinstance(data, int) or isinstance(data, bool) or data < 1:
            self.refuse(data)
        return int(data)


class _Strings(_Key):
    invalid = "must be a list of strings."
    default_error_messages: ClassVar[dict[str, Any]] = {"null": invalid}

    def to_internal_value(self, data: Any) -> list[str]:
        if not isinstance(data, list) or not all(isinstance(e, str) for e in data):
            self.refuse(data)
        return data


class _Object(_Key):
    invalid = "must be an object."

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            self.refuse(data)
        return data


class _Options(_Key):
    invalid = "A multiple-choice question needs a list of at least two option strings."
    default_error_messages: ClassVar[dict[str, Any]] = {"required": invalid, "null": invalid}

    def to_internal_value(self, data: Any) -> list[str]:
        if not isinstance(data, list) or len(data) < 2 or not all(isinstance(o, str) and o.strip() for o in data):
            self.refuse(data)
        if len(set(data)) != len(data):
            raise serializers.ValidationError("Options must be distinct.")
        return data


class _Country(_Key):
    invalid = "{value!r} is not an ISO 3166-1 alpha-3 country code."
    default_error_messages: ClassVar[dict[str, Any]] = {
        "required": invalid.format(value=None),
        "null": invalid.format(value=None),
    }

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        # "" is a value that names no country, not a missing one.
        return serializers.Field.validate_empty_values(self, data)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str) or data not in iso3_countries():
            self.refuse(data)
        return data


class _Day(_Key):
    invalid = "A relation question needs target_date as YYYY-MM-DD."
    default_error_messages: ClassVar[dict[str, Any]] = {"required": invalid, "null": invalid}

    def to_internal_value(self, data: Any) -> date:
        day = _parse_iso_date(data) if isinstance(data, str) else None
        if day is None:
            self.refuse(data)
        return day


class _AnyValue(_Key):
    def to_internal_value(self, data: Any) -> Any:
        return data


_GRANULARITY_NEEDED = "A timeframe question needs granularity: " + ", ".join(Question.Granularity.values) + "."


class QuestionDataSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """One entry of the documented JSON shape. Fields are declared in the order the API shows
    them; a field of another question type than the entry's is not read (``TYPE_FIELDS``).
    ``question_data_clean`` is the way to use it."""

    external_id = _ExternalId()
    title = _Text()
    type = _Choice(Question.Type)
    status = _Choice(Question.Status, required=False, allow_null=True)
    track = _Choice(Question.Track)
    domain = _Text(required=False, allow_null=True)
    origin = _Choice(Question.Origin, required=False, allow_null=True)
    options = _Options()
    unit = _Text(required=False, allow_null=True)
    lower_bound = _Number(required=False, allow_null=True)
    upper_bound = _Number(required=False, allow_null=True)
    granularity = _Choice(
        Question.Granularity,
        invalid=_GRANULARITY_NEEDED,
        error_messages={"required": _GRANULARITY_NEEDED, "null": _GRANULARITY_NEEDED},
    )
    subject = _Country()
    object = _Country()
    target_date = _Day()
    horizon_days = _PositiveInteger(default=1)
    background_events = _Strings(default=list)
    resolution_criteria = _Text()
    background = _Text(required=False, allow_null=True)
    provenance_url = _Text(required=False, allow_null=True)
    open_at = _AwareDateTime()
    close_at = _AwareDateTime()
    resolve_by = _AwareDateTime(required=False, allow_null=True)
    simulated_date_policy = _Choice(Question.SimulatedDatePolicy, required=False, allow_null=True)
    # What an entry gives beyond the question's own public fields.
    outcome = _AnyValue(required=False, allow_null=True)
    resolved_at = _AwareDateTime(required=False, allow_null=True)
    attribution = _Object(required=False, allow_null=True)
    # Ids of imported archive items that resolve the question (``question_upsert`` links them).
    resolved_by = _Strings(required=False, allow_null=True)

    ENTRY_ONLY: ClassVar[tuple[str, ...]] = ("outcome", "resolved_at", "attribution", "resolved_by")
    TYPE_FIELDS: ClassVar[dict[str, tuple[str, ...]]] = {
        Question.Type.MULTIPLE_CHOICE: ("options",),
        Question.Type.QUANTITY: ("lower_bound", "upper_bound"),
        Question.Type.TIMEFRAME: ("granularity",),
        Question.Type.RELATION: ("subject", "object", "target_date", "horizon_days"),
        Question.Type.OPEN_ENDED: ("background_events",),
    }

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        # DRF's loop over the fields, keeping the values that pass when others fail, so that the
        # rules across keys are checked (and reported) in the same round.
        errors: dict[str, list[str]] = {key: ["Unknown key."] for key in sorted(set(data) - KNOWN_KEYS)}
        values: dict[str, Any] = {}
        qtype = data.get("type")
        own = self.TYPE_FIELDS.get(qtype, ()) if isinstance(qtype, str) else ()
        for field in self._writable_fields:
            name = str(field.field_name)
            if name in _TYPE_FIELD_NAMES and name not in own:
                continue
            try:
                values[name] = field.run_validation(field.get_value(data))
            except serializers.ValidationError as exc:
                errors[name] = [str(message) for message in exc.detail]
            except SkipField:
                pass
        for key, message in _entry_rule_errors(data, values):
            errors.setdefault(key, []).append(message)
        if errors:
            raise serializers.ValidationError(errors)
        # A null optional value is as good as an absent one.
        return {key: value for key, value in values.items() if value is not None}


_DECLARED: tuple[str, ...] = tuple(QuestionDataSerializer._declared_fields)
KNOWN_KEYS = frozenset(_DECLARED)
_TYPE_FIELD_NAMES = frozenset(name for names in QuestionDataSerializer.TYPE_FIELDS.values() for name in names)
# The fields that define a question, in the order the API shows them.
QUESTION_FIELDS: tuple[str, ...] = tuple(n for n in _DECLARED if n not in QuestionDataSerializer.ENTRY_ONLY)


def _entry_rule_errors(data: Mapping[str, Any], values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The rules across keys, checked on the values that passed their own check."""
    problems = []
    open_at, close_at, resolved_at = values.get("open_at"), values.get("close_at"), values.get("resolved_at")
    if open_at is not None and close_at is not None and open_at >= close_at:
        problems.append(("close_at", "close_at must be after open_at."))
    if data.get("track") == Question.Track.REPLAY:
        if data.get("outcome") is None:
            problems.append(("outcome", "A replay question needs its outcome."))
        if data.get("resolved_at") in (None, ""):
            problems.append(("resolved_at", "A replay question needs resolved_at."))
        elif resolved_at is not None and open_at is not None and resolved_at <= open_at:
            problems.append(("resolved_at", "resolved_at must be after open_at."))
    return problems


# Keeps no state between entries (unlike one bound to ``data``), so one serves every call:
# building a serializer's fields costs more than checking an entry.
_ENTRY = QuestionDataSerializer()


def question_data_clean(data: Mapping[str, Any]) -> tuple[dict[str, Any], Any, datetime | None]:
    """Validate one entry; returns the question's field values, the raw outcome and resolved_at.
    A ValidationError maps each refused key to its messages."""
    if not isinstance(data, Mapping):
        raise ValidationError({"entry": "Each entry is a JSON object."})
    try:
        values = _ENTRY.run_validation(data)
    except serializers.ValidationError as exc:
        assert isinstance(exc.detail, Mapping)
        raise ValidationError({key: [str(m) for m in messages] for key, messages in exc.detail.items()}) from exc
    outcome = values.pop("outcome", None)
    resolved_at = values.pop("resolved_at", None)
    # Not a field of the question: read by question_upsert from the entry itself.
    values.pop("resolved_by", None)
    if outcome is not None:
        outcome = validate_outcome(question=Question(**values), outcome=outcome)
    return values, outcome, resolved_at


# --- Outcomes ---------------------------------------------------------------------------------


def validate_outcome(*, question: Question, outcome: Any) -> Any:
    """The outcome in its stored shape for the question's type, or a ValidationError naming it."""
    qtype = question.type
    if qtype == Question.Type.BINARY:
        if isinstance(outcome, bool):
            return outcome
        if isinstance(outcome, int | float) and outcome in (0, 1):
            return bool(outcome)
        raise ValidationError({"outcome": "A binary outcome is true or false."})
    if qtype == Question.Type.MULTIPLE_CHOICE:
        if outcome not in question.options:
            raise ValidationError({"outcome": f"{outcome!r} is not one of the options {question.options}."})
        return outcome
    if qtype == Question.Type.QUANTITY:
        if not _finite_number(outcome):
            raise ValidationError({"outcome": "A quantity outcome is a finite number."})
        return float(outcome)
    if qtype == Question.Type.TIMEFRAME:
        if not isinstance(outcome, str):
            raise ValidationError({"outcome": "A timeframe outcome is a period string such as 2026-Q3."})
        try:
            return parse_period(question.granularity, outcome).label
        except ValueError as exc:
            raise ValidationError({"outcome": str(exc)}) from exc
    if qtype == Question.Type.RELATION:
        return _validate_relation_outcome(outcome)
    if qtype == Question.Type.OPEN_ENDED:
        if isinstance(outcome, str) and outcome.strip():
            return outcome.strip()
        if isinstance(outcome, list) and outcome and all(isinstance(e, str) and e.strip() for e in outcome):
            return [e.strip() for e in outcome]
        raise ValidationError({"outcome": "An open-ended outcome is a list of gold events or an answer string."})
    raise ValidationError({"type": f"Unknown question type {qtype!r}."})


def _validate_relation_outcome(outcome: Any) -> dict[str, dict[str, list[str]]]:
    relations = outcome.get("relations") if isinstance(outcome, dict) else None
    if not isinstance(relations, dict):
        raise ValidationError({"outcome": 'A relation outcome is {"relations": {"04": ["042", ...], ...}}.'})
    children = cameo_children()
    clean: dict[str, list[str]] = {}
    for root, codes in relations.items():
        if root not in children:
            raise ValidationError({f"outcome.relations.{root}": f"{root!r} is not a first-level CAMEO code."})
        if not isinstance(codes, list):
            raise ValidationError({f"outcome.relations.{root}": "must be a list of second-level codes."})
        for code in codes:
            if code not in children[root]:
                raise ValidationError(
                    {f"outcome.relations.{root}": f"{code!r} is not a second-level CAMEO code under {root}."}
                )
        clean[root] = sorted(set(codes))
    return {"relations": clean}
