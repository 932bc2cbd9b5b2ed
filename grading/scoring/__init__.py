"""Pure scoring rules and matchers (no Django imports; stdlib, numpy and rank_bm25 only).

Modules: ``outcome`` (binary, multiple choice, quantity, timeframe, market edge),
``relation`` (MIRAI), ``open_ended`` (OpenForecast LRAE counting and lexical judge),
``evidence`` (source precision/recall, leaks), ``matching`` (events, matcher settings, key events,
KER and the other reasoning metrics), ``reasoning`` (the hybrid matcher), ``worldreasoner`` and
``semantic`` (the other matchers, ``matchers`` picks one) and ``text`` (token F1).

Importing this package is cheap: submodules are imported explicitly by callers.
"""

from __future__ import annotations

GRADER_VERSION = "1.0"

__all__ = ["GRADER_VERSION"]
