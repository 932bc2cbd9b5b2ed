"""Small aggregation helpers shared by the scoring modules."""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["macro_average", "safe_ratio"]


def macro_average(values: Iterable[float | None]) -> float | None:
    """Unweighted mean of the per-question values, skipping ``None`` (undefined); None when nothing is left."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    return math.fsum(present) / len(present)


def safe_ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, or 0.0 when the denominator is 0 (the MIRAI/SrcP "empty -> 0" rule)."""
    return numerator / denominator if denominator else 0.0
