"""What every part of a forecast body is checked with: the error collector and the checks of
numbers, probabilities and texts, with the messages the API and the web form show.

Each check takes the value, the field path its message goes under (e.g. ``graph.edges[2].strength``)
and the collector; it returns the clean value, or None after recording what was wrong.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Final

from django.core.exceptions import ValidationError

MAX_EVENTS: Final = 50
MAX_RATIONALE_CHARS: Final = 20_000
MAX_TITLE_CHARS: Final = 1_000
MAX_TEXT_CHARS: Final = 10_000


class FieldErrors:
    """Messages by field path, raised together as one django ``ValidationError``."""

    def __init__(self) -> None:
        self.by_field: dict[str, list[str]] = {}

    def add(self, field: str, message: str) -> None:
        self.by_field.setdefault(field, []).append(message)

    def __bool__(self) -> bool:
        return bool(self.by_field)

    def raise_if_any(self) -> None:
        if self.by_field:
            raise ValidationError(self.by_field)


def number(value: Any, field: str, errors: FieldErrors) -> float | None:
    """A finite number; bools and numeric strings are refused so a typo is never guessed at."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        errors.add(field, f"must be a number, got {describe(value)}")
        return None
    try:
        x = float(value)
    except OverflowError:
        errors.add(field, "is too large")
        return None
    if not math.isfinite(x):
        errors.add(field, "must be a finite number (not NaN or infinity)")
        return None
    return x


def probability(value: Any, field: str, errors: FieldErrors) -> float | None:
    p = number(value, field, errors)
    if p is not None and not 0.0 <= p <= 1.0:
        errors.add(field, f"must be a probability between 0 and 1, got {p:g}")
        return None
    return p


def describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def text(value: Any, field: str, errors: FieldErrors, *, max_chars: int, required: bool) -> str | None:
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        errors.add(field, f"must be text, got {describe(value)}")
        return None
    stripped = value.strip()
    if required and not stripped:
        errors.add(field, "must not be empty")
        return None
    if len(stripped) > max_chars:
        errors.add(field, f"is too long ({len(stripped)} characters; at most {max_chars})")
        return None
    return stripped


def only_keys(data: dict[str, Any], allowed: Iterable[str], field: str, errors: FieldErrors, shape: str) -> None:
    allowed = set(allowed)
    for key in data:
        if key not in allowed:
            errors.add(f"{field}.{key}", f"is not a known key; expected {shape}")
