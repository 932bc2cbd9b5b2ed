"""Quantity scoring: points within 10%, intervals, quantiles (pinball loss, outer range)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grading.scoring.outcome import POINT_RELATIVE_TOLERANCE, score_interval, score_point, score_quantiles

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_point_tolerance_constant() -> None:
    assert POINT_RELATIVE_TOLERANCE == 0.10


@pytest.mark.parametrize(
    ("value", "resolved", "correct"),
    [
        (100.0, 100.0, True),
        (110.0, 100.0, True),  # exactly 10% above: inclusive
        (90.0, 100.0, True),  # exactly 10% below
        (110.001, 100.0, False),
        (89.999, 100.0, False),
        (-110.0, -100.0, True),  # relative to |v| for negative values
        (-89.0, -100.0, False),
        (0.33, 0.3, True),
        (1.1e9, 1e9, True),
    ],
)
def test_point_within_ten_percent(value: float, resolved: float, correct: bool) -> None:
    assert score_point(value, resolved).correct is correct


def test_point_errors_reported() -> None:
    score = score_point(120.0, 100.0)
    assert score.kind == "point"
    assert score.absolute_error == pytest.approx(20.0)
    assert score.relative_error == pytest.approx(0.2)


def test_point_against_zero_requires_exact_match_by_default() -> None:
    assert score_point(0.0, 0.0).correct is True
    assert score_point(1e-9, 0.0).correct is False
    assert score_point(0.0, 0.0).relative_error is None
    assert score_point(0.05, 0.0, zero_abs_tol=0.1).correct is True


def test_point_rejects_non_finite() -> None:
    with pytest.raises(ValueError):
        score_point(float("nan"), 1.0)
    with pytest.raises(ValueError):
        score_point(1.0, float("inf"))


def test_interval_contains_is_inclusive() -> None:
    assert score_interval(10.0, 20.0, 10.0).correct is True
    assert score_interval(10.0, 20.0, 20.0).correct is True
    assert score_interval(10.0, 20.0, 20.0001).correct is False
    assert score_interval(5.0, 5.0, 5.0).correct is True
    assert score_interval(10.0, 20.0, 15.0).interval_width == 10.0
    with pytest.raises(ValueError, match="above upper"):
        score_interval(20.0, 10.0, 15.0)


def test_interval_score_with_coverage() -> None:
    # 80% interval [10, 20], value 25: width 10 + 2/0.2 * 5 = 60.
    assert score_interval(10.0, 20.0, 25.0, coverage=0.8).interval_score == pytest.approx(60.0)
    assert score_interval(10.0, 20.0, 5.0, coverage=0.8).interval_score == pytest.approx(60.0)
    assert score_interval(10.0, 20.0, 15.0, coverage=0.8).interval_score == pytest.approx(10.0)
    assert score_interval(10.0, 20.0, 15.0).interval_score is None
    with pytest.raises(ValueError, match="coverage"):
        score_interval(10.0, 20.0, 15.0, coverage=1.0)


def test_quantiles_pinball_hand_computed() -> None:
    quantiles = {0.1: 10.0, 0.5: 20.0, 0.9: 30.0}
    score = score_quantiles(quantiles, 25.0)
    # q=0.1: 0.1*(25-10)=1.5; q=0.5: 0.5*(25-20)=2.5; q=0.9: (1-0.9)*(30-25)=0.5 -> mean 1.5
    assert score.pinball_loss == pytest.approx(1.5)
    assert score.correct is True
    assert score.interval_width == 20.0
    outside = score_quantiles(quantiles, 40.0)
    # 0.1*30 + 0.5*20 + 0.9*10 = 3 + 10 + 9 = 22 -> mean 22/3
    assert outside.pinball_loss == pytest.approx(22 / 3)
    assert outside.correct is False


def test_quantiles_outer_range_prefers_10_90() -> None:
    quantiles = {0.05: 0.0, 0.1: 10.0, 0.5: 20.0, 0.9: 30.0, 0.95: 100.0}
    assert score_quantiles(quantiles, 50.0).correct is False  # outside [q10, q90] although inside [q05, q95]
    assert score_quantiles({0.25: 10.0, 0.75: 20.0}, 15.0).correct is True  # outermost given levels
    assert score_quantiles({0.5: 10.0}, 10.0).correct is True


@pytest.mark.parametrize(
    ("quantiles", "message"),
    [
        ({}, "at least one"),
        ({0.0: 1.0}, "strictly between 0 and 1"),
        ({1.0: 1.0}, "strictly between 0 and 1"),
        ({0.1: 5.0, 0.9: 1.0}, "quantiles cross"),
        ({0.5: float("nan")}, "finite"),
    ],
)
def test_invalid_quantiles(quantiles: dict[float, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        score_quantiles(quantiles, 1.0)


@st.composite
def quantile_sets(draw: st.DrawFn) -> dict[float, float]:
    levels = draw(st.lists(st.sampled_from([0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95]), min_size=1, unique=True))
    values = sorted(draw(st.lists(finite, min_size=len(levels), max_size=len(levels))))
    return dict(zip(sorted(levels), values, strict=True))


@given(quantile_sets(), finite)
def test_pinball_non_negative_and_perfect_is_zero(quantiles: dict[float, float], value: float) -> None:
    score = score_quantiles(quantiles, value)
    assert score.pinball_loss is not None and score.pinball_loss >= 0.0
    perfect = score_quantiles(dict.fromkeys(quantiles, value), value)
    assert perfect.pinball_loss == 0.0
    assert perfect.correct is True


@given(finite, finite)
def test_point_perfect_is_correct(value: float, other: float) -> None:
    assert score_point(value, value).correct is True
    assert score_point(value, value).absolute_error == 0.0
