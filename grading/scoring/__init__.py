"""Pure scoring rules and matchers (no Django imports; stdlib, numpy and rank_bm25 only).

Modules: ``outcome`` (binary, multiple choice, quantity, timeframe, market edge),
``relation`` (MIRAI), ``open_ended`` (OpenForecast LRAE counting and lexical judge),
``evidence`` (source precision/recall, leaks), ``matching`` (events, matcher settings, key events,
KER and the other reasoning metrics), ``reasoning`` (the hybrid matcher), ``worldreasoner`` and
``semantic`` (the other matchers, ``matchers`` picks one), ``text`` (token F1) and
``definitions`` (what each score means, its range and which way is better).

Importing this package is cheap: submodules are imported explicitly by callers.
"""

from __future__ import annotations

# 2.0: a forecast at the decision boundary (50%, or a tie for the top option) is not correct; the
# multiple-choice Brier is halved onto [0, 1]; relation precision, recall and F1 are shares on [0, 1].
GRADER_VERSION = "2.0"

__all__ = ["GRADER_VERSION"]
