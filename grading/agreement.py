"""Inter-annotator agreement over shared items (pure; no Django).

Percent agreement p_o is the share of shared items given the same label. Cohen's kappa corrects it
for chance: kappa = (p_o - p_e) / (1 - p_e), with p_e = sum over labels of the product of the two
annotators' marginal label frequencies. When p_e = 1 (both annotators used one and the same label
for every item) kappa is undefined and reported as None.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Agreement:
    items: int
    agreed: int
    percent: float | None
    kappa: float | None


def cohen_agreement(pairs: Sequence[tuple[str, str]]) -> Agreement:
    """Agreement of two annotators given (label_a, label_b) for each item both labelled."""
    n = len(pairs)
    if n == 0:
        return Agreement(items=0, agreed=0, percent=None, kappa=None)
    agreed = sum(1 for a, b in pairs if a == b)
    p_o = agreed / n
    left = Counter(a for a, _ in pairs)
    right = Counter(b for _, b in pairs)
    p_e = sum((left[label] / n) * (right[label] / n) for label in set(left) | set(right))
    kappa = None if p_e >= 1 else (p_o - p_e) / (1 - p_e)
    return Agreement(items=n, agreed=agreed, percent=100 * p_o, kappa=kappa)
