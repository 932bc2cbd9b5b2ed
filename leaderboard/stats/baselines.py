"""The platform's baselines, computed from the same binary questions as the agents.

``market``: the market's probability at each graded forecast's time, averaged per question (only
where a price existed); ``always_half``: p = 0.5; ``base_rate``: the Laplace-smoothed share of YES
among binary questions resolved before the question's t0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from grading.scoring.outcome import LOG_CLIP, called_right
from leaderboard.stats.difficulty import QuestionStats
from leaderboard.stats.metrics import METRICS
from leaderboard.stats.peer import PEER_SCALE
from leaderboard.stats.tables import QuestionTable

BASELINES: Final[tuple[str, ...]] = ("market", "always_half", "base_rate")
BASELINE_LABELS: Final[dict[str, str]] = {
    "market": "Market price at forecast time",
    "always_half": "Always 0.5",
    "base_rate": "Base rate of earlier questions",
}


def base_rates(
    *,
    open_at: Sequence[float],
    resolved_at: Sequence[float],
    resolved_outcome: Sequence[float],
) -> npt.NDArray[np.float64]:
    """Laplace-smoothed YES share among questions resolved strictly before each ``open_at``.

    ``(1 + yes) / (2 + n)``: 0.5 when nothing had resolved yet.
    """
    times = np.asarray(resolved_at, dtype=np.float64)
    outcomes = np.asarray(resolved_outcome, dtype=np.float64)
    order = np.argsort(times, kind="stable")
    times, outcomes = times[order], outcomes[order]
    cum_yes = np.concatenate([[0.0], np.cumsum(outcomes)])
    before = np.searchsorted(times, np.asarray(open_at, dtype=np.float64), side="left")
    return (1.0 + cum_yes[before]) / (2.0 + before)


def market_from_grade(log_score: float, market_edge: float) -> tuple[float, float, float]:
    """(Brier, log score, correct) of the market, recovered from a binary grade's log score and edge.

    ``market_edge = log_score - market_log`` so the market gave ``p_y = exp(market_log)`` to what
    happened; binary Brier is ``(1 - p_y)^2`` and the market was right when it leaned to what happened
    (``p_y`` above 0.5; a price of exactly 0.5 makes no call, as for every forecast).
    """
    market_log = log_score - market_edge
    p_y = min(max(math.exp(market_log), 0.0), 1.0)
    # p_y is the probability of what happened, so the market was right when it leaned to it: the one
    # rule of every call (a price at 0.5, give or take the rounding of exp(log), makes none).
    return (1.0 - p_y) ** 2, market_log, float(called_right(p_y, 1.0))


def market_aggregates(
    *,
    question: npt.NDArray[np.int64],
    log_score: npt.NDArray[np.float64],
    market_edge: npt.NDArray[np.float64],
) -> tuple[
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
]:
    """Per question of the given grade records: (ids, n with a market price, mean market log score,
    mean market Brier, records where the market put more than 0.5 on the outcome: its right calls;
    a price of 0.5 makes no call). The market's log score is
    ``log_score - market_edge``; NaN where no price existed.

    Sums run in record order: callers pass records in (agent, question) order so every path that
    builds the baselines gets the same floating-point sums.
    """
    ids, inverse = np.unique(question, return_inverse=True)
    size = ids.size
    has = ~np.isnan(market_edge) & ~np.isnan(log_score)
    at = inverse[has]
    log = log_score[has]
    edge = market_edge[has]
    market_log = log - edge
    m_n = np.bincount(at, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        m_log = np.bincount(at, weights=market_log, minlength=size) / m_n
        m_brier = np.bincount(at, weights=(1.0 - np.exp(market_log)) ** 2, minlength=size) / m_n
    above = np.bincount(at, weights=called_right(np.exp(market_log), 1.0), minlength=size)
    return ids.astype(np.int64), m_n.astype(np.int64), m_log, m_brier, above.astype(np.int64)


def baseline_columns(
    questions: QuestionTable, question_ids: npt.NDArray[np.int64], stats: QuestionStats | None = None
) -> tuple[list[str], dict[str, list[float]], dict[str, list[int]], list[npt.NDArray[np.float64]]]:
    """(names, means, counts, Brier samples) of the baselines that have Brier questions in the view.

    With ``stats`` (the agents' per-question totals and difficulties for the view's contamination
    setting), a baseline also gets a difficulty-adjusted Brier (its Brier minus each question's
    difficulty) and a peer score against the agents (100 x its log score minus their mean), so it
    can stand among the agents on the score that ranks them.
    """
    names: list[str] = []
    means: dict[str, list[float]] = {m: [] for m in METRICS}
    counts: dict[str, list[int]] = {m: [] for m in METRICS}
    samples: list[npt.NDArray[np.float64]] = []
    if questions.question.size == 0 or question_ids.size == 0:
        return names, means, counts, samples
    present = question_ids[np.isin(question_ids, questions.question)]
    pos = np.searchsorted(questions.question, present)
    if pos.size == 0:
        return names, means, counts, samples
    y = questions.outcome[pos]
    per_baseline: dict[str, dict[str, npt.NDArray[np.float64]]] = {}
    half = np.full(y.size, 0.5)
    for name, p_yes in (("always_half", half), ("base_rate", questions.base_rate[pos])):
        p_y = np.where(y >= 0.5, p_yes, 1.0 - p_yes)
        per_baseline[name] = {
            "brier": (p_yes - y) ** 2,
            "log_score": np.log(np.clip(p_y, LOG_CLIP, 1.0 - LOG_CLIP)),
            "accuracy": called_right(p_yes, y).astype(np.float64),
        }
    per_baseline["market"] = {
        "brier": questions.market_brier[pos],
        "log_score": questions.market_log[pos],
        "accuracy": questions.market_correct[pos],
    }
    if stats is not None:
        effect = stats.adjusted_effect(present)
        agents_log = stats.mean_log(present)
        for cols in per_baseline.values():
            cols["brier_adjusted"] = cols["brier"] - effect
            cols["peer_score"] = PEER_SCALE * (cols["log_score"] - agents_log)
    for name in BASELINES:
        cols = per_baseline[name]
        brier = cols["brier"][~np.isnan(cols["brier"])]
        if brier.size == 0:
            continue
        names.append(name)
        for metric in METRICS:
            values = cols.get(metric)
            kept = np.zeros(0) if values is None else values[~np.isnan(values)]
            means[metric].append(float(kept.mean()) if kept.size else math.nan)
            counts[metric].append(int(kept.size))
        samples.append(brier)
    return names, means, counts, samples
