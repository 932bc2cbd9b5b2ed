"""Reads of the published question difficulties (the fixed-effects fit's question effects).

The full rebuild writes them (:class:`~leaderboard.models.QuestionDifficulty`); the incremental
update and views computed on request read them back, with the agents' fitted effects (their
difficulty-adjusted Brier in the all-tracks view), so every score between two rebuilds uses the
same difficulties.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt
from django.db.models import F, QuerySet

from leaderboard.models import QuestionDifficulty, Standing
from leaderboard.stats.difficulty import QuestionStats, one_step_effects, question_stats
from leaderboard.stats.tables import GradeTable

Effects = tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]


def _arrays(rows: Iterable[tuple[int, float | None]]) -> Effects:
    pairs = list(rows)
    ids = np.asarray([p[0] for p in pairs], dtype=np.int64)
    values = np.asarray([np.nan if p[1] is None else p[1] for p in pairs], dtype=np.float64)
    return ids, values


def stored_difficulties(*, contamination_filter: bool, question_ids: Iterable[int] | None = None) -> Effects:
    """(question ids, difficulty) as the last rebuild fitted them (NaN: outside the comparable group)."""
    qs = QuestionDifficulty.objects.filter(contamination_filter=contamination_filter).order_by()
    if question_ids is not None:
        qs = qs.filter(question_id__in=list(question_ids))
    return _arrays(qs.values_list("question_id", "effect"))


def stored_agent_effects(*, contamination_filter: bool) -> Effects:
    """(agent ids, fitted agent effect): each agent's difficulty-adjusted Brier in the all-tracks view."""
    rows = Standing.objects.filter(
        track="all",
        question_type="",
        domain="",
        origin="",
        horizon="",
        contamination_filter=contamination_filter,
        agent__isnull=False,
        brier_adjusted__isnull=False,
    ).values_list("agent_id", "brier_adjusted")
    return _arrays(rows)


def stats_from_stored(scores: GradeTable, *, refresh: Iterable[int] = ()) -> dict[bool, QuestionStats]:
    """Per contamination setting, the question stats the relative scores need, from the stored
    difficulties and the log scores and Briers of ``scores`` (every eligible grade of its questions).

    The difficulty of each question in ``refresh`` (its grades changed since the fit) is estimated
    again with the agents' fitted effects held fixed.
    """
    refresh_ids = np.asarray(sorted(set(refresh)), dtype=np.int64)
    stats: dict[bool, QuestionStats] = {}
    questions = np.unique(scores.question)
    for flag in (True, False):
        keep = scores.base_mask("all", flag)
        ids, effects = stored_difficulties(
            contamination_filter=flag, question_ids=questions.tolist() if questions.size <= 1000 else None
        )
        if refresh_ids.size:
            mine = keep & np.isin(scores.question, refresh_ids)
            agent_ids, agent_effect = stored_agent_effects(contamination_filter=flag)
            new_ids, new_effects = one_step_effects(
                scores.question[mine],
                scores.agent[mine],
                scores.metrics["brier"][mine],
                agent_ids=agent_ids,
                agent_effect=agent_effect,
            )
            stale = np.isin(ids, new_ids)
            ids = np.concatenate([ids[~stale], new_ids])
            effects = np.concatenate([effects[~stale], new_effects])
        stats[flag] = question_stats(
            scores.question[keep],
            scores.metrics["log_score"][keep],
            scores.metrics["brier"][keep],
            effect_question=ids,
            effect=effects,
        )
    return stats


DIFFICULTY_ORDERS: dict[str, list[Any]] = {
    "hardest": [F("effect").desc(nulls_last=True), "question_id"],
    "easiest": [F("effect").asc(nulls_last=True), "question_id"],
    "question": ["question_id"],
}


def difficulty_list(*, contamination_filter: bool = True, order: str = "hardest") -> QuerySet[QuestionDifficulty]:
    """The published difficulties with their questions, for the API and the open-data export."""
    return (
        QuestionDifficulty.objects.filter(contamination_filter=contamination_filter)
        .select_related("question")
        .order_by(*DIFFICULTY_ORDERS.get(order, DIFFICULTY_ORDERS["hardest"]))
    )
