"""One scale per kind of metric: every Brier on [0, 1], every share on 0-1."""

from __future__ import annotations

import pytest

from leaderboard.stats.columns import brier_index_of, compute_views
from leaderboard.stats.tables import GradeTable, QuestionTable, normalised_brier
from leaderboard.stats.views import View


def test_multiple_choice_brier_is_halved_and_binary_kept() -> None:
    assert normalised_brier([0.04, 1.04], [False, True]).tolist() == [0.04, pytest.approx(0.52)]
    # two options: half the summed squared error is the binary Brier
    p, y = 0.8, 1.0
    summed = (p - y) ** 2 + ((1 - p) - (1 - y)) ** 2
    assert normalised_brier([summed], [True])[0] == pytest.approx((p - y) ** 2)


def test_a_mixed_view_stays_within_the_brier_index_scale() -> None:
    records = [
        {"agent": 1, "question": 1, "brier": 1.0, "qtype": "binary"},
        {"agent": 1, "question": 2, "brier": 2.0, "qtype": "multiple_choice"},  # as wrong as possible
        {"agent": 1, "question": 3, "second_level_f1": 50.0, "qtype": "relation"},
    ]
    row = compute_views(GradeTable.from_records(records), QuestionTable.empty(), [View()], min_n=1)[0].rows[0]
    assert row.metrics["brier"].mean == 1.0
    assert row.brier_index == 0.0
    assert row.metrics["second_level_f1"].mean == 0.5


def test_brier_index_of_an_adjusted_brier_below_zero_stays_at_100() -> None:
    assert brier_index_of(-0.01) == 100.0
    assert brier_index_of(0.25) == 50.0
    assert brier_index_of(None) is None
