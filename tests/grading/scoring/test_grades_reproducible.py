"""The same inputs give the same grade, match pairs included, in every process for every matcher:
300 forecast graphs are graded in two Python processes with different hash seeds (which change
the iteration order of sets of words) and every KER, match and similarity must be identical."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

# Runs in a child process: prints every grade of 300 forecasts under each lexical matcher.
SCRIPT = r"""
import datetime as dt, json, random, sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/platform"]
from grading.scoring.matchers import MATCHER_SETTINGS, build_reference_index
from grading.scoring.matching import Event

rng = random.Random(7)
words = ("ceasefire talks envoy parliament vote sign agreement troops border monitors deploy draft "
         "mediator summit sanctions collapse resume capital rebels withdraw approve reject deal pass").split()
day = dt.date(2026, 3, 1)
reference = [
    Event(id=f"h{i}", title=" ".join(rng.sample(words, rng.randint(3, 7))), date=day + dt.timedelta(days=i % 9),
          magnitude=rng.choice([0.5, 0.8, 1.0]), confidence=rng.choice([0.5, 0.8, 1.0]), has_impact=True)
    for i in range(20)
]
# Forecast titles come from a pool of 80, so the guarded matcher embeds few distinct texts.
pool = [" ".join(rng.sample(words, rng.randint(2, 6))) for _ in range(80)]
forecasts = [
    [Event(id=f"f{j}", title=rng.choice(pool), date=day + dt.timedelta(days=rng.randint(0, 9)))
     for j in range(rng.randint(1, 8))]
    for _ in range(300)
]
out = {}
for name in sys.argv[2].split(","):
    index = build_reference_index(reference, MATCHER_SETTINGS[name]())
    out[name] = [
        [s.ker, [[m.forecast_id, m.reference_id, repr(m.score)] for m in s.matches], [list(v) for v in s.verdicts]]
        for s in index.score_many(forecasts)
    ]
print(json.dumps(out))
"""

MATCHERS = "guarded,hybrid,worldreasoner"


def grade_in_process(seed: str) -> dict[str, list[object]]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ROOT), MATCHERS], env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, list[object]] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("seeds", [("1", "2")])
def test_every_matcher_grades_alike_under_two_hash_seeds(seeds: tuple[str, str]) -> None:
    first, second = (grade_in_process(seed) for seed in seeds)
    for name in MATCHERS.split(","):
        differing = [i for i, (a, b) in enumerate(zip(first[name], second[name], strict=True)) if a != b]
        assert not differing, f"{name}: {len(differing)} of 300 forecasts graded differently, e.g. #{differing[0]}"
    assert any(grade[1] for grade in first["worldreasoner"])  # the forecasts do match something
