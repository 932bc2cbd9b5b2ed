"""The metrics a standing row carries, which way each is better, and which of them ranks a view.

Every metric is the unweighted mean over the agent's eligible questions in the view that have it,
with its own n. KER exists only for forecasts that carried a graph (graded against a passing
hindsight graph), so it is averaged over those alone; ``ker_coverage`` beside it is the share of the
agent's forecasts graded against a hindsight graph that carried one (a record's value is 1 or 0).
"""

from __future__ import annotations

from typing import Final

METRICS: Final[tuple[str, ...]] = (
    "accuracy",
    "brier",
    "log_score",
    "market_edge",
    "source_precision",
    "key_event_recall",
    "ker_coverage",
    "second_level_f1",
    "open_f1",
)
LOWER_IS_BETTER: Final = frozenset({"brier"})
# In order of preference: the first metric any agent of the view has is the one ranked on.
RANK_METRICS: Final[tuple[str, ...]] = ("brier", "second_level_f1", "open_f1", "key_event_recall", "source_precision")
