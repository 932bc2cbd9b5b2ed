"""The worked examples of the fair-comparison scores on the methods page are what the code computes,
and what a hand calculation gives."""

from __future__ import annotations

import math

import pytest

from leaderboard.methods import DOC_PATH
from leaderboard.methods_examples import fair_examples, outcome_examples


def test_examples_agree_with_hand_calculations() -> None:
    ex = fair_examples()
    assert outcome_examples()["mc_brier"] == "0.39" and outcome_examples()["mc_summed"] == "0.78"
    assert ex["means_brier"] == "0.215" and ex["means_f1"] == "50"
    rows = {r["agent"]: r for r in ex["difficulty_rows"]}
    # B answered only the hard questions: its plain mean equals C's, its adjusted Brier A's.
    assert rows["B"]["brier"] == rows["C"]["brier"] == "0.25"
    assert rows["A"]["adjusted"] == rows["B"]["adjusted"] == "0.15" and rows["C"]["adjusted"] == "0.25"
    assert ex["adjusted_index"] == f"{100 * (1 - math.sqrt(0.15)):.1f}"
    first = 100 * (math.log(0.9) - (math.log(0.6) + math.log(0.3)) / 2)
    assert ex["peer"][0] == f"{first:.1f}"
    assert sum(float(p) for p in ex["peer"]) == pytest.approx(0.0, abs=0.11)
    assert ex["time_first"] == "0.13" and ex["time_first_coverage"] == "100"
    assert ex["time_second"] == "0.16" and ex["time_second_coverage"] == "25"
    assert ex["combined"] == "0.18"  # (3 x 0.2 + 0.12) / 4
    assert 50 < int(ex["pairwise_share"]) < 100


def test_the_methods_file_gives_each_fair_score_its_formula_source_and_example() -> None:
    text = DOC_PATH.read_text(encoding="utf-8")
    for heading, source in (
        ("### Difficulty-adjusted Brier", "ForecastBench"),
        ("### Peer score", "Metaculus, Scores FAQ"),
        ("### Time-averaged Brier", "Metaculus, Scores FAQ"),
        ("### Pairwise confidence", "bootstrap"),
        ("### Every score's range", "½ Σₖ"),
        ("### Views and tracks", "combined score"),
    ):
        section = text.split(heading, 1)[1].split("\n### ", 1)[0]
        assert "```text" in section and source in section and "*Example.*" in section, heading
