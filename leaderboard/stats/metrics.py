"""The metrics a standing row carries, which way each is better, and which of them ranks a view.

Every metric is the unweighted mean over the agent's eligible questions in the view that have it,
with its own n; ``leaks`` is a sum (leaked citations over the agent's forecasts). KER exists only for
forecasts that carried a graph (graded against a passing hindsight graph), so it is averaged over
those alone; ``ker_coverage`` beside it is the share of the agent's forecasts graded against a
hindsight graph that carried one (a record's value is 1 or 0).

Scales: each metric averages a grade score on the one scale the grade carries it
(:mod:`grading.scoring.definitions`): every Brier in [0, 1] (multiple choice halved when graded);
shares (accuracy, SrcP, KER, coverages, both F1 scores) in [0, 1], shown as percentages; the peer
score on Metaculus' scale (100 x natural-log differences). :data:`METRIC_RANGES` states each range.
"""

from __future__ import annotations

from typing import Final

from grading.scoring.definitions import GRADE_SCORES, LOG_SCORE_MIN
from leaderboard.stats.peer import PEER_SCALE

# The version of the standings' definitions: every stored row and published question difficulty
# records the version it was computed under; a change to any formula here bumps it.
# 3.0: grades of grader 2.0 (no credit for a tie, one Brier scale in the grades themselves) and the
# platform's baseline agents shown for reference, unranked, like the computed baselines.
STANDINGS_VERSION: Final = "3.0"

METRICS: Final[tuple[str, ...]] = (
    "accuracy",
    "brier",
    "brier_adjusted",
    "log_score",
    "peer_score",
    "time_brier",
    "time_coverage",
    "market_edge",
    "source_precision",
    "key_event_recall",
    "ker_coverage",
    "leaks",
    "second_level_f1",
    "open_f1",
)
LOWER_IS_BETTER: Final = frozenset({"brier", "brier_adjusted", "time_brier", "leaks"})
# Aggregated as a sum over the agent's questions rather than a mean.
SUMMED: Final = frozenset({"leaks"})
# Per-record values that depend on the other agents of the view, so on the contamination filter
# (which decides who the others are): computed once per filter setting.
RELATIVE: Final = frozenset({"brier_adjusted", "peer_score"})
# In order of preference. The difficulty-adjusted Brier ranks once enough agents share questions
# (:func:`leaderboard.stats.ranking.enough_shared`); otherwise the first of the others that any
# agent of the view has ranks.
RANK_METRICS: Final[tuple[str, ...]] = (
    "brier_adjusted",
    "brier",
    "second_level_f1",
    "open_f1",
    "key_event_recall",
    "source_precision",
)

# The grade score each metric averages (the others are computed from these: the adjusted Brier and
# the peer score from Brier and log score, the time-averaged Brier from every forecast's Brier).
METRIC_COLUMN: Final = {
    "accuracy": "correct",
    "brier": "brier",
    "log_score": "log_score",
    "market_edge": "market_edge",
    "source_precision": "source_precision",
    "key_event_recall": "key_event_recall",
    "ker_coverage": "carried_graph",
    "leaks": "leaks",
    "second_level_f1": "second_level_f1",
    "open_f1": "open_f1",
}
_OWN_RANGES: Final[dict[str, tuple[float | None, float | None]]] = {
    # Brier - the question's difficulty: each in [0, 1], so between -1 and 2; an agent's mean lies
    # outside [0, 1] only when its questions are far harder or easier than the average one.
    "brier_adjusted": (-1.0, 2.0),
    "peer_score": (PEER_SCALE * LOG_SCORE_MIN, -PEER_SCALE * LOG_SCORE_MIN),
    "time_brier": (0.0, 1.0),
    "time_coverage": (0.0, 1.0),
    "ker_coverage": (0.0, 1.0),
    "leaks": (0.0, None),  # summed over the agent's forecasts
}
METRIC_RANGES: Final[dict[str, tuple[float | None, float | None]]] = {
    m: _OWN_RANGES.get(m) or (GRADE_SCORES[METRIC_COLUMN[m]].low, GRADE_SCORES[METRIC_COLUMN[m]].high) for m in METRICS
}
"""Each metric's real range: where every value a standing row can hold lies (None: unbounded)."""
