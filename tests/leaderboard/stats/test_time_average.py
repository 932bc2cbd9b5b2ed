"""Time-averaged scores: each forecast counts for the time it stood, with coverage."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.stats.time_average import time_averaged

DAY = 86_400.0


def test_hand_computed_timeline() -> None:
    # Question open day 0 to day 10. The agent forecasts on day 2 (Brier 0.36), day 5 (0.16) and
    # day 9 (0.04), and again on day 11 after the close (ignored).
    # Stands: 0.36 for 3 days, 0.16 for 4 days, 0.04 for 1 day → (1.08 + 0.64 + 0.04) / 8 = 0.22.
    result = time_averaged(
        [1, 1, 1, 1],
        [2 * DAY, 5 * DAY, 9 * DAY, 11 * DAY],
        [0.36, 0.16, 0.04, 0.0],
        open_at=[0.0] * 4,
        close_at=[10 * DAY] * 4,
    )
    assert result.score[0] == pytest.approx(0.22)
    assert result.coverage[0] == pytest.approx(0.8)


def test_last_minute_update_does_not_take_the_whole_credit() -> None:
    early = time_averaged([1], [0.0], [0.25], open_at=[0.0], close_at=[10 * DAY])
    late = time_averaged([1, 1], [0.0, 9.9 * DAY], [0.25, 0.0], open_at=[0.0] * 2, close_at=[10 * DAY] * 2)
    assert late.score[0] == pytest.approx(0.25 * 0.99)
    assert early.coverage[0] == pytest.approx(1.0)


def test_groups_are_independent_and_unsorted_input_is_fine() -> None:
    result = time_averaged(
        [2, 1, 2],
        [5 * DAY, 0.0, 0.0],
        [0.0, 0.5, 1.0],
        open_at=[0.0] * 3,
        close_at=[10 * DAY] * 3,
    )
    assert list(result.groups) == [1, 2]
    assert result.score[0] == pytest.approx(0.5)
    assert result.score[1] == pytest.approx(0.5)


def test_forecast_only_after_close_is_not_counted() -> None:
    result = time_averaged([1], [12 * DAY], [0.1], open_at=[0.0], close_at=[10 * DAY])
    assert np.isnan(result.score[0])
    assert result.coverage[0] == 0.0
