"""Materialised standings: full rebuild and the cheap incremental update after a question is graded.

The selectors read the eligible grades into the pure tables (:mod:`leaderboard.selectors.grade_tables`),
the maths in :mod:`leaderboard.stats` computes every view's rows, and this module writes them as
:class:`~leaderboard.models.Standing` rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from grading.scoring.outcome import brier_index
from ingestion.models import Question
from leaderboard.models import Grade, Standing
from leaderboard.selectors.grade_tables import load_grade_table, load_question_table, resolution_times
from leaderboard.selectors.standings import view_filter
from leaderboard.selectors.standings_cache import bump_standings_version
from leaderboard.stats.columns import ViewColumns, compute_view_columns
from leaderboard.stats.metrics import METRICS, RANK_METRICS
from leaderboard.stats.ranking import rank_columns
from leaderboard.stats.tables import materialised_views
from leaderboard.stats.views import views_touching


@dataclass(frozen=True)
class RebuildResult:
    views: int
    rows: int
    grades: int
    seconds: float


# ------------------------------------------------------------------------------------ writing

_VIEW_FIELDS = ("track", "question_type", "domain", "origin", "horizon", "contamination_filter")
_ROW_FIELDS = (
    "agent_id",
    "baseline",
    "rank",
    "rank_metric",
    "provisional",
    "n",
    *[f for m in METRICS for f in (m, f"{m}_n")],
    "brier_lo",
    "brier_hi",
    "brier_index",
    "computed_at",
)
_ALL_FIELDS = (*_VIEW_FIELDS, *_ROW_FIELDS)
_NULL = "\\N"


def _copy_text(value: Any) -> str:
    if value is None:
        return _NULL
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _float_texts(values: npt.NDArray[np.float64]) -> list[str]:
    # repr is the shortest text that reads back as the same double
    return [_NULL if v != v else repr(v) for v in values.tolist()]


def _int_texts(values: npt.NDArray[np.int64], *, zero_is_null: bool = False) -> list[str]:
    if zero_is_null:
        return [str(v) if v else _NULL for v in values.tolist()]
    return list(map(str, values.tolist()))


def _view_columns_text(c: ViewColumns, rank_metric: str | None, now: datetime) -> dict[str, list[str]]:
    """COPY text of every Standing field of one view's rows, column by column."""
    k = len(c)
    view = c.view
    out: dict[str, list[str]] = {
        "track": [_copy_text(view.track)] * k,
        "question_type": [_copy_text(view.question_type)] * k,
        "domain": [_copy_text(view.domain)] * k,
        "origin": [_copy_text(view.origin)] * k,
        "horizon": [_copy_text(view.horizon)] * k,
        "contamination_filter": [_copy_text(view.contamination_filter)] * k,
        "agent_id": [_NULL if b else str(a) for a, b in zip(c.agent.tolist(), c.baseline, strict=True)],
        "baseline": [_copy_text(b) for b in c.baseline],
        "rank": _int_texts(c.rank, zero_is_null=True),
        "rank_metric": [_copy_text(rank_metric or "")] * k,
        "provisional": np.where(c.provisional, "t", "f").tolist(),
        "n": _int_texts(c.n),
        "brier_lo": _float_texts(c.brier_lo),
        "brier_hi": _float_texts(c.brier_hi),
        "brier_index": [_NULL if b != b else repr(brier_index(b)) for b in c.means["brier"].tolist()],
        "computed_at": [_copy_text(now)] * k,
    }
    for m in METRICS:
        out[m] = _float_texts(c.means[m])
        out[f"{m}_n"] = _int_texts(c.counts[m])
    return out


def _insert(results: Sequence[ViewColumns], now: datetime, *, ranked: bool = True) -> int:
    """Insert the Standing rows of these views (COPY on PostgreSQL, bulk_create elsewhere).

    ``ranked``: the results carry ranks (full rebuild); otherwise rank_metric is left empty for
    :func:`_rerank` to fill in.
    """
    written = 0
    if connection.vendor == "postgresql":
        by_attname = {f.attname: str(f.column) for f in Standing._meta.concrete_fields}
        columns = ", ".join(by_attname[f] for f in _ALL_FIELDS)
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy(f"COPY {Standing._meta.db_table} ({columns}) FROM STDIN") as copy,
        ):
            for c in results:
                if not len(c):
                    continue
                text = _view_columns_text(c, c.rank_metric if ranked else None, now)
                lines = map("\t".join, zip(*(text[f] for f in _ALL_FIELDS), strict=True))
                copy.write("\n".join(lines) + "\n")
                written += len(c)
        return written
    objects: list[Standing] = []
    for c in results:
        for row in c.rows():
            objects.append(
                Standing(
                    track=c.view.track,
                    question_type=c.view.question_type,
                    domain=c.view.domain,
                    origin=c.view.origin,
                    horizon=c.view.horizon,
                    contamination_filter=c.view.contamination_filter,
                    agent_id=row.agent_id,
                    baseline=row.baseline,
                    rank=row.rank,
                    rank_metric=(c.rank_metric if ranked else None) or "",
                    provisional=row.provisional,
                    n=row.n,
                    brier_lo=row.brier_lo,
                    brier_hi=row.brier_hi,
                    brier_index=row.brier_index,
                    computed_at=now,
                    **{m: row.metrics[m].mean for m in METRICS},
                    **{f"{m}_n": row.metrics[m].n for m in METRICS},
                )
            )
    Standing.objects.bulk_create(objects, batch_size=1000)
    return len(objects)


def min_ranked_n() -> int:
    return int(settings.HINDSIGHT_MIN_RANKED_N)


@transaction.atomic
def standings_rebuild(*, now: datetime | None = None, bootstrap: bool = True) -> RebuildResult:
    """Recompute every materialised view from scratch (one pass over the eligible grades).

    Readers keep seeing the previous rows until the transaction commits.
    """
    started = timezone.now()
    now = now or started
    resolved = resolution_times()
    table = load_grade_table(resolved=resolved)
    questions = load_question_table(resolved=resolved, table=table)
    views = materialised_views(table)
    results = compute_view_columns(table, questions, views, min_n=min_ranked_n(), bootstrap=bootstrap)
    Standing.objects.all().delete()
    rows = _insert(results, now)
    # Bumped now (this process sees its own writes) and again at commit (so nobody caches old rows
    # under the new version in between).
    bump_standings_version()
    transaction.on_commit(bump_standings_version)
    seconds = (timezone.now() - started).total_seconds()
    return RebuildResult(views=len(views), rows=rows, grades=len(table), seconds=seconds)


@transaction.atomic
def standings_update_for_questions(*, question_ids: Sequence[int], now: datetime | None = None) -> RebuildResult:
    """Refresh the standings after the grades of these questions changed (graded, regraded, voided).

    Only the views holding one of the questions change. In each: the rows of agents that forecast
    these questions are recomputed from those agents' grades, baselines are recomputed, and the
    view is re-ranked from its stored rows. Cost: the affected agents' grades plus one narrow read
    of the binary grades for the baselines, independent of the number of other agents.
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
    questions = load_question_table(resolved=resolved)
    min_n = min_ranked_n()
    results = compute_view_columns(table, questions, list(views.values()), min_n=min_n, agents=agent_ids)
    for result in results:
        Standing.objects.filter(view_filter(result.view)).filter(
            Q(agent_id__in=agent_ids) | Q(agent__isnull=True)
        ).delete()
    written = _insert(results, now, ranked=False)
    for result in results:
        _rerank(result.view, min_n=min_n)
    # Bumped now (this process sees its own writes) and again at commit (so nobody caches old rows
    # under the new version in between).
    bump_standings_version()
    transaction.on_commit(bump_standings_version)
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
            *[f for m in RANK_METRICS for f in (m, f"{m}_n")],
        )
    )
    if not stored:
        return
    cols = list(zip(*stored, strict=True))
    means = {
        m: np.asarray([math.nan if v is None else v for v in cols[6 + 2 * i]], dtype=np.float64)
        for i, m in enumerate(RANK_METRICS)
    }
    counts = {m: np.asarray(cols[7 + 2 * i], dtype=np.int64) for i, m in enumerate(RANK_METRICS)}
    metric, rank, provisional = rank_columns(
        is_agent=np.asarray([not b for b in cols[2]], dtype=bool),
        agent_ids=np.asarray([a or 0 for a in cols[1]], dtype=np.int64),
        means=means,
        counts=counts,
        min_n=min_n,
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
