"""Causal cues: what a report says led to it (pure; no Django).

A report that names a cause says so with a cue (*after*, *following*, *in response to*, *because
of*, *due to*, *prompted*, *amid*, ...). :func:`cue_stems` returns the stems of the ``CUE_REACH``
words after each cue: an earlier development that shares one of them is the one the report names
as its cause (:mod:`grading.builders.chains` adds a bonus to that link).
"""

from __future__ import annotations

import re

from grading.builders.relevance import stems

CUE_REACH = 8
_CUES = re.compile(
    r"\b(after|following|in response to|in reaction to|because of|due to|as a result of|prompted by|"
    r"triggered by|amid|in the wake of|since|citing|blamed|blames|blaming|led to|leads to|prompted|"
    r"prompts|forced|sparked|caused)\b",
    re.IGNORECASE,
)


def cue_stems(text: str) -> list[str]:
    """Stems of the words that follow a causal cue in ``text`` (up to ``CUE_REACH`` per cue)."""
    out: list[str] = []
    for match in _CUES.finditer(text):
        out.extend(stems(text[match.end() : match.end() + 120])[:CUE_REACH])
    return out
