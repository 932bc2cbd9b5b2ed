"""Labelled data the matchers are measured on (see README.md beside this file). Pure: no Django."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

__all__ = [
    "CATEGORIES",
    "EVENT_PAIRS",
    "REAL_CATEGORIES",
    "REAL_MATCH_CATEGORIES",
    "REAL_PAIRS",
    "REAL_TRAPS",
    "load_event_pairs",
    "load_real_pairs",
]

EVENT_PAIRS: Final = Path(__file__).with_name("event_pairs.jsonl")
# The real pairs (real_pairs/README.md): "dev" may be read while tuning, "test" is held out.
REAL_PAIRS: Final = {part: Path(__file__).with_name("real_pairs") / f"{part}.jsonl" for part in ("dev", "test")}
REAL_MATCH_CATEGORIES: Final = ("paraphrase_shared", "paraphrase_none", "other_outlet")
# The traps of the real pairs: a sentence close to the reference in words that claims something else.
REAL_TRAPS: Final = ("negated", "reversed", "swapped_roles", "different_quantity", "other_institution", "stuffed")
REAL_CATEGORIES: Final = (*REAL_MATCH_CATEGORIES, "same_story", *REAL_TRAPS, "unrelated", "other_date")
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


def load_event_pairs(path: Path = EVENT_PAIRS, *, categories: tuple[str, ...] = CATEGORIES) -> list[dict[str, Any]]:
    """The labelled pairs, each with ``id``, ``a``, ``b``, ``label`` ("match"/"no_match"), ``category``
    and ``sources``; a malformed row raises ``ValueError`` naming its line."""
    pairs: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        row = json.loads(line)
        if row.get("label") not in ("match", "no_match") or row.get("category") not in categories:
            raise ValueError(f"{path.name} line {number}: bad label or category")
        if not row.get("a") or not row.get("b"):
            raise ValueError(f"{path.name} line {number}: empty event text")
        pairs.append(row)
    return pairs


def load_real_pairs(part: str) -> list[dict[str, Any]]:
    """The real pairs of ``part`` ("dev" or "test"), each with ``story``, ``a``, ``a_date``, ``b``,
    ``b_date``, ``label`` and ``category``; a malformed row raises ``ValueError`` naming its line."""
    if part not in REAL_PAIRS:
        raise ValueError(f"unknown part {part!r} (expected dev or test)")
    path = REAL_PAIRS[part]
    pairs = load_event_pairs(path, categories=REAL_CATEGORIES)
    for number, row in enumerate(pairs, start=1):
        if not row.get("story") or not row.get("a_date") or not row.get("b_date"):
            raise ValueError(f"{path.name} line {number}: missing story or date")
        if (row["label"] == "match") != (row["category"] in REAL_MATCH_CATEGORIES):
            raise ValueError(f"{path.name} line {number}: label does not fit category {row['category']}")
    return pairs
