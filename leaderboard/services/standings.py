"""Materialised standings: full rebuild and the cheap incremental update after a question is graded.

The maths lives in :mod:`leaderboard.standings`; this module loads current, non-void grades of the
forecasts that count into its tables and writes :class:`~leaderboard.models.Standing` rows.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Avg, Count, F, Q
from django.db.models.functions import Exp, Power
from django.utils import timezone

from ingestion.models import Question, Resolution
from leaderboard.models import Grade, Standing
from leaderboard.standings import (
    METRICS,
    GradeTable,
    QuestionTable,
    StandingRow,
    View,
    ViewResult,
    assign_ranks,
    base_rates,
    compute_views,
    materialised_views,
    views_touching,
)

_GRADE_COLUMNS = (
    "forecast__agent_id",
    "forecast__question_id",
    "forecast__question__track",
    "forecast__question__type",
    "forecast__question__domain",
    "forecast__question__origin",
    "forecast__question__horizon_days",
    "contaminated",
    "cutoff_declared",
    "correct",
    "brier",
    "log_score",
    "market_edge",
    "source_precision",
    "key_event_recall",
    "second_level_f1",
    "open_f1",
)
_METRIC_COLUMN = {
    "accuracy": "correct",
    "brier": "brier",
    "log_score": "log_score",
    "market_edge": "market_edge",
    "source_precision": "source_precision",
    "key_event_recall": "key_event_recall",
    "second_level_f1": "second_level_f1",
    "open_f1": "open_f1",
}
_HALF_LOG = math.log(0.5)


@dataclass(frozen=True)
class RebuildResult:
    views: int
    rows: int
    grades: int
    seconds: float


def eligible_grades() -> Any:
    """Current, non-void grades of the forecasts that count: the standings' only input."""
    return Grade.objects.filter(is_current=True, void=False, counts=True)


def _epoch(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def resolution_times(question_ids: Iterable[int] | None = None) -> dict[int, tuple[float | None, Any, str]]:
    """question id -> (resolved_at epoch, outcome, kind) of its current (latest) resolution."""
    qs = Resolution.objects.all()
    if question_ids is not None:
        qs = qs.filter(question_id__in=list(question_ids))
    latest: dict[int, tuple[int, float | None, Any, str]] = {}
    for qid, version, resolved_at, outcome, kind in qs.values_list(
        "question_id", "version", "resolved_at", "outcome", "kind"
    ):
        if qid not in latest or version > latest[qid][0]:
            latest[qid] = (version, _epoch(resolved_at), outcome, kind)
    return {qid: (v[1], v[2], v[3]) for qid, v in latest.items()}


def load_grade_table(
    *, queryset: Any = None, resolved: dict[int, tuple[float | None, Any, str]] | None = None
) -> GradeTable:
    """Eligible grades as a :class:`GradeTable`, in one query read through a plain cursor."""
    qs = (eligible_grades() if queryset is None else queryset).values_list(*_GRADE_COLUMNS)
    sql, params = qs.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if resolved is None:
        resolved = resolution_times()
    if not rows:
        return GradeTable.from_columns(
            agent=[],
            question=[],
            track=[],
            qtype=[],
            domain=[],
            origin=[],
            horizon_days=[],
            contaminated=[],
            cutoff_declared=[],
            resolved_at=[],
            metrics={},
        )
    cols = list(zip(*rows, strict=True))
    position = {name: i for i, name in enumerate(_GRADE_COLUMNS)}
    questions = cols[1]
    return GradeTable.from_columns(
        agent=cols[0],
        question=questions,
        track=cols[2],
        qtype=cols[3],
        domain=cols[4],
        origin=cols[5],
        horizon_days=cols[6],
        contaminated=cols[7],
        cutoff_declared=cols[8],
        resolved_at=[resolved.get(q, (None, None, ""))[0] for q in questions],
        metrics={m: cols[position[c]] for m, c in _METRIC_COLUMN.items()},
    )


def _binary_outcome(value: Any) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float) and value in (0, 1):
        return float(value)
    return None


def load_question_table(*, resolved: dict[int, tuple[float | None, Any, str]] | None = None) -> QuestionTable:
    """Binary questions with eligible grades: outcomes, base rates and the market at forecast times.

    The market's scores are recovered per grade from ``log_score - market_edge`` and averaged per
    question in the database (one GROUP BY).
    """
    if resolved is None:
        resolved = resolution_times()
    market_log = F("log_score") - F("market_edge")
    has_market = Q(market_edge__isnull=False, log_score__isnull=False)
    aggregates = (
        eligible_grades()
        .filter(forecast__question__type=Question.Type.BINARY)
        .values("forecast__question_id")
        .annotate(
            m_n=Count("id", filter=has_market),
            m_log=Avg(market_log, filter=has_market),
            m_brier=Avg(Power(1.0 - Exp(market_log), 2), filter=has_market),
            m_above=Count("id", filter=has_market & Q(log_score__gt=F("market_edge") + _HALF_LOG + 1e-12)),
            m_tie=Count(
                "id",
                filter=has_market
                & Q(log_score__lte=F("market_edge") + _HALF_LOG + 1e-12)
                & Q(log_score__gte=F("market_edge") + _HALF_LOG - 1e-12),
            ),
        )
        .values_list("forecast__question_id", "m_n", "m_log", "m_brier", "m_above", "m_tie")
    )
    graded = {row[0]: row[1:] for row in aggregates}
    resolved_binary = [
        (t, y)
        for qid, (t, outcome, kind) in resolved.items()
        if kind in (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND)
        and t is not None
        and (y := _binary_outcome(outcome)) is not None
    ]
    ids: list[int] = []
    outcomes: list[float] = []
    opens: list[float] = []
    m_brier: list[float | None] = []
    m_log: list[float | None] = []
    m_correct: list[float | None] = []
    attrs: list[tuple[Any, ...]] = []
    info = {
        row[0]: row[1:]
        for row in Question.objects.filter(pk__in=list(graded)).values_list(
            "id", "open_at", "track", "type", "domain", "origin", "horizon_days"
        )
    }
    for qid, (m_n, log, brier, above, tie) in graded.items():
        current = resolved.get(qid)
        y = _binary_outcome(current[1]) if current and current[2] != Resolution.Kind.ANNUL else None
        if y is None or qid not in info:
            continue
        open_at = info[qid][0]
        attrs.append((*info[qid][1:], current[0] if current else None))
        ids.append(qid)
        outcomes.append(y)
        opens.append(open_at.timestamp())
        m_log.append(log if m_n else None)
        m_brier.append(brier if m_n else None)
        m_correct.append((above + (tie if y >= 0.5 else 0)) / m_n if m_n else None)
    rates = base_rates(
        open_at=opens,
        resolved_at=[t for t, _ in resolved_binary],
        resolved_outcome=[y for _, y in resolved_binary],
    )
    return QuestionTable.build(
        question=ids,
        outcome=outcomes,
        base_rate=rates.tolist(),
        market_brier=m_brier,
        market_log=m_log,
        market_correct=m_correct,
        track=[a[0] for a in attrs],
        qtype=[a[1] for a in attrs],
        domain=[a[2] for a in attrs],
        origin=[a[3] for a in attrs],
        horizon_days=[a[4] for a in attrs],
        resolved_at=[a[5] for a in attrs],
    )


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


def _values(view: View, row: StandingRow, rank_metric: str | None, now: datetime) -> tuple[Any, ...]:
    values: dict[str, Any] = {
        "track": view.track,
        "question_type": view.question_type,
        "domain": view.domain,
        "origin": view.origin,
        "horizon": view.horizon,
        "contamination_filter": view.contamination_filter,
        "agent_id": row.agent_id,
        "baseline": row.baseline,
        "rank": row.rank,
        "rank_metric": rank_metric or "",
        "provisional": row.provisional,
        "n": row.n,
        "brier_lo": row.brier_lo,
        "brier_hi": row.brier_hi,
        "brier_index": row.brier_index,
        "computed_at": now,
    }
    for metric in METRICS:
        values[metric] = row.metrics[metric].mean
        values[f"{metric}_n"] = row.metrics[metric].n
    return tuple(values[f] for f in _ALL_FIELDS)


def _copy_value(value: Any) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float):
        return repr(value)
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def _insert(rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert Standing rows: COPY on PostgreSQL (fast for ~10^5 rows), bulk_create elsewhere."""
    if not rows:
        return
    if connection.vendor == "postgresql":
        by_attname = {f.attname: str(f.column) for f in Standing._meta.concrete_fields}
        columns = ", ".join(by_attname[f] for f in _ALL_FIELDS)
        buffer = io.StringIO()
        for row in rows:
            buffer.write("\t".join(_copy_value(v) for v in row))
            buffer.write("\n")
        with connection.cursor() as cursor:
            raw = cursor.cursor
            with raw.copy(f"COPY {Standing._meta.db_table} ({columns}) FROM STDIN") as copy:
                copy.write(buffer.getvalue())
        return
    Standing.objects.bulk_create(
        [Standing(**dict(zip(_ALL_FIELDS, row, strict=True))) for row in rows], batch_size=1000
    )


def _view_filter(view: View) -> Q:
    return Q(
        track=view.track,
        question_type=view.question_type,
        domain=view.domain,
        origin=view.origin,
        horizon=view.horizon,
        contamination_filter=view.contamination_filter,
    )


def _rows_of(results: Sequence[ViewResult], now: datetime) -> list[tuple[Any, ...]]:
    return [_values(r.view, row, r.rank_metric, now) for r in results for row in r.rows]


# ------------------------------------------------------------------------------------ services

_VERSION_KEY = "standings:version"


def standings_version() -> int:
    """A number that changes whenever standings are written (cache keys of rendered tables use it)."""
    return int(cache.get_or_set(_VERSION_KEY, 1, None) or 1)


def _bump_version() -> None:
    try:
        cache.incr(_VERSION_KEY)
    except ValueError:
        cache.set(_VERSION_KEY, 2, None)


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
    questions = load_question_table(resolved=resolved)
    views = materialised_views(table)
    results = compute_views(table, questions, views, min_n=min_ranked_n(), bootstrap=bootstrap)
    rows = _rows_of(results, now)
    Standing.objects.all().delete()
    _insert(rows)
    # Bumped now (this process sees its own writes) and again at commit (so nobody caches old rows
    # under the new version in between).
    _bump_version()
    transaction.on_commit(_bump_version)
    seconds = (timezone.now() - started).total_seconds()
    return RebuildResult(views=len(views), rows=len(rows), grades=len(table), seconds=seconds)


@transaction.atomic
def standings_update_for_questions(*, question_ids: Sequence[int], now: datetime | None = None) -> RebuildResult:
    """Refresh the standings after the grades of these questions changed (graded, regraded, voided).

    Only the views holding one of the questions change. In each: the rows of agents that forecast
    these questions are recomputed from those agents' grades, baselines are recomputed, and the
    view is re-ranked from its stored rows. Cost: the affected agents' grades plus one GROUP BY
    for the baselines, independent of the number of other agents.
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
        set(Grade.objects.filter(forecast__question_id__in=ids).values_list("forecast__agent_id", flat=True))
    )
    resolved = resolution_times()
    table = load_grade_table(queryset=eligible_grades().filter(forecast__agent_id__in=agent_ids), resolved=resolved)
    questions = load_question_table(resolved=resolved)
    results = compute_views(table, questions, list(views.values()), min_n=min_ranked_n(), agents=agent_ids)
    min_n = min_ranked_n()
    written = 0
    for result in results:
        where = _view_filter(result.view)
        Standing.objects.filter(where).filter(Q(agent_id__in=agent_ids) | Q(agent__isnull=True)).delete()
        _insert([_values(result.view, row, None, now) for row in result.rows])
        written += len(result.rows)
        _rerank(result.view, min_n=min_n)
    # Bumped now (this process sees its own writes) and again at commit (so nobody caches old rows
    # under the new version in between).
    _bump_version()
    transaction.on_commit(_bump_version)
    seconds = (timezone.now() - started).total_seconds()
    return RebuildResult(views=len(views), rows=written, grades=len(table), seconds=seconds)


def _rerank(view: View, *, min_n: int) -> None:
    """Recompute ranks of one view from its stored rows (metric means and n only)."""
    from leaderboard.standings import MetricValue

    stored = list(
        Standing.objects.filter(_view_filter(view)).values_list(
            "id",
            "agent_id",
            "baseline",
            "n",
            "rank",
            "rank_metric",
            "provisional",
            *[f for m in METRICS for f in (m, f"{m}_n")],
        )
    )
    if not stored:
        return
    rows: list[StandingRow] = []
    for rec in stored:
        metrics = {m: MetricValue(rec[7 + 2 * i], rec[8 + 2 * i]) for i, m in enumerate(METRICS)}
        rows.append(StandingRow(agent_id=rec[1], baseline=rec[2], n=rec[3], metrics=metrics))
    metric = assign_ranks(rows, min_n=min_n)
    changed = []
    for rec, row in zip(stored, rows, strict=True):
        if (rec[4], rec[5], rec[6]) != (row.rank, metric or "", row.provisional):
            changed.append(Standing(id=rec[0], rank=row.rank, rank_metric=metric or "", provisional=row.provisional))
    if not stored:
        return
    Standing.objects.bulk_update(changed, ["rank", "rank_metric", "provisional"], batch_size=1000)


__all__ = [
    "RebuildResult",
    "eligible_grades",
    "load_grade_table",
    "load_question_table",
    "resolution_times",
    "standings_rebuild",
    "standings_update_for_questions",
    "standings_version",
]
