"""Multiple-choice scoring: validation, argmax and tie rule (no call), the halved Brier, reduced rule, market edge."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grading.scoring.outcome import (
    market_edge_multiple_choice,
    score_binary,
    score_multiple_choice,
    select_option,
    validate_probability_vector,
)

OPTIONS = ["A", "B", "C"]


def test_scores_full_vector() -> None:
    score = score_multiple_choice({"A": 0.5, "B": 0.3, "C": 0.2}, OPTIONS, "B")
    assert score.predicted_option == "A"
    assert score.correct is False
    # Half the squared error summed over the options: on [0, 1] like the binary Brier.
    assert score.brier == pytest.approx((0.5**2 + 0.7**2 + 0.2**2) / 2)
    assert score.log_score == pytest.approx(math.log(0.3))
    # Reduced rule (WorldReasoner F.1): selected option wrong -> c^2 and ln(1 - c), c = 0.5.
    assert score.reduced_brier == pytest.approx(0.25)
    assert score.reduced_log_score == pytest.approx(math.log(0.5))


def test_reduced_rule_when_correct() -> None:
    score = score_multiple_choice({"A": 0.7, "B": 0.2, "C": 0.1}, OPTIONS, "A")
    assert score.correct is True
    assert score.reduced_brier == pytest.approx(0.09)
    assert score.reduced_log_score == pytest.approx(math.log(0.7))
    assert score.brier == pytest.approx((0.09 + 0.04 + 0.01) / 2)


def test_a_tie_for_the_top_option_makes_no_call() -> None:
    probs = {"A": 0.2, "B": 0.4, "C": 0.4}
    assert select_option(probs, OPTIONS) is None
    assert select_option(probs, ["C", "B", "A"]) is None
    for resolved in OPTIONS:
        score = score_multiple_choice(probs, OPTIONS, resolved)
        assert score.correct is False
        assert score.predicted_option is None
        assert score.tied_options == ("B", "C")
    # The option order never decides: a uniform forecast is right on no outcome.
    uniform = {"A": 1 / 3, "B": 1 / 3, "C": 1 / 3}
    assert not any(score_multiple_choice(uniform, OPTIONS, o).correct for o in OPTIONS)
    # A uniform vector rounded to six decimals, the first option taking the remainder, is still a tie.
    rounded = {"A": 0.333334, "B": 0.333333, "C": 0.333333}
    assert score_multiple_choice(rounded, OPTIONS, "A").correct is False
    assert score_multiple_choice(rounded, OPTIONS, "A").tied_options == ("A", "B", "C")
    assert score_multiple_choice({"A": 0.2, "B": 0.41, "C": 0.39}, OPTIONS, "B").correct is True


def test_two_options_give_the_binary_brier() -> None:
    for p in (0.0, 0.3, 0.5, 0.9):
        for yes in (True, False):
            mc = score_multiple_choice({"Yes": p, "No": 1 - p}, ["Yes", "No"], "Yes" if yes else "No")
            assert mc.brier == pytest.approx(score_binary(p, yes).brier)


def test_probability_zero_on_resolved_option_is_clipped() -> None:
    score = score_multiple_choice({"A": 1.0, "B": 0.0, "C": 0.0}, OPTIONS, "C")
    assert score.log_score == pytest.approx(math.log(1e-6))
    assert score.brier == pytest.approx(1.0)
    assert score.reduced_log_score == pytest.approx(math.log(1e-6))
    assert score.reduced_brier == pytest.approx(1.0)


def test_near_one_sum_is_renormalised() -> None:
    probs = validate_probability_vector({"A": 0.333, "B": 0.333, "C": 0.333}, OPTIONS)
    assert math.fsum(probs.values()) == pytest.approx(1.0)
    assert probs["A"] == pytest.approx(1 / 3)
    assert list(probs) == OPTIONS


@pytest.mark.parametrize(
    ("probs", "message"),
    [
        ({"A": 0.5, "B": 0.5}, "missing probabilities for options: 'C'"),
        ({"A": 0.5, "B": 0.3, "C": 0.1, "D": 0.1}, "unknown options: 'D'"),
        ({"A": 0.5, "B": 0.3, "C": 0.1}, "must sum to 1"),
        ({"A": 1.2, "B": -0.1, "C": -0.1}, "between 0 and 1"),
        ({"A": "x", "B": 0.5, "C": 0.5}, "must be a number"),
        ({"A": float("nan"), "B": 0.5, "C": 0.5}, "finite"),
    ],
)
def test_invalid_vectors_rejected(probs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        score_multiple_choice(probs, OPTIONS, "A")  # type: ignore[arg-type]


def test_all_problems_reported_at_once() -> None:
    with pytest.raises(ValueError) as info:
        validate_probability_vector({"A": 2.0, "D": 0.1}, OPTIONS)
    text = str(info.value)
    assert "missing" in text and "unknown options" in text and "between 0 and 1" in text


def test_resolved_must_be_an_option_and_options_unique() -> None:
    with pytest.raises(ValueError, match="not one of"):
        score_multiple_choice({"A": 1.0, "B": 0.0, "C": 0.0}, OPTIONS, "Z")
    with pytest.raises(ValueError, match="unique"):
        validate_probability_vector({"A": 1.0}, ["A", "A"])
    with pytest.raises(ValueError, match="no options"):
        validate_probability_vector({}, [])


def test_market_edge_multiple_choice() -> None:
    forecast = {"A": 0.6, "B": 0.3, "C": 0.1}
    market = {"A": 0.4, "B": 0.4, "C": 0.2}
    edge = market_edge_multiple_choice(forecast, OPTIONS, "A", market)
    assert edge == pytest.approx(math.log(0.6) - math.log(0.4))
    # Market vectors are normalised to implied probabilities (here they sum to 1.25).
    overround = {"A": 0.5, "B": 0.5, "C": 0.25}
    edge = market_edge_multiple_choice(forecast, OPTIONS, "A", overround)
    assert edge == pytest.approx(math.log(0.6) - math.log(0.4))
    assert market_edge_multiple_choice(forecast, OPTIONS, "A", None) is None
    assert market_edge_multiple_choice(forecast, OPTIONS, "A", {"A": 0.5, "B": 0.5}) is None
    assert market_edge_multiple_choice(forecast, OPTIONS, "A", {"A": 0.0, "B": 0.0, "C": 0.0}) is None


@st.composite
def vectors(draw: st.DrawFn) -> tuple[dict[str, float], list[str], str]:
    n = draw(st.integers(min_value=2, max_value=6))
    options = [f"o{i}" for i in range(n)]
    weights = draw(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=n, max_size=n))
    total = sum(weights)
    if total == 0:
        weights = [1.0] * n
        total = float(n)
    probs = {o: w / total for o, w in zip(options, weights, strict=True)}
    resolved = draw(st.sampled_from(options))
    return probs, options, resolved


@given(vectors())
def test_multiple_choice_bounds(case: tuple[dict[str, float], list[str], str]) -> None:
    probs, options, resolved = case
    score = score_multiple_choice(probs, options, resolved)
    assert 0.0 <= score.brier <= 1.0 + 1e-12
    assert score.log_score <= 0.0
    assert 0.0 <= score.reduced_brier <= 1.0
    assert score.reduced_log_score <= 0.0
    assert score.correct == (score.predicted_option == resolved)


@given(vectors())
def test_perfect_multiple_choice_forecast_scores_best(case: tuple[dict[str, float], list[str], str]) -> None:
    probs, options, resolved = case
    perfect = score_multiple_choice({o: 1.0 if o == resolved else 0.0 for o in options}, options, resolved)
    other = score_multiple_choice(probs, options, resolved)
    assert perfect.correct
    assert perfect.brier == 0.0
    assert perfect.brier <= other.brier
    assert perfect.log_score >= other.log_score
    assert perfect.reduced_brier <= other.reduced_brier
