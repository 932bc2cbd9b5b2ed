"""Materialised standings: full rebuild and the cheap incremental update after a question is graded.

The selectors read the eligible grades into the pure tables (:mod:`leaderboard.selectors.grade_tables`),
the maths in :mod:`leaderboard.stats` computes every view's rows, and this module writes them as
:class:`~leaderboard.models.Standing` rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ingestion.models import Question
from leaderboard.models import Grade, QuestionDifficulty, Standing
from leaderboard.selectors.difficulty import stats_from_stored
from leaderboard.selectors.forecast_timelines import attach_time_averages
from leaderboard.selectors.grade_tables import SCORE_METRICS, SCORED_QUESTIONS, load_grade_table, resolution_times
from leaderboard.selectors.question_tables import load_question_table
from leaderboard.selectors.standings import baseline_agent_ids, view_filter
from leaderboard.selectors.standings_cache import bump_standings_version
from leaderboard.services.standing_rows import insert_difficulties, insert_standings
from leaderboard.stats.columns import compute_view_columns
from leaderboard.stats.difficulty import (
    QuestionStats,
    attach_relative_scores,
    fit_difficulty,
    table_difficulty,
    table_question_stats,
)
from leaderboard.stats.metrics import RANK_METRICS
from leaderboard.stats.ranking import rank_columns
from leaderboard.stats.tables import GradeTable, materialised_views
from leaderboard.stats.views import views_touching


@dataclass(frozen=True)
class RebuildResult:
    views: int
    rows: int
    grades: int
    seconds: float


def min_ranked_n() -> int:
    return int(settings.HINDSIGHT_MIN_RANKED_N)


def _enrich(table: GradeTable, resolved: Mapping[int, Any], stats: dict[bool, QuestionStats]) -> None:
    """The scores computed from the grades: time averages over forecast updates, peer scores and
    difficulty-adjusted Briers."""
    attach_time_averages(table, resolved)
    attach_relative_scores(table, stats)


def _bump() -> None:
    # Bumped now (this process sees its own writes) and again at commit (so nobody caches old rows
    # under the new version in between).
    bump_standings_version()
    transaction.on_commit(bump_standings_version)


@transaction.atomic
def standings_rebuild(*, now: datetime | None = None, bootstrap: bool = True, difficulty: bool = True) -> RebuildResult:
    """Recompute every materialised view and the question difficulties from scratch (one pass over
    the eligible grades, one fixed-effects fit per contamination-filter setting).

    Readers keep seeing the previous rows until the transaction commits. ``difficulty=False`` skips
    the fit (the benchmark's comparison; no view then ranks on the adjusted Brier).
    """
    started = timezone.now()
    now = now or started
    resolved = resolution_times()
    table = load_grade_table(resolved=resolved)
    stats: dict[bool, QuestionStats] = {}
    for flag in (True, False):
        fit = table_difficulty(table, flag) if difficulty else fit_difficulty([], [], [])
        stats[flag] = table_question_stats(table, flag, fit)
    _enrich(table, resolved, stats)
    questions = load_question_table(resolved=resolved, table=table)
    views = materialised_views(table)
    results = compute_view_columns(
        table,
        questions,
        views,
        min_n=min_ranked_n(),
        bootstrap=bootstrap,
        stats=stats,
        baseline_agents=baseline_agent_ids(),
    )
    Standing.objects.all().delete()
    rows = insert_standings(results, now)
    QuestionDifficulty.objects.all().delete()
    insert_difficulties(stats, now)
    _bump()
    seconds = (timezone.now() - started).total_seconds()
    return RebuildResult(views=len(views), rows=rows, grades=len(table), seconds=seconds)


@transaction.atomic
def standings_update_for_questions(*, question_ids: Sequence[int], now: datetime | None = None) -> RebuildResult:
    """Refresh the standings after the grades of these questions changed (graded, regraded, voided).

    Only the views holding one of the questions change. In each: the rows of agents that forecast
    these questions are recomputed from those agents' grades, baselines are recomputed, and the
    view is re-ranked from its stored rows. The difficulties of these questions are estimated again
    with the agents' fitted effects held fixed; every other difficulty stays as the last rebuild
    fitted it. Cost: the affected agents' grades plus one narrow read of every binary and
    multiple-choice grade (peer scores, difficulties and the baselines), independent of the number
    of other agents.
    """
    started = timezone.now()
    now = now or started
    ids = sorted({int(q) for q in question_ids})
    if not ids:
        return RebuildResult(views=0, rows=0, grades=0, seconds=0.0)
    attrs = Question.objects.filter(pk__in=ids).values_list("track", "type", "domain", "origin", "horizon_days")
    views = {
        v.key(): v
        for a in attrs
        for v in views_touching(track=a[0], qtype=a[1], domain=a[2], origin=a[3], horizon_days=a[4])
    }
    agent_ids = sorted(
        set(
            Grade.objects.filter(forecast__question_id__in=ids)
            .order_by()
            .values_list("forecast__agent_id", flat=True)
            .distinct()
        )
    )
    resolved = resolution_times()
    table = load_grade_table(agent_ids=agent_ids, resolved=resolved)
    scores = load_grade_table(resolved=resolved, metrics=SCORE_METRICS, where=SCORED_QUESTIONS)
    stats = stats_from_stored(scores, refresh=ids)
    _enrich(table, resolved, stats)
    questions = load_question_table(resolved=resolved, table=scores)
    min_n = min_ranked_n()
    results = compute_view_columns(table, questions, list(views.values()), min_n=min_n, agents=agent_ids, stats=stats)
    for result in results:
        Standing.objects.filter(view_filter(result.view)).filter(
            Q(agent_id__in=agent_ids) | Q(agent__isnull=True)
        ).delete()
    written = insert_standings(results, now, ranked=False)
    for result in results:
        _rerank(result.view, min_n=min_n)
    QuestionDifficulty.objects.filter(question_id__in=ids).delete()
    insert_difficulties(stats, now, only={flag: ids for flag in stats})
    _bump()
    seconds = (timezone.now() - started).total_seconds()
    return RebuildResult(views=len(views), rows=written, grades=len(table), seconds=seconds)


def _rerank(view: Any, *, min_n: int) -> None:
    """Recompute ranks of one view from its stored rows (metric means and n only)."""
    stored = list(
        Standing.objects.filter(view_filter(view)).values_list(
            "id",
            "agent_id",
            "baseline",
            "rank",
            "rank_metric",
            "provisional",
            "agent__is_baseline",
            *[f for m in RANK_METRICS for f in (m, f"{m}_n")],
        )
    )
    if not stored:
        return
    cols = list(zip(*stored, strict=True))
    means = {
        m: np.asarray([math.nan if v is None else v for v in cols[7 + 2 * i]], dtype=np.float64)
        for i, m in enumerate(RANK_METRICS)
    }
    counts = {m: np.asarray(cols[8 + 2 * i], dtype=np.int64) for i, m in enumerate(RANK_METRICS)}
    metric, rank, provisional = rank_columns(
        is_agent=np.asarray([not b for b in cols[2]], dtype=bool),
        agent_ids=np.asarray([a or 0 for a in cols[1]], dtype=np.int64),
        means=means,
        counts=counts,
        min_n=min_n,
        rankable=np.asarray([not b for b in cols[6]], dtype=bool),
    )
    changed = [
        Standing(id=rec[0], rank=r or None, rank_metric=metric or "", provisional=p)
        for rec, r, p in zip(stored, rank.tolist(), provisional.tolist(), strict=True)
        if (rec[3], rec[4], rec[5]) != (r or None, metric or "", p)
    ]
    Standing.objects.bulk_update(changed, ["rank", "rank_metric", "provisional"], batch_size=1000)


__all__ = [
    "RebuildResult",
    "standings_rebuild",
    "standings_update_for_questions",
]
