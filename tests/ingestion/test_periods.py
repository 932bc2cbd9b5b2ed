"""Period strings for timeframe questions: formats, normalisation, errors naming the format."""

from __future__ import annotations

from datetime import date

import pytest

from ingestion.periods import parse_period, period_containing


@pytest.mark.parametrize(
    ("granularity", "text", "start", "end", "label"),
    [
        ("day", "2026-07-15", date(2026, 7, 15), date(2026, 7, 15), "2026-07-15"),
        ("week", "2026-W28", date(2026, 7, 6), date(2026, 7, 12), "2026-W28"),
        ("week", " 2026-w01 ", date(2025, 12, 29), date(2026, 1, 4), "2026-W01"),
        ("week", "2026-W53", date(2026, 12, 28), date(2027, 1, 3), "2026-W53"),
        ("month", "2026-02", date(2026, 2, 1), date(2026, 2, 28), "2026-02"),
        ("month", "2024-02", date(2024, 2, 1), date(2024, 2, 29), "2024-02"),
        ("quarter", "2026-q3", date(2026, 7, 1), date(2026, 9, 30), "2026-Q3"),
        ("year", "2026", date(2026, 1, 1), date(2026, 12, 31), "2026"),
    ],
)
def test_parse_valid(granularity: str, text: str, start: date, end: date, label: str) -> None:
    period = parse_period(granularity, text)
    assert (period.start, period.end, period.label) == (start, end, label)
    assert period_containing(granularity, start) == period
    assert period_containing(granularity, end) == period


@pytest.mark.parametrize(
    ("granularity", "text", "expected"),
    [
        ("day", "2026-07", "YYYY-MM-DD"),
        ("day", "2026-02-30", "YYYY-MM-DD"),
        ("day", "15/07/2026", "YYYY-MM-DD"),
        ("week", "2026-07-15", "YYYY-Www"),
        ("week", "2025-W53", "YYYY-Www"),  # 2025 has 52 ISO weeks
        ("week", "2026-W00", "YYYY-Www"),
        ("month", "2026-13", "YYYY-MM"),
        ("month", "2026", "YYYY-MM"),
        ("quarter", "2026-Q5", "YYYY-Qn"),
        ("quarter", "2026-07", "YYYY-Qn"),
        ("year", "2026-Q3", "YYYY"),
        ("year", "26", "YYYY"),
    ],
)
def test_parse_invalid_names_format(granularity: str, text: str, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        parse_period(granularity, text)


def test_non_text_and_unknown_granularity() -> None:
    with pytest.raises(ValueError, match="YYYY-MM"):
        parse_period("month", 202607)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown timeframe granularity"):
        parse_period("decade", "2020s")
