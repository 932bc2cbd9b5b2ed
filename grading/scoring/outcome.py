"""Outcome scoring rules (WorldReasoner, Appendix F.1; docs/methods.md).

All functions are pure; invalid input raises :class:`ValueError` with a message naming the problem,
so the API layer can reuse the validators.

Conventions
-----------
* Probabilities are plain floats in ``[0, 1]``; ``NaN``/``inf`` are rejected.
* Log scores use the natural logarithm of the probability given to what happened, after clipping
  that probability to ``[LOG_CLIP, 1 - LOG_CLIP]`` (so the worst log score is ``ln(1e-6) ~= -13.8``
  and the best is ``ln(1 - 1e-6) ~= -1e-6``). Higher is better.
* Brier scores: lower is better, and every Brier lies in ``[0, 1]``. Binary: ``(p - y)^2``.
  Multiple choice: half the squared error summed over the options. Brier's own definition (1950)
  is the sum, on ``[0, 2]``; halved, it is on the binary scale, and for two options it equals the
  binary Brier exactly, so one Brier means the same on every question type and page.
* A *call* is right only when the forecast leans to what happened: binary ``p > 0.5`` on YES or
  ``p < 0.5`` on NO. A forecast at the decision boundary makes no call and is **not correct**:
  ``p = 0.5`` (within ``TIE_TOLERANCE``), or a tie for the highest probability in multiple choice.
  (Brier introduced his score because a right/wrong count says nothing of such forecasts; Metaculus
  gives a 50% forecast a baseline score of 0, neither credit nor penalty.)
* Multiple choice: the forecast is a full probability vector over the question's options. Its sum
  must be within ``PROBABILITY_SUM_TOLERANCE`` of 1; it is then renormalised to sum exactly 1
  before scoring. The hard prediction is the option with the highest probability; none when two or
  more options share it.
* The paper's *reduced* multiple-choice rule (F.1) is also reported: with ``c`` the highest
  probability, Brier is ``(1 - c)^2`` if the selection is correct else ``c^2``, and the log score is
  ``ln c`` if correct else ``ln(1 - c)`` (clipped as above); a tie is not correct.
* Quantity: a point is correct when ``|x - v| <= 10% * |v|`` (inclusive). When the resolved value
  ``v`` is 0 a relative tolerance is meaningless, so the point is correct only when
  ``|x| <= zero_abs_tol`` (default 0: exact). Intervals are closed. Quantile forecasts get the
  pinball loss averaged over the given levels, and are correct when the 10%-90% range contains the
  value (the outermost given levels when 0.1 or 0.9 is missing).
* Timeframe: periods are normalised to canonical labels (``2026``, ``2026-Q3``, ``2026-07``,
  ``2026-W28`` (ISO 8601 week), ``2026-07-15``) and compared exactly.
* Market edge: forecast log score minus the market's log score at forecast time (positive = the
  forecast beat the market); ``None`` when no price is available.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ingestion.periods import GRANULARITIES, Granularity, Period, parse_period, period_containing, period_offset

__all__ = [
    "GRANULARITIES",
    "LOG_CLIP",
    "POINT_RELATIVE_TOLERANCE",
    "PROBABILITY_SUM_TOLERANCE",
    "TIE_TOLERANCE",
    "BinaryScore",
    "Granularity",
    "MultipleChoiceScore",
    "Period",
    "QuantityScore",
    "TimeframeScore",
    "binary_call",
    "brier_index",
    "called_right",
    "clip_probability",
    "log_score",
    "market_edge_binary",
    "market_edge_multiple_choice",
    "parse_period",
    "period_containing",
    "period_offset",
    "score_binary",
    "score_interval",
    "score_multiple_choice",
    "score_point",
    "score_quantiles",
    "score_timeframe",
    "select_option",
    "top_options",
    "validate_probability",
    "validate_probability_vector",
]

LOG_CLIP: Final = 1e-6
"""Probabilities are clipped to ``[LOG_CLIP, 1 - LOG_CLIP]`` before taking logarithms."""

PROBABILITY_SUM_TOLERANCE: Final = 1e-2
"""A multiple-choice vector must sum to 1 within this absolute tolerance (it is then renormalised)."""

POINT_RELATIVE_TOLERANCE: Final = 0.10
"""A quantity point forecast is correct within this relative distance of the resolved value."""

TIE_TOLERANCE: Final = 1e-6
"""Probabilities this close to the decision boundary (0.5; the top option's) count as a tie: no call.
One millionth, the precision the API asks a forecast's probabilities to sum to 1 with: a uniform vector
rounded to six decimals (0.333334, 0.333333, 0.333333) is still a tie."""
# The tolerance, and the rounding error of the difference it is compared with.
_TIE: Final = TIE_TOLERANCE + 1e-12

_REL_EPS: Final = 1e-12  # guards inclusive comparisons against float rounding


# --------------------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------------------


def _finite(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {type(value).__name__}")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return result


def validate_probability(p: float, name: str = "probability") -> float:
    """Return ``p`` as a float after checking it is a finite number in ``[0, 1]``."""
    value = _finite(p, name)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be between 0 and 1, got {value!r}")
    return value


def _outcome(y: bool | int) -> int:
    if isinstance(y, bool):
        return int(y)
    if isinstance(y, int) and y in (0, 1):
        return y
    raise ValueError(f"binary outcome must be True/False or 0/1, got {y!r}")


def clip_probability(p: float) -> float:
    """Clip ``p`` to ``[LOG_CLIP, 1 - LOG_CLIP]``."""
    return min(max(p, LOG_CLIP), 1.0 - LOG_CLIP)


def log_score(p: float) -> float:
    """Natural log of the (clipped) probability given to the realised outcome; always ``<= 0``."""
    return math.log(clip_probability(validate_probability(p)))


def validate_probability_vector(probabilities: Mapping[str, float], options: Sequence[str]) -> dict[str, float]:
    """Check a full multiple-choice vector and return it renormalised, in option order.

    Requires: ``options`` non-empty and unique; exactly one probability per option (no missing, no
    extra keys); each value a finite number in ``[0, 1]``; the sum within
    ``PROBABILITY_SUM_TOLERANCE`` of 1. All problems are reported in one ``ValueError``.
    """
    if not options:
        raise ValueError("question has no options")
    if len(set(options)) != len(options):
        raise ValueError("question options must be unique")
    if not isinstance(probabilities, Mapping):
        raise ValueError("probabilities must be an object mapping each option to a probability")
    errors: list[str] = []
    option_set = set(options)
    missing = [o for o in options if o not in probabilities]
    extra = sorted(str(k) for k in probabilities if k not in option_set)
    if missing:
        errors.append(f"missing probabilities for options: {', '.join(map(repr, missing))}")
    if extra:
        errors.append(f"unknown options: {', '.join(map(repr, extra))}")
    values: dict[str, float] = {}
    for option in options:
        if option not in probabilities:
            continue
        try:
            values[option] = validate_probability(probabilities[option], f"probability of {option!r}")
        except ValueError as exc:
            errors.append(str(exc))
    if not errors:
        total = math.fsum(values.values())
        if abs(total - 1.0) > PROBABILITY_SUM_TOLERANCE:
            errors.append(f"probabilities must sum to 1 (within {PROBABILITY_SUM_TOLERANCE}), got {total:.6g}")
    if errors:
        raise ValueError("; ".join(errors))
    total = math.fsum(values.values())
    return {option: values[option] / total for option in options}


# --------------------------------------------------------------------------------------------------
# Binary
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BinaryScore:
    predicted: bool | None  # the call: True for p > 0.5, False for p < 0.5, None at 0.5 (no call)
    correct: bool  # the call matches the outcome; never at 0.5
    brier: float  # (p - y)^2, in [0, 1]
    log_score: float  # ln p(y), clipped, <= 0


def binary_call(p: float) -> bool | None:
    """The answer a probability of YES leans to: True above 0.5, False below, None at 0.5 (a tie)."""
    if abs(p - 0.5) <= _TIE:
        return None
    return p > 0.5


def called_right(p_yes: Any, outcome: Any) -> Any:
    """Whether a probability of YES leans to what happened (``outcome`` 1 for YES, 0 for NO): strictly
    above 0.5 on YES or below on NO; a probability at 0.5 is never right. Works elementwise on numpy
    arrays too, so the platform's baselines are judged by the same rule as every grade."""
    return (p_yes - 0.5) * (outcome - 0.5) > 0.5 * _TIE


def score_binary(p: float, outcome: bool | int) -> BinaryScore:
    """Score a binary forecast ``p`` = P(YES) against the resolved outcome ``y`` (True/1 = YES)."""
    prob = validate_probability(p)
    y = _outcome(outcome)
    p_y = prob if y == 1 else 1.0 - prob
    return BinaryScore(
        predicted=binary_call(prob),
        correct=bool(called_right(prob, y)),
        brier=(prob - y) ** 2,
        log_score=math.log(clip_probability(p_y)),
    )


def brier_index(mean_brier: float) -> float:
    """Leaderboard Brier Index ``100 * (1 - sqrt(Brier))`` of a (mean binary) Brier score."""
    value = _finite(mean_brier, "mean_brier")
    if value < 0:
        raise ValueError(f"mean_brier must be >= 0, got {value!r}")
    return 100.0 * (1.0 - math.sqrt(value))


# --------------------------------------------------------------------------------------------------
# Multiple choice
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MultipleChoiceScore:
    predicted_option: str | None  # argmax; None when options tie for the highest probability
    tied_options: tuple[str, ...]  # the options sharing the highest probability (empty without a tie)
    correct: bool  # the single argmax is the resolved option; never on a tie
    brier: float  # half the sum over options of (p_k - 1[k = resolved])^2, in [0, 1]
    log_score: float  # ln p(resolved), clipped
    reduced_brier: float  # paper F.1: (1 - c)^2 if correct else c^2, c = the highest probability
    reduced_log_score: float  # paper F.1: ln c if correct else ln(1 - c), clipped


def top_options(probabilities: Mapping[str, float], options: Sequence[str]) -> tuple[str, ...]:
    """The options with the highest probability (within TIE_TOLERANCE), in option order."""
    best = max(probabilities[o] for o in options)
    return tuple(o for o in options if probabilities[o] >= best - _TIE)


def select_option(probabilities: Mapping[str, float], options: Sequence[str]) -> str | None:
    """The option with the highest probability; None when two or more options share it (no call)."""
    top = top_options(probabilities, options)
    return top[0] if len(top) == 1 else None


def score_multiple_choice(
    probabilities: Mapping[str, float], options: Sequence[str], resolved: str
) -> MultipleChoiceScore:
    """Score a full probability vector over ``options`` against the ``resolved`` option."""
    if resolved not in options:
        raise ValueError(f"resolved option {resolved!r} is not one of the question's options")
    probs = validate_probability_vector(probabilities, options)
    top = top_options(probs, options)
    selected = top[0] if len(top) == 1 else None
    correct = selected == resolved
    c = probs[top[0]]
    return MultipleChoiceScore(
        predicted_option=selected,
        tied_options=top if selected is None else (),
        correct=correct,
        brier=0.5 * math.fsum((probs[o] - (1.0 if o == resolved else 0.0)) ** 2 for o in options),
        log_score=math.log(clip_probability(probs[resolved])),
        reduced_brier=(1.0 - c) ** 2 if correct else c**2,
        reduced_log_score=math.log(clip_probability(c if correct else 1.0 - c)),
    )


# --------------------------------------------------------------------------------------------------
# Market edge
# --------------------------------------------------------------------------------------------------


def market_edge_binary(p: float, outcome: bool | int, market_p: float | None) -> float | None:
    """Forecast log score minus the market's (market price = P(YES) at forecast time); None without a price."""
    if market_p is None:
        return None
    market = validate_probability(market_p, "market probability")
    forecast = score_binary(p, outcome).log_score
    y = _outcome(outcome)
    return forecast - math.log(clip_probability(market if y == 1 else 1.0 - market))


def market_edge_multiple_choice(
    probabilities: Mapping[str, float],
    options: Sequence[str],
    resolved: str,
    market_probabilities: Mapping[str, float] | None,
) -> float | None:
    """Forecast log score minus the market's for the resolved option.

    Market prices of multi-outcome markets rarely sum to exactly 1, so the market vector is
    normalised by its sum (implied probabilities). Returns None when there is no market vector or it
    does not price every option (or all its prices are 0).
    """
    forecast = score_multiple_choice(probabilities, options, resolved).log_score
    if market_probabilities is None or any(o not in market_probabilities for o in options):
        return None
    prices = [validate_probability(market_probabilities[o], f"market probability of {o!r}") for o in options]
    total = math.fsum(prices)
    if total <= 0.0:
        return None
    market_p = market_probabilities[resolved] / total
    return forecast - math.log(clip_probability(market_p))


# --------------------------------------------------------------------------------------------------
# Quantity
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QuantityScore:
    kind: Literal["point", "interval", "quantiles"]
    correct: bool
    absolute_error: float | None = None  # point: |x - v|
    relative_error: float | None = None  # point: |x - v| / |v| (None when v == 0)
    interval_width: float | None = None  # interval / quantiles outer range: upper - lower
    interval_score: float | None = None  # interval with nominal coverage (Gneiting & Raftery 2007)
    pinball_loss: float | None = None  # quantiles: mean pinball loss over the given levels


def score_point(
    value: float,
    resolved: float,
    *,
    rel_tol: float = POINT_RELATIVE_TOLERANCE,
    zero_abs_tol: float = 0.0,
) -> QuantityScore:
    """A point is correct when within ``rel_tol`` (inclusive) of the resolved value.

    When ``resolved == 0`` the point is correct only when ``|value| <= zero_abs_tol`` (exact by default).
    """
    x = _finite(value, "value")
    v = _finite(resolved, "resolved value")
    err = abs(x - v)
    if v == 0.0:
        return QuantityScore(kind="point", correct=err <= zero_abs_tol, absolute_error=err, relative_error=None)
    rel = err / abs(v)
    return QuantityScore(
        kind="point",
        correct=rel <= rel_tol * (1.0 + _REL_EPS),
        absolute_error=err,
        relative_error=rel,
    )


def score_interval(lower: float, upper: float, resolved: float, *, coverage: float | None = None) -> QuantityScore:
    """A closed interval ``[lower, upper]`` is correct when it contains the resolved value.

    With ``coverage`` (the interval's nominal central coverage, e.g. 0.8) the interval score
    ``(u - l) + 2/alpha * (l - v)[v < l] + 2/alpha * (v - u)[v > u]``, ``alpha = 1 - coverage``, is
    also returned (lower is better).
    """
    lo = _finite(lower, "lower")
    hi = _finite(upper, "upper")
    v = _finite(resolved, "resolved value")
    if lo > hi:
        raise ValueError(f"interval lower bound {lo!r} is above upper bound {hi!r}")
    interval_score: float | None = None
    if coverage is not None:
        cov = _finite(coverage, "coverage")
        if not 0.0 < cov < 1.0:
            raise ValueError(f"coverage must be strictly between 0 and 1, got {cov!r}")
        alpha = 1.0 - cov
        interval_score = (hi - lo) + (2.0 / alpha) * max(lo - v, 0.0) + (2.0 / alpha) * max(v - hi, 0.0)
    return QuantityScore(
        kind="interval",
        correct=lo <= v <= hi,
        interval_width=hi - lo,
        interval_score=interval_score,
    )


def _pinball(q: float, x: float, y: float) -> float:
    return q * (y - x) if y >= x else (1.0 - q) * (x - y)


def score_quantiles(quantiles: Mapping[float, float], resolved: float) -> QuantityScore:
    """Mean pinball loss over the given quantile levels; correct when the 10%-90% range contains ``v``.

    Levels must be in the open interval (0, 1) and values non-decreasing in level (no crossing).
    The "outer" range uses levels 0.1 and 0.9 when both are given, else the outermost given levels.
    """
    if not quantiles:
        raise ValueError("at least one quantile is required")
    v = _finite(resolved, "resolved value")
    levels: list[tuple[float, float]] = []
    for level, value in quantiles.items():
        q = _finite(level, "quantile level")
        if not 0.0 < q < 1.0:
            raise ValueError(f"quantile levels must be strictly between 0 and 1, got {q!r}")
        levels.append((q, _finite(value, f"quantile {q!r}")))
    levels.sort()
    for (q1, x1), (q2, x2) in itertools.pairwise(levels):
        if x2 < x1:
            raise ValueError(f"quantiles cross: q{q1:g}={x1!r} is above q{q2:g}={x2!r}")
    by_level = dict(levels)
    if 0.1 in by_level and 0.9 in by_level:
        lo, hi = by_level[0.1], by_level[0.9]
    else:
        lo, hi = levels[0][1], levels[-1][1]
    loss = math.fsum(_pinball(q, x, v) for q, x in levels) / len(levels)
    return QuantityScore(kind="quantiles", correct=lo <= v <= hi, interval_width=hi - lo, pinball_loss=loss)


# --------------------------------------------------------------------------------------------------
# Timeframe
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TimeframeScore:
    correct: bool
    predicted: Period
    resolved: Period
    offset: int  # signed periods predicted - resolved (diagnostic)


def score_timeframe(granularity: str, predicted: str, resolved: str | Period) -> TimeframeScore:
    """Exact match of normalised periods. ``resolved`` may be a label or an already-parsed Period."""
    pred = parse_period(granularity, predicted)
    res = resolved if isinstance(resolved, Period) else parse_period(granularity, resolved)
    if res.granularity != pred.granularity:
        raise ValueError(f"resolved period {res.label!r} is a {res.granularity}, expected a {pred.granularity}")
    return TimeframeScore(correct=pred == res, predicted=pred, resolved=res, offset=period_offset(pred, res))
