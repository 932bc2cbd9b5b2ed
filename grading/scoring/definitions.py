"""What each score a grade carries means, its range, and which way is better: one definition per score.

The scoring rules (:mod:`grading.scoring.outcome`, ``relation``, ``open_ended``, ``evidence``,
``matching``) compute the values; this table says what they are, keyed by the grade's field (or, for
the relation precision and recall a grade keeps in its details, by their own name). Every place that names or describes a
grade's score reads it from here: the grade columns on the pages (``leaderboard.grade_display``), the
open-data and API field descriptions, the standings' column help and the ranges on ``/methods/``; the
range test checks that every score any page shows lies inside the range stated here.

Ranges are the real ones: every Brier on [0, 1] (multiple choice halved, see ``outcome``); every
share (precision, recall, F1, accuracy, KER) on [0, 1]; log scores between ln(LOG_CLIP) and 0;
``None`` for an end that is unbounded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal

from grading.scoring.outcome import LOG_CLIP
from grading.scoring.relation import KL_EPSILON

__all__ = ["GRADE_SCORES", "KL_MAX", "LOG_SCORE_MIN", "ScoreDefinition", "range_text"]

LOG_SCORE_MIN: Final = math.log(LOG_CLIP)
"""The worst log score: ln of the clipped probability LOG_CLIP (about -13.8)."""
KL_MAX: Final = math.log((1.0 + KL_EPSILON) / KL_EPSILON) * (1.0 + KL_EPSILON)
"""MIRAI's KL divergence with its epsilon is at most about ln(1/epsilon) = 23.0."""

Better = Literal["higher", "lower"]
Kind = Literal["flag", "share", "score", "count", "quantity", "days"]


@dataclass(frozen=True, slots=True)
class ScoreDefinition:
    """One score: its grade field, how pages label it, its range and what it measures."""

    name: str
    label: str
    kind: Kind
    low: float | None
    high: float | None
    better: Better
    meaning: str  # one sentence without the range or the direction (pages add them from the fields)

    @property
    def range(self) -> str:
        return range_text(self.low, self.high, self.kind)

    @property
    def description(self) -> str:
        """The meaning with the range and which way is better, as exports and the API describe it."""
        if self.kind == "flag":
            return f"{self.meaning} True, false, or empty where it does not apply."
        return f"{self.meaning} Range {self.range}; {self.better} is better."

    def contains(self, value: float, *, slack: float = 1e-9) -> bool:
        """Whether ``value`` lies within the stated range (``slack`` for rounding)."""
        if self.low is not None and value < self.low - slack:
            return False
        return not (self.high is not None and value > self.high + slack)


def _number(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"


def range_text(low: float | None, high: float | None, kind: str = "score") -> str:
    """A range in words: "0 to 1", "-13.8 to 0", "0 or more"."""
    if kind == "flag":
        return "true or false"
    if low is not None and high is not None:
        return f"{_number(low)} to {_number(high)}"
    if low is not None:
        return f"{_number(low)} or more"
    if high is not None:
        return f"{_number(high)} or less"
    return "any number"


def _share(name: str, label: str, meaning: str) -> ScoreDefinition:
    return ScoreDefinition(name, label, "share", 0.0, 1.0, "higher", meaning)


GRADE_SCORES: Final[dict[str, ScoreDefinition]] = {
    d.name: d
    for d in (
        ScoreDefinition(
            "correct",
            "Right call",
            "flag",
            0.0,
            1.0,
            "higher",
            "Outcome: whether the forecast's call was right under its type's rule (binary: above 50% on YES or "
            "below on NO; multiple choice: the single most probable option; quantity: within 10%, inside the "
            "interval or the 10%-90% quantiles; timeframe: the exact period). A forecast at exactly 50%, or "
            "with two options tied for the highest probability, makes no call and is not correct.",
        ),
        ScoreDefinition(
            "brier",
            "Brier",
            "score",
            0.0,
            1.0,
            "lower",
            "Outcome, binary and multiple choice: binary (p - y)^2; multiple choice half the squared error "
            "summed over the options (Brier's 1950 sum, on 0 to 2, halved; for two options it equals the "
            "binary Brier).",
        ),
        ScoreDefinition(
            "log_score",
            "Log score",
            "score",
            LOG_SCORE_MIN,
            0.0,
            "higher",
            f"Outcome, binary and multiple choice: ln of the probability given to what happened, clipped to "
            f"[{LOG_CLIP:g}, 1 - {LOG_CLIP:g}].",
        ),
        ScoreDefinition(
            "market_edge",
            "Market edge",
            "score",
            LOG_SCORE_MIN,
            -LOG_SCORE_MIN,
            "higher",
            "Outcome: the log score minus the market's log score at the forecast's as-of time; above 0 beat "
            "the market.",
        ),
        ScoreDefinition(
            "pinball",
            "Pinball loss",
            "quantity",
            0.0,
            None,
            "lower",
            "Quantity quantile forecasts: the mean pinball loss over the given levels, in the question's unit.",
        ),
        _share(
            "relation_precision",
            "Relation precision",
            "Relation (MIRAI): share of the forecast's CAMEO codes that occurred, at the first and the second "
            "level (kept in the grade's details).",
        ),
        _share(
            "relation_recall",
            "Relation recall",
            "Relation (MIRAI): share of the CAMEO codes that occurred that the forecast named, at the first and "
            "the second level (kept in the grade's details).",
        ),
        _share("first_level_f1", "Relation F1, first level", "Relation (MIRAI): F1 of first-level CAMEO codes."),
        _share(
            "second_level_f1",
            "Relation F1, second level",
            "Relation (MIRAI): F1 of second-level CAMEO codes (the leaderboard's MIRAI F1).",
        ),
        ScoreDefinition(
            "kl_binary",
            "KL divergence, cooperation/conflict",
            "score",
            0.0,
            KL_MAX,
            "lower",
            "Relation (MIRAI): KL divergence of the forecast's cooperation/conflict mix of first-level codes "
            "from what occurred.",
        ),
        ScoreDefinition(
            "kl_quad",
            "KL divergence, four classes",
            "score",
            0.0,
            KL_MAX,
            "lower",
            "Relation (MIRAI): KL divergence over the four classes (verbal and material cooperation, verbal "
            "and material conflict) of first-level codes.",
        ),
        _share(
            "open_precision",
            "Open-ended precision",
            "Open-ended (OpenForecast LRAE): share of the predicted events the judge matched to what happened.",
        ),
        _share(
            "open_recall",
            "Open-ended recall",
            "Open-ended (OpenForecast LRAE): share of the gold events the prediction matched.",
        ),
        _share("open_f1", "Open-ended F1", "Open-ended (OpenForecast LRAE): F1 of predicted events."),
        _share(
            "source_precision",
            "Source precision",
            "Evidence: share of the cited or read sources that the hindsight graph's reference sources hold.",
        ),
        _share(
            "source_recall",
            "Source recall",
            "Evidence: share of the hindsight graph's reference sources the forecast cited or read.",
        ),
        ScoreDefinition(
            "leaks",
            "Leaks",
            "count",
            0.0,
            None,
            "lower",
            "Evidence: cited or served items published at or after the forecast's as-of time.",
        ),
        _share(
            "key_event_recall",
            "Key-event recall",
            "Reasoning: share of the hindsight graph's key events the forecast's graph matched.",
        ),
        _share(
            "event_precision",
            "Event precision",
            "Reasoning: share of the forecast graph's events that matched a hindsight event.",
        ),
        _share("event_recall", "Event recall", "Reasoning: share of the hindsight events the forecast graph matched."),
        _share("event_f1", "Event F1", "Reasoning: F1 of forecast events against hindsight events."),
        ScoreDefinition(
            "temporal_mae",
            "Date error",
            "days",
            0.0,
            None,
            "lower",
            "Reasoning: mean absolute difference in days between the dates of matched events.",
        ),
    )
}
