"""One scale per score: grades carry every Brier on [0, 1] and every share on 0-1, and the standings
average them as they are; each metric's stated range holds what it can take."""

from __future__ import annotations

import math

import pytest

from grading.scoring.definitions import GRADE_SCORES, range_text
from grading.scoring.outcome import score_binary, score_multiple_choice
from leaderboard.stats.columns import brier_index_of, compute_views
from leaderboard.stats.metrics import METRIC_COLUMN, METRIC_RANGES, METRICS
from leaderboard.stats.tables import GradeTable, QuestionTable
from leaderboard.stats.views import View


def test_a_mixed_view_averages_the_grades_as_graded() -> None:
    worst_choice = score_multiple_choice({"A": 1.0, "B": 0.0}, ["A", "B"], "B").brier
    assert worst_choice == 1.0  # as wrong as possible: the top of the one Brier scale
    records = [
        {"agent": 1, "question": 1, "brier": score_binary(0.0, True).brier, "qtype": "binary"},
        {"agent": 1, "question": 2, "brier": worst_choice, "qtype": "multiple_choice"},
        {"agent": 1, "question": 3, "second_level_f1": 0.5, "qtype": "relation"},
    ]
    row = compute_views(GradeTable.from_records(records), QuestionTable.empty(), [View()], min_n=1)[0].rows[0]
    assert row.metrics["brier"].mean == 1.0
    assert row.brier_index == 0.0
    assert row.metrics["second_level_f1"].mean == 0.5


def test_brier_index_stays_on_its_scale() -> None:
    assert brier_index_of(-0.01) == 100.0
    assert brier_index_of(0.25) == 50.0
    assert brier_index_of(1.2) == 0.0  # an adjusted Brier above 1
    assert brier_index_of(None) is None


def test_every_metric_states_a_range_and_its_grade_score_is_defined() -> None:
    assert set(METRIC_RANGES) == set(METRICS)
    for metric, column in METRIC_COLUMN.items():
        if column in GRADE_SCORES:
            assert METRIC_RANGES[metric] == (GRADE_SCORES[column].low, GRADE_SCORES[column].high), metric
    assert METRIC_RANGES["brier"] == (0.0, 1.0)
    assert METRIC_RANGES["log_score"][0] == pytest.approx(math.log(1e-6))


def test_ranges_read_as_words() -> None:
    assert range_text(0.0, 1.0) == "0 to 1"
    assert range_text(math.log(1e-6), 0.0) == "-13.8 to 0"
    assert range_text(0.0, None) == "0 or more"
    assert GRADE_SCORES["brier"].description.endswith("Range 0 to 1; lower is better.")
    assert GRADE_SCORES["brier"].contains(1.0) and not GRADE_SCORES["brier"].contains(1.01)
