"""Labelled data the matchers are measured on (see README.md beside this file). Pure: no Django."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

__all__ = ["CATEGORIES", "EVENT_PAIRS", "load_event_pairs"]

EVENT_PAIRS: Final = Path(__file__).with_name("event_pairs.jsonl")
CATEGORIES: Final = (
    "paraphrase_shared",
    "paraphrase_none",
    "negated",
    "reversed",
    "swapped_roles",
    "different_detail",
    "near_duplicate",
    "stuffed",
    "one_word",
    "other_language",
    "unrelated",
    "same_story",
)


def load_event_pairs(path: Path = EVENT_PAIRS) -> list[dict[str, Any]]:
    """The labelled pairs, each with ``id``, ``a``, ``b``, ``label`` ("match"/"no_match"), ``category``
    and ``sources``; a malformed row raises ``ValueError`` naming its line."""
    pairs: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        row = json.loads(line)
        if row.get("label") not in ("match", "no_match") or row.get("category") not in CATEGORIES:
            raise ValueError(f"{path.name} line {number}: bad label or category")
        if not row.get("a") or not row.get("b"):
            raise ValueError(f"{path.name} line {number}: empty event text")
        pairs.append(row)
    return pairs
