"""Token F1, the SQuAD multiset unigram F1 used by the hybrid matcher and the lexical judge.

``token_f1 = 2 * overlap / (len(pred) + len(gold))`` where ``overlap`` counts shared tokens with
multiplicity; it is 0 when either side has no tokens. Tokens come from the project's one tokenizer,
:func:`ingestion.text.tokenize` (pure, like this module). :func:`near_duplicate` is the one rule for
"the same event written twice", used by the guarded matcher and by open-ended scoring.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ingestion.text import tokenize

__all__ = [
    "DUPLICATE_JACCARD",
    "duplicate_sizes",
    "duplicate_token_sets",
    "near_duplicate",
    "repeats",
    "token_f1",
    "token_set",
]

# Two event texts whose token sets overlap this much (Jaccard) say the same thing twice.
DUPLICATE_JACCARD = 0.6


def token_f1(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """Multiset unigram F1 between two token sequences; 0.0 when either is empty."""
    if not predicted or not gold:
        return 0.0
    overlap = sum((Counter(predicted) & Counter(gold)).values())
    return 2.0 * overlap / (len(predicted) + len(gold))


@functools.lru_cache(maxsize=65536)
def token_set(text: str) -> frozenset[str]:
    """The distinct tokens of ``text`` (computed once per text: a matcher compares each text with many)."""
    return frozenset(tokenize(text))


def near_duplicate(a: str, b: str) -> bool:
    """Whether two event texts are the same words give or take a few: token-set Jaccard of the
    project's tokens at least :data:`DUPLICATE_JACCARD` (two texts without tokens are duplicates)."""
    return duplicate_token_sets(token_set(a), token_set(b))


def duplicate_token_sets(x: frozenset[str], y: frozenset[str]) -> bool:
    """:func:`near_duplicate` of two texts' :func:`token_set`."""
    if not x or not y:
        return x == y
    shared = len(x & y)
    return shared >= DUPLICATE_JACCARD * (len(x) + len(y) - shared)


def duplicate_sizes(
    shared: npt.NDArray[np.float64], x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]
) -> npt.NDArray[np.bool_]:
    """:func:`duplicate_token_sets` of many pairs of sets, from their sizes ``x`` and ``y`` and the
    size of their intersection ``shared``."""
    empty = (x == 0) | (y == 0)
    return np.where(empty, (x == 0) & (y == 0), shared >= DUPLICATE_JACCARD * (x + y - shared))


def repeats(texts: Sequence[str]) -> list[bool]:
    """For each text, whether it is a near-duplicate of an earlier one (the first of a group is not)."""
    out: list[bool] = []
    kept: list[str] = []
    for text in texts:
        repeat = any(near_duplicate(text, k) for k in kept)
        out.append(repeat)
        if not repeat:
            kept.append(text)
    return out
