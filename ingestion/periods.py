"""Calendar periods for timeframe questions: parsing and normalising period strings.

Pure module (no Django imports): forecast validation, outcome validation and grading all share it,
so a period means the same thing everywhere.

Formats by granularity (canonical labels; parsing ignores surrounding whitespace and the case of
``W``/``Q``): day ``YYYY-MM-DD`` (``2026-07-15``); week ``YYYY-Www``, an ISO 8601 week, Monday to
Sunday (``2026-W28``); month ``YYYY-MM`` (``2026-07``); quarter ``YYYY-Qn`` (``2026-Q3``); year
``YYYY`` (``2026``).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Final, Literal

Granularity = Literal["day", "week", "month", "quarter", "year"]
GRANULARITIES: Final[tuple[Granularity, ...]] = ("day", "week", "month", "quarter", "year")

_FORMATS: Final[dict[str, tuple[re.Pattern[str], str]]] = {
    "year": (re.compile(r"(\d{4})"), "YYYY (e.g. 2026)"),
    "quarter": (re.compile(r"(\d{4})-Q([1-4])"), "YYYY-Qn with n in 1-4 (e.g. 2026-Q3)"),
    "month": (re.compile(r"(\d{4})-(0[1-9]|1[0-2])"), "YYYY-MM (e.g. 2026-07)"),
    "week": (re.compile(r"(\d{4})-W(\d{2})"), "YYYY-Www, an ISO 8601 week (e.g. 2026-W28)"),
    "day": (re.compile(r"(\d{4})-(\d{2})-(\d{2})"), "YYYY-MM-DD (e.g. 2026-07-15)"),
}


@dataclass(frozen=True, slots=True)
class Period:
    """A calendar period; ``start`` and ``end`` are inclusive dates."""

    granularity: Granularity
    start: dt.date
    end: dt.date

    @property
    def label(self) -> str:
        """Canonical label: ``2026``, ``2026-Q3``, ``2026-07``, ``2026-W28`` or ``2026-07-15``."""
        s = self.start
        if self.granularity == "year":
            return f"{s.year:04d}"
        if self.granularity == "quarter":
            return f"{s.year:04d}-Q{(s.month - 1) // 3 + 1}"
        if self.granularity == "month":
            return f"{s.year:04d}-{s.month:02d}"
        if self.granularity == "week":
            iso = s.isocalendar()
            return f"{iso.year:04d}-W{iso.week:02d}"
        return s.isoformat()

    def contains(self, day: dt.date) -> bool:
        return self.start <= day <= self.end

    def __str__(self) -> str:
        return self.label


def _check_granularity(granularity: str) -> Granularity:
    for g in GRANULARITIES:
        if granularity == g:
            return g
    raise ValueError(f"unknown timeframe granularity {granularity!r}: expected one of {', '.join(GRANULARITIES)}")


def _month_end(year: int, month: int) -> dt.date:
    if month == 12:
        return dt.date(year, 12, 31)
    return dt.date(year, month + 1, 1) - dt.timedelta(days=1)


def period_containing(granularity: str, day: dt.date) -> Period:
    """The period of the given granularity that contains ``day``."""
    g = _check_granularity(granularity)
    if isinstance(day, dt.datetime):
        day = day.date()
    if g == "day":
        return Period(g, day, day)
    if g == "week":
        start = day - dt.timedelta(days=day.isoweekday() - 1)
        return Period(g, start, start + dt.timedelta(days=6))
    if g == "month":
        return Period(g, dt.date(day.year, day.month, 1), _month_end(day.year, day.month))
    if g == "quarter":
        first = 3 * ((day.month - 1) // 3) + 1
        return Period(g, dt.date(day.year, first, 1), _month_end(day.year, first + 2))
    return Period(g, dt.date(day.year, 1, 1), dt.date(day.year, 12, 31))


def parse_period(granularity: str, text: str) -> Period:
    """Parse a period label of the given granularity; raise ``ValueError`` with the expected format.

    Accepted (surrounding whitespace ignored, ``q``/``w`` case-insensitive): year ``2026``,
    quarter ``2026-Q3``, month ``2026-07``, week ``2026-W28`` (ISO 8601 week-numbering year and week;
    week 53 only in years that have one), day ``2026-07-15``.
    """
    g = _check_granularity(granularity)
    pattern, expected = _FORMATS[g]
    if not isinstance(text, str):
        raise ValueError(f"{g} period must be a string in the format {expected}, got {type(text).__name__}")
    match = pattern.fullmatch(text.strip().upper())
    if match is None:
        raise ValueError(f"{text!r} is not a valid {g} period: expected {expected}")
    parts = [int(x) for x in match.groups()]
    try:
        if g == "year":
            start = dt.date(parts[0], 1, 1)
        elif g == "quarter":
            start = dt.date(parts[0], 3 * (parts[1] - 1) + 1, 1)
        elif g == "month":
            start = dt.date(parts[0], parts[1], 1)
        elif g == "week":
            start = dt.date.fromisocalendar(parts[0], parts[1], 1)
        else:
            start = dt.date(parts[0], parts[1], parts[2])
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a valid {g} period ({exc}): expected {expected}") from None
    return period_containing(g, start)


def period_offset(predicted: Period, resolved: Period) -> int:
    """Signed number of periods from ``resolved`` to ``predicted`` (0 = same period, 1 = one too late)."""
    if predicted.granularity != resolved.granularity:
        raise ValueError("periods have different granularities")
    g = predicted.granularity
    a, b = predicted.start, resolved.start
    if g == "day":
        return (a - b).days
    if g == "week":
        return (a - b).days // 7
    if g == "month":
        return (a.year * 12 + a.month) - (b.year * 12 + b.month)
    if g == "quarter":
        return (a.year * 4 + (a.month - 1) // 3) - (b.year * 4 + (b.month - 1) // 3)
    return a.year - b.year
