"""Peer scores: 100 x (own log score - the others' mean), summing to zero on every question."""

from __future__ import annotations

import math

import numpy as np
import pytest

from leaderboard.stats.peer import peer_scores


def test_two_agents_on_one_question_sum_to_zero() -> None:
    scores = peer_scores([5, 5], [math.log(0.8), math.log(0.4)])
    assert scores.sum() == pytest.approx(0.0, abs=1e-12)
    assert scores[0] == pytest.approx(100 * (math.log(0.8) - math.log(0.4)))


def test_worked_example_three_agents() -> None:
    # Outcome YES; forecasts 0.9, 0.6, 0.3. Agent 1: 100 x (ln 0.9 - (ln 0.6 + ln 0.3)/2) = 75.20.
    scores = peer_scores([1, 1, 1], [math.log(0.9), math.log(0.6), math.log(0.3)])
    assert scores[0] == pytest.approx(75.2039, abs=1e-4)
    assert scores.sum() == pytest.approx(0.0, abs=1e-12)


def test_a_lone_forecaster_has_no_peer_score() -> None:
    scores = peer_scores([1, 2, 2], [math.log(0.9), math.log(0.5), math.log(0.5)])
    assert np.isnan(scores[0])
    assert scores[1] == pytest.approx(0.0)


def test_every_question_sums_to_zero() -> None:
    rng = np.random.default_rng(3)
    questions = rng.integers(0, 20, size=300)
    logs = np.log(rng.uniform(0.01, 0.99, size=300))
    scores = peer_scores(questions, logs)
    for q in np.unique(questions):
        chosen = scores[questions == q]
        if chosen.size > 1:
            assert chosen.sum() == pytest.approx(0.0, abs=1e-9)
