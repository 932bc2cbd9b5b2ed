"""Token F1, the SQuAD multiset unigram F1 used by the hybrid matcher and the lexical judge.

``token_f1 = 2 * overlap / (len(pred) + len(gold))`` where ``overlap`` counts shared tokens with
multiplicity; it is 0 when either side has no tokens. Tokens come from the project's one tokenizer,
:func:`ingestion.text.tokenize` (pure, like this module).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

__all__ = ["token_f1"]


def token_f1(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """Multiset unigram F1 between two token sequences; 0.0 when either is empty."""
    if not predicted or not gold:
        return 0.0
    overlap = sum((Counter(predicted) & Counter(gold)).values())
    return 2.0 * overlap / (len(predicted) + len(gold))
