"""Timeframe periods: parsing, normalisation, ISO weeks, boundaries, exact-match scoring."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grading.scoring.outcome import (
    GRANULARITIES,
    Period,
    parse_period,
    period_containing,
    period_offset,
    score_timeframe,
)


@pytest.mark.parametrize(
    ("granularity", "text", "label", "start", "end"),
    [
        ("year", "2026", "2026", dt.date(2026, 1, 1), dt.date(2026, 12, 31)),
        ("quarter", "2026-Q3", "2026-Q3", dt.date(2026, 7, 1), dt.date(2026, 9, 30)),
        ("quarter", " 2026-q1 ", "2026-Q1", dt.date(2026, 1, 1), dt.date(2026, 3, 31)),
        ("month", "2026-07", "2026-07", dt.date(2026, 7, 1), dt.date(2026, 7, 31)),
        ("month", "2028-02", "2028-02", dt.date(2028, 2, 1), dt.date(2028, 2, 29)),
        ("month", "2026-12", "2026-12", dt.date(2026, 12, 1), dt.date(2026, 12, 31)),
        ("week", "2026-W28", "2026-W28", dt.date(2026, 7, 6), dt.date(2026, 7, 12)),
        ("week", "2026-w01", "2026-W01", dt.date(2025, 12, 29), dt.date(2026, 1, 4)),
        ("week", "2026-W53", "2026-W53", dt.date(2026, 12, 28), dt.date(2027, 1, 3)),
        ("day", "2026-07-15", "2026-07-15", dt.date(2026, 7, 15), dt.date(2026, 7, 15)),
        ("day", "2028-02-29", "2028-02-29", dt.date(2028, 2, 29), dt.date(2028, 2, 29)),
    ],
)
def test_parse_period(granularity: str, text: str, label: str, start: dt.date, end: dt.date) -> None:
    period = parse_period(granularity, text)
    assert period.label == label
    assert str(period) == label
    assert (period.start, period.end) == (start, end)
    assert period.granularity == granularity


@pytest.mark.parametrize(
    ("granularity", "text", "message"),
    [
        ("year", "26", "not a valid year period: expected YYYY"),
        ("year", "2026-07", "not a valid year period"),
        ("quarter", "2026-Q5", "expected YYYY-Qn"),
        ("quarter", "2026-3", "not a valid quarter period"),
        ("month", "2026-13", "expected YYYY-MM"),
        ("month", "2026-7", "not a valid month period"),
        ("week", "2026-28", "ISO 8601 week"),
        ("week", "2025-W53", "not a valid week period"),  # 2025 has 52 ISO weeks
        ("week", "2026-W00", "not a valid week period"),
        ("day", "2026-02-30", "not a valid day period"),
        ("day", "2026/07/15", "expected YYYY-MM-DD"),
        ("day", "2026-07", "not a valid day period"),
        ("day", "0000-01-01", "not a valid day period"),
    ],
)
def test_parse_period_errors_are_clear(granularity: str, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_period(granularity, text)


def test_parse_period_rejects_unknown_granularity_and_non_strings() -> None:
    with pytest.raises(ValueError, match="unknown timeframe granularity 'decade'"):
        parse_period("decade", "2020")
    with pytest.raises(ValueError, match="must be a string"):
        parse_period("year", 2026)  # type: ignore[arg-type]


def test_granularities() -> None:
    assert GRANULARITIES == ("day", "week", "month", "quarter", "year")


def test_period_containing_iso_week_across_year_boundary() -> None:
    assert period_containing("week", dt.date(2024, 12, 30)).label == "2025-W01"
    assert period_containing("week", dt.date(2027, 1, 1)).label == "2026-W53"
    assert period_containing("quarter", dt.date(2026, 11, 5)).label == "2026-Q4"
    assert period_containing("day", dt.datetime(2026, 7, 15, 23, 0)).label == "2026-07-15"


def test_score_timeframe_exact_match() -> None:
    assert score_timeframe("month", "2026-07", "2026-07").correct is True
    score = score_timeframe("month", "2026-09", "2026-07")
    assert score.correct is False
    assert score.offset == 2
    assert score_timeframe("quarter", "2026-q3", "2026-Q3").correct is True  # normalised
    assert score_timeframe("week", "2026-W01", parse_period("week", "2025-W52")).offset == 1
    assert score_timeframe("year", "2025", "2026").offset == -1
    assert score_timeframe("day", "2026-07-15", "2026-07-10").offset == 5
    assert score_timeframe("quarter", "2027-Q1", "2026-Q3").offset == 2


def test_score_timeframe_granularity_mismatch() -> None:
    with pytest.raises(ValueError, match="expected a month"):
        score_timeframe("month", "2026-07", Period("year", dt.date(2026, 1, 1), dt.date(2026, 12, 31)))
    with pytest.raises(ValueError):
        period_offset(parse_period("year", "2026"), parse_period("month", "2026-01"))


days = st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2200, 12, 31))


@given(st.sampled_from(GRANULARITIES), days)
def test_period_round_trip(granularity: str, day: dt.date) -> None:
    period = period_containing(granularity, day)
    assert period.contains(day)
    assert period.start <= period.end
    assert parse_period(granularity, period.label) == period
    assert score_timeframe(granularity, period.label, period.label).correct is True


@given(st.sampled_from(GRANULARITIES), days, days)
def test_offset_sign_follows_dates(granularity: str, a: dt.date, b: dt.date) -> None:
    pa, pb = period_containing(granularity, a), period_containing(granularity, b)
    offset = period_offset(pa, pb)
    assert (offset == 0) == (pa == pb)
    assert (offset > 0) == (pa.start > pb.start)
