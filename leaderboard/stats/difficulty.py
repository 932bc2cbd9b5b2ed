"""Scores relative to the other agents: the difficulty-adjusted Brier and the peer score, per record.

Both depend on who else answered a question, so both are computed per question from every agent's
eligible records (once per contamination-filter setting, which decides who counts), then looked up
by each record:

* **Difficulty.** One two-way fixed-effects fit (:mod:`leaderboard.stats.fixed_effects`) over every
  eligible Brier record of all tracks gives each question of the largest connected group its
  difficulty ``gamma_q`` (question effects average zero). A record's adjusted Brier is
  ``Brier - gamma_q``, and an agent's difficulty-adjusted Brier in a view is the mean of its records'
  (at the fit this is exactly the agent effect, ``alpha_i = mean_q (Brier_iq - gamma_q)``, since the
  least-squares normal equations say so). Only questions answered by at least two agents count: on
  a question nobody else answered the fit sets ``Brier - gamma_q = alpha_i``, which says nothing new.
  This is how ForecastBench adjusts its leaderboard; one fit over both tracks puts live and replay
  questions on one scale.
* **Peer score** (:mod:`leaderboard.stats.peer`): ``100 x (own log score - mean of the others')``,
  from the sum and count of the log scores on each question.

Between full rebuilds the incremental update keeps the fitted difficulties and estimates those of
the questions it refreshes from the agents' fitted effects (:func:`one_step_effects`), the fit's
own normal equation for a question with the agent effects held fixed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from leaderboard.stats.fixed_effects import fit_fixed_effects
from leaderboard.stats.peer import peer_from_totals
from leaderboard.stats.tables import GradeTable


@dataclass(frozen=True)
class QuestionStats:
    """What the relative scores of one question's records need, for one contamination setting.

    Aligned with ``question`` (sorted ids). ``effect`` is NaN where the difficulty is unknown
    (outside the largest connected group, or not fitted yet).
    """

    question: npt.NDArray[np.int64]
    log_total: npt.NDArray[np.float64]  # sum of the agents' log scores on the question
    log_n: npt.NDArray[np.int64]  # agents with a log score on it
    brier_n: npt.NDArray[np.int64]  # agents with a Brier on it
    brier_total: npt.NDArray[np.float64]  # sum of their Briers
    effect: npt.NDArray[np.float64]  # difficulty gamma_q

    def positions(self, question: Any) -> npt.NDArray[np.intp]:
        """Index of each id in ``question`` (-1 where the question has no stats)."""
        q = np.asarray(question, dtype=np.int64)
        if self.question.size == 0:
            return np.full(q.shape, -1, dtype=np.intp)
        pos = np.searchsorted(self.question, q)
        clipped = np.minimum(pos, self.question.size - 1)
        return np.where(self.question[clipped] == q, clipped, -1).astype(np.intp)

    def at(self, column: npt.NDArray[Any], question: Any, fill: float) -> npt.NDArray[np.float64]:
        """``column``'s value for each question id (``fill`` where the question has no stats)."""
        pos = self.positions(question)
        out = np.full(pos.shape, fill, dtype=np.float64)
        found = pos >= 0
        out[found] = column[pos[found]]
        return out

    def adjusted_effect(self, question: Any) -> npt.NDArray[np.float64]:
        """gamma_q of each id where it counts for the adjusted Brier (shared and fitted), else NaN."""
        shared = self.at(self.brier_n, question, 0.0) >= 2
        return np.where(shared, self.at(self.effect, question, np.nan), np.nan)

    def mean_log(self, question: Any) -> npt.NDArray[np.float64]:
        """Mean of the agents' log scores on each question (NaN without any)."""
        count = self.at(self.log_n, question, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, self.at(self.log_total, question, np.nan) / count, np.nan)


@dataclass(frozen=True)
class Difficulty:
    """The fit's published part: question difficulties and the agents' effects, for one setting."""

    question: npt.NDArray[np.int64]
    effect: npt.NDArray[np.float64]  # NaN outside the largest connected group
    agents_on: npt.NDArray[np.int64]  # agents with a Brier on each question
    agent: npt.NDArray[np.int64]
    agent_effect: npt.NDArray[np.float64]  # NaN outside the largest connected group
    iterations: int = 0


def fit_difficulty(agent: Any, question: Any, brier: Any) -> Difficulty:
    """Question difficulties from one record per (agent, question); NaN Briers take no part."""
    fit = fit_fixed_effects(agent, question, brier)
    in_group = fit.question_component == 0
    return Difficulty(
        question=fit.question_ids,
        effect=np.where(in_group, fit.question_effect, np.nan),
        agents_on=fit.question_n,
        agent=fit.agent_ids,
        agent_effect=np.where(fit.agent_component == 0, fit.agent_effect, np.nan),
        iterations=fit.iterations,
    )


def one_step_effects(
    question: Any, agent: Any, brier: Any, *, agent_ids: Any, agent_effect: Any
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Difficulty of each question with the agent effects held at their fitted values:
    ``gamma_q = mean over its agents with an effect of (Brier_iq - alpha_i)`` (NaN when none has one).
    """
    q = np.asarray(question, dtype=np.int64)
    a = np.asarray(agent, dtype=np.int64)
    y = np.asarray(brier, dtype=np.float64)
    known_ids = np.asarray(agent_ids, dtype=np.int64)
    known = np.asarray(agent_effect, dtype=np.float64)
    order = np.argsort(known_ids)
    known_ids, known = known_ids[order], known[order]
    alpha = np.full(a.shape, np.nan)
    if known_ids.size:
        pos = np.minimum(np.searchsorted(known_ids, a), known_ids.size - 1)
        alpha = np.where(known_ids[pos] == a, known[pos], np.nan)
    ids, inverse = np.unique(q, return_inverse=True)
    residual = y - alpha
    ok = ~np.isnan(residual)
    total = np.bincount(inverse[ok], weights=residual[ok], minlength=ids.size)
    count = np.bincount(inverse[ok], minlength=ids.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ids, np.where(count > 0, total / count, np.nan)


def question_stats(
    question: Any,
    log_score: Any,
    brier: Any,
    *,
    effect_question: Any,
    effect: Any,
) -> QuestionStats:
    """Per-question totals of these records, with the difficulties given for ``effect_question``."""
    q = np.asarray(question, dtype=np.int64)
    log = np.asarray(log_score, dtype=np.float64)
    b = np.asarray(brier, dtype=np.float64)
    ids, inverse = np.unique(q, return_inverse=True)
    has_log = ~np.isnan(log)
    log_total = np.bincount(inverse[has_log], weights=log[has_log], minlength=ids.size).astype(np.float64)
    log_n = np.bincount(inverse[has_log], minlength=ids.size).astype(np.int64)
    has_brier = ~np.isnan(b)
    brier_n = np.bincount(inverse[has_brier], minlength=ids.size).astype(np.int64)
    brier_total = np.bincount(inverse[has_brier], weights=b[has_brier], minlength=ids.size).astype(np.float64)
    effects = np.full(ids.size, np.nan)
    given = np.asarray(effect_question, dtype=np.int64)
    if given.size and ids.size:
        order = np.argsort(given)
        given, values = given[order], np.asarray(effect, dtype=np.float64)[order]
        pos = np.minimum(np.searchsorted(given, ids), given.size - 1)
        effects = np.where(given[pos] == ids, values[pos], np.nan)
    return QuestionStats(
        question=ids, log_total=log_total, log_n=log_n, brier_n=brier_n, brier_total=brier_total, effect=effects
    )


def relative_scores(
    question: Any, log_score: Any, brier: Any, stats: QuestionStats
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(peer score, adjusted Brier) of each record, given its question's stats (its own included)."""
    log = np.asarray(log_score, dtype=np.float64)
    total = stats.at(stats.log_total, question, np.nan)
    count = stats.at(stats.log_n, question, 0.0)
    peer = np.where(np.isnan(log), np.nan, peer_from_totals(log, total, count))
    adjusted = np.asarray(brier, dtype=np.float64) - stats.adjusted_effect(question)
    return peer, adjusted


def table_difficulty(table: GradeTable, contamination_filter: bool) -> Difficulty:
    """The fit over the table's records that a view with this filter setting keeps (all tracks)."""
    keep = table.base_mask("all", contamination_filter)
    return fit_difficulty(table.agent[keep], table.question[keep], table.metrics["brier"][keep])


def table_question_stats(table: GradeTable, contamination_filter: bool, difficulty: Difficulty) -> QuestionStats:
    keep = table.base_mask("all", contamination_filter)
    return question_stats(
        table.question[keep],
        table.metrics["log_score"][keep],
        table.metrics["brier"][keep],
        effect_question=difficulty.question,
        effect=difficulty.effect,
    )


def attach_relative_scores(table: GradeTable, stats: dict[bool, QuestionStats]) -> None:
    """Fill the table's peer and adjusted-Brier columns for each contamination setting in ``stats``
    (records the setting excludes get NaN)."""
    for contamination_filter, question_stats_ in stats.items():
        keep = table.base_mask("all", contamination_filter)
        peer, adjusted = relative_scores(
            table.question, table.metrics["log_score"], table.metrics["brier"], question_stats_
        )
        table.set_relative("peer_score", contamination_filter, np.where(keep, peer, np.nan))
        table.set_relative("brier_adjusted", contamination_filter, np.where(keep, adjusted, np.nan))


__all__ = [
    "Difficulty",
    "QuestionStats",
    "attach_relative_scores",
    "fit_difficulty",
    "one_step_effects",
    "question_stats",
    "relative_scores",
    "table_difficulty",
    "table_question_stats",
]
