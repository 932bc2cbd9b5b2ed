"""Grading the varied world (tests/grading/scoring/varied_world.py: real pairs, Current events items,
the benchmark's categories, the storyline, prices, crowded look-alikes) gives, under every decision of
the guarded matcher, exactly the grades recorded before its decision was made faster: every verdict
and its reason, every probability and similarity to the last bit, every match and metric."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from grading.scoring.polarity import VERDICTS
from tests.grading.scoring.varied_world import EXPECTED, all_grades


def first_difference(expected: list[dict[str, Any]], actual: list[dict[str, Any]]) -> str:
    for number, (a, b) in enumerate(zip(expected, actual, strict=True)):
        if a != b:
            fields = sorted(k for k in a if a[k] != b.get(k))
            return f"forecast #{number}: {fields}: expected {[a[k] for k in fields]}, got {[b[k] for k in fields]}"
    return ""


def test_every_grade_of_the_varied_world_is_the_recorded_one() -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    actual = all_grades()
    assert actual.keys() == expected.keys()
    for decision, worlds in expected.items():
        for world, grades in worlds.items():
            assert actual[decision][world] == grades, f"{decision}, {world}: " + first_difference(
                grades, actual[decision][world]
            )
    # The world is varied: every verdict the learned decision can give occurs in it.
    seen = Counter(v[3] for grades in expected["learned"].values() for g in grades for v in g["verdicts"])
    assert set(VERDICTS) <= set(seen)
