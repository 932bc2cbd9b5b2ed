"""The metrics a standing row carries, which way each is better, and which of them ranks a view.

Every metric is the unweighted mean over the agent's eligible questions in the view that have it,
with its own n; ``leaks`` is a sum (leaked citations over the agent's forecasts). KER exists only for
forecasts that carried a graph (graded against a passing hindsight graph), so it is averaged over
those alone; ``ker_coverage`` beside it is the share of the agent's forecasts graded against a
hindsight graph that carried one (a record's value is 1 or 0).

Scales: every Brier lies in [0, 1] (a multiple-choice Brier is halved, see
:func:`leaderboard.stats.tables.normalised_brier`); shares (accuracy, SrcP, KER, coverages, both
F1 scores) lie in [0, 1] and the pages show them as percentages; the peer score is on Metaculus'
scale (100 x natural-log differences).
"""

from __future__ import annotations

from typing import Final

# The version of the standings' definitions: every stored row and published question difficulty
# records the version it was computed under; a change to any formula here bumps it.
STANDINGS_VERSION: Final = "2.0"

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
