"""Binary outcome scoring, Brier Index and binary market edge."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from grading.scoring.outcome import (
    LOG_CLIP,
    binary_call,
    brier_index,
    called_right,
    clip_probability,
    log_score,
    market_edge_binary,
    score_binary,
    validate_probability,
)

probabilities = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
outcomes = st.sampled_from([True, False, 0, 1])


def test_log_clip_constant() -> None:
    assert LOG_CLIP == 1e-6
    assert clip_probability(0.0) == 1e-6
    assert clip_probability(1.0) == 1.0 - 1e-6
    assert clip_probability(0.3) == 0.3


@pytest.mark.parametrize(
    ("p", "y", "correct", "brier", "log"),
    [
        (0.8, True, True, 0.04, math.log(0.8)),
        (0.8, False, False, 0.64, math.log(0.2)),
        (0.2, 0, True, 0.04, math.log(0.8)),
        (0.3, 1, False, 0.49, math.log(0.3)),
    ],
)
def test_score_binary_examples(p: float, y: bool | int, correct: bool, brier: float, log: float) -> None:
    score = score_binary(p, y)
    assert score.correct is correct
    assert score.brier == pytest.approx(brier)
    assert score.log_score == pytest.approx(log)


def test_half_makes_no_call_and_is_never_correct() -> None:
    # At the decision boundary the forecast leans to neither answer: it is not counted correct
    # whatever happens (its Brier 0.25 and log score ln 0.5 still say how good it was).
    assert score_binary(0.5, True).predicted is None
    assert score_binary(0.5, True).correct is False
    assert score_binary(0.5, False).correct is False
    assert score_binary(0.5, True).brier == 0.25
    # Within a millionth of 0.5 is still no call; beyond it, a call.
    assert score_binary(0.5000001, True).correct is False
    assert score_binary(0.499, False).correct is True
    assert score_binary(0.501, True).correct is True
    assert score_binary(0.501, True).predicted is True


def test_called_right_is_the_same_rule_on_arrays() -> None:
    p = np.array([0.2, 0.5, 0.8, 0.5, 0.7])
    y = np.array([0.0, 1.0, 1.0, 0.0, 0.0])
    assert called_right(p, y).tolist() == [True, False, True, False, False]
    assert [score_binary(float(a), int(b)).correct for a, b in zip(p, y, strict=True)] == called_right(p, y).tolist()
    assert binary_call(0.5) is None and binary_call(0.51) is True and binary_call(0.49) is False


def test_probability_one_and_zero_are_clipped_in_the_log_score() -> None:
    assert score_binary(1.0, True).brier == 0.0
    assert score_binary(1.0, True).log_score == pytest.approx(math.log(1 - 1e-6))
    assert score_binary(1.0, False).brier == 1.0
    assert score_binary(1.0, False).log_score == pytest.approx(math.log(1e-6))
    assert score_binary(0.0, True).log_score == pytest.approx(math.log(1e-6))
    assert score_binary(0.0, False).log_score == pytest.approx(math.log(1 - 1e-6))
    assert math.isfinite(score_binary(0.0, True).log_score)


@pytest.mark.parametrize("bad", [-0.01, 1.01, float("nan"), float("inf"), "0.5", None, True])
def test_invalid_probability_rejected(bad: object) -> None:
    with pytest.raises(ValueError):
        score_binary(bad, True)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [2, -1, "yes", None, 0.5])
def test_invalid_outcome_rejected(bad: object) -> None:
    with pytest.raises(ValueError, match="binary outcome"):
        score_binary(0.5, bad)  # type: ignore[arg-type]


def test_validate_probability_names_the_field() -> None:
    with pytest.raises(ValueError, match="market probability"):
        validate_probability(3.0, "market probability")


def test_log_score_helper() -> None:
    assert log_score(0.25) == pytest.approx(math.log(0.25))
    assert log_score(0.0) == pytest.approx(math.log(1e-6))


def test_brier_index() -> None:
    assert brier_index(0.0) == 100.0
    assert brier_index(0.25) == pytest.approx(50.0)
    assert brier_index(1.0) == 0.0
    with pytest.raises(ValueError):
        brier_index(-0.1)


def test_market_edge_binary() -> None:
    assert market_edge_binary(0.8, True, 0.6) == pytest.approx(math.log(0.8) - math.log(0.6))
    assert market_edge_binary(0.8, False, 0.6) == pytest.approx(math.log(0.2) - math.log(0.4))
    assert market_edge_binary(0.6, True, 0.6) == pytest.approx(0.0)
    assert market_edge_binary(0.8, True, None) is None
    # Market at 0 or 1 is clipped like the forecast.
    assert market_edge_binary(0.5, True, 0.0) == pytest.approx(math.log(0.5) - math.log(1e-6))
    with pytest.raises(ValueError):
        market_edge_binary(0.5, True, 1.5)


@given(probabilities, outcomes)
def test_brier_in_unit_interval_and_log_score_non_positive(p: float, y: bool | int) -> None:
    score = score_binary(p, y)
    assert 0.0 <= score.brier <= 1.0
    assert score.log_score <= 0.0
    assert math.log(1e-6) - 1e-12 <= score.log_score


@given(probabilities, outcomes)
def test_perfect_forecast_scores_best(p: float, y: bool | int) -> None:
    perfect = score_binary(1.0 if y else 0.0, y)
    other = score_binary(p, y)
    assert perfect.correct
    assert perfect.brier <= other.brier
    assert perfect.log_score >= other.log_score


@given(probabilities, outcomes, probabilities)
def test_market_edge_is_difference_of_log_scores(p: float, y: bool | int, m: float) -> None:
    edge = market_edge_binary(p, y, m)
    assert edge is not None
    expected = score_binary(p, y).log_score - score_binary(m, y).log_score
    assert edge == pytest.approx(expected)
