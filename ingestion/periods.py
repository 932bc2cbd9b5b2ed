"""Calendar periods for timeframe questions: parsing and normalising period strings.

Pure module (no Django imports): forecast validation, outcome validation and grading all share it,
so a period means the same thing everywhere.

Formats by granularity (canonical labels; parsing is case-insensitive for ``W``/``Q`` and ignores
surrounding whitespace):

- ``day``: ``YYYY-MM-DD`` (``2026-07-15``)
- ``week``: ``YYYY-Www``, an ISO 8601 week, Monday to Sunday (``2026-W28``)
- ``month``: ``YYYY-MM`` (``2026-07``)
- ``quarter``: ``YYYY-Qn`` with n in 1..4 (``2026-Q3``)
- ``year``: ``YYYY`` (``2026``)
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Final

GRANULARITIES: Final = ("day", "week", "month", "quarter", "year")

FORMATS: Final[dict[str, tuple[str, str]]] = {
    "day": ("YYYY-MM-DD", "2026-07-15"),
    "week": ("YYYY-Www (ISO week)", "2026-W28"),
    "month": ("YYYY-MM", "2026-07"),
    "quarter": ("YYYY-Qn", "2026-Q3"),
    "year": ("YYYY", "2026"),
}

_PATTERNS: Final[dict[str, re.Pattern[str]]] = {
    "day": re.compile(r"(\d{4})-(\d{2})-(\d{2})"),
    "week": re.compile(r"(\d{4})-[Ww](\d{2})"),
    "month": re.compile(r"(\d{4})-(\d{2})"),
    "quarter": re.compile(r"(\d{4})-[Qq]([1-4])"),
    "year": re.compile(r"(\d{4})"),
}


@dataclass(frozen=True, order=True)
class Period:
    """A calendar period; ``start`` and ``end`` are inclusive dates, ``label`` the canonical text."""

    start: date
    end: date
    label: str

    def contains(self, day: date) -> bool:
        return self.start <= day <= self.end

    def __str__(self) -> str:
        return self.label


def expected_format(granularity: str) -> str:
    """Human text of the format a granularity expects, e.g. ``YYYY-Qn (e.g. 2026-Q3)``."""
    fmt, example = FORMATS[_check_granularity(granularity)]
    return f"{fmt} (e.g. {example})"


def _check_granularity(granularity: str) -> str:
    if granularity not in FORMATS:
        raise ValueError(f"unknown granularity {granularity!r}; expected one of {', '.join(GRANULARITIES)}")
    return granularity


def _month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def parse_period(granularity: str, text: str) -> Period:
    """The period ``text`` denotes at ``granularity``; ValueError naming the expected format otherwise."""
    _check_granularity(granularity)
    if not isinstance(text, str):
        raise ValueError(f"expected a {granularity} period as text in the format {expected_format(granularity)}")
    match = _PATTERNS[granularity].fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a {granularity} period; expected the format {expected_format(granularity)}")
    year = int(match.group(1))
    if year < 1:
        raise ValueError(f"{text!r} has no valid year; expected the format {expected_format(granularity)}")
    try:
        if granularity == "day":
            day = date(year, int(match.group(2)), int(match.group(3)))
            return Period(day, day, day.isoformat())
        if granularity == "week":
            week = int(match.group(2))
            start = date.fromisocalendar(year, week, 1)
            return Period(start, start + timedelta(days=6), f"{year:04d}-W{week:02d}")
        if granularity == "month":
            month = int(match.group(2))
            return Period(date(year, month, 1), _month_end(year, month), f"{year:04d}-{month:02d}")
        if granularity == "quarter":
            quarter = int(match.group(2))
            first = 3 * (quarter - 1) + 1
            return Period(date(year, first, 1), _month_end(year, first + 2), f"{year:04d}-Q{quarter}")
        return Period(date(year, 1, 1), date(year, 12, 31), f"{year:04d}")
    except ValueError as exc:
        # date() and fromisocalendar() say e.g. "month must be in 1..12"; keep that and the format.
        raise ValueError(
            f"{text!r} is not a valid {granularity} ({exc}); expected the format {expected_format(granularity)}"
        ) from exc


def period_containing(granularity: str, day: date) -> Period:
    """The period at ``granularity`` that contains ``day``."""
    _check_granularity(granularity)
    if granularity == "day":
        return Period(day, day, day.isoformat())
    if granularity == "week":
        year, week, _ = day.isocalendar()
        return parse_period("week", f"{year:04d}-W{week:02d}")
    if granularity == "month":
        return parse_period("month", f"{day.year:04d}-{day.month:02d}")
    if granularity == "quarter":
        return parse_period("quarter", f"{day.year:04d}-Q{(day.month - 1) // 3 + 1}")
    return parse_period("year", f"{day.year:04d}")
