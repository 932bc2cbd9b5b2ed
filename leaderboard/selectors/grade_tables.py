"""The standings' input: eligible grades and the questions they are on, read into the pure tables.

Current, non-void grades of the forecasts that count, on questions whose outcome is public, become a
:class:`~leaderboard.stats.tables.GradeTable` (one binary read of the grades' numbers, see
:mod:`leaderboard.selectors.column_reads`, then the attributes of their questions joined in numpy).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from django.db.models import Q

from ingestion.models import Question, Resolution
from leaderboard.models import Grade
from leaderboard.selectors.column_reads import (
    Field,
    bool_field,
    columns_sql,
    flag_field,
    float_field,
    int_field,
    read_columns,
)
from leaderboard.selectors.questions import public_history_q
from leaderboard.stats.metrics import METRIC_COLUMN
from leaderboard.stats.tables import GradeTable
from leaderboard.stats.views import horizon_buckets

# Metrics read from a boolean column (true -> 1, false -> 0, null -> NaN).
_BOOLEAN_METRICS: Final = frozenset({"accuracy", "ker_coverage"})
# What the incremental update reads of every grade: enough for peer totals, difficulties and the
# market baseline.
SCORE_METRICS: Final = ("brier", "log_score", "market_edge")
SCORED_QUESTIONS: Final = Q(forecast__question__type__in=[Question.Type.BINARY, Question.Type.MULTIPLE_CHOICE])


def _grade_fields(metrics: Sequence[str]) -> tuple[Field, ...]:
    return (
        int_field("agent", "forecast__agent_id"),
        int_field("question", "forecast__question_id"),
        bool_field("contaminated", "contaminated"),
        bool_field("cutoff_declared", "cutoff_declared"),
        *((flag_field if m in _BOOLEAN_METRICS else float_field)(m, METRIC_COLUMN[m]) for m in metrics),
    )


def revealed_questions() -> Q:
    """Questions whose outcome is public: live ones, and replay ones once staff publish the outcome.
    Standings (and their baselines) read nothing else, so a table never reveals a replay outcome."""
    return public_history_q()


def eligible_grades() -> Any:
    """Current, non-void grades of the forecasts that count, on revealed questions: the standings' input."""
    revealed = Question.objects.filter(revealed_questions()).values("pk")
    return Grade.objects.filter(is_current=True, void=False, counts=True, forecast__question_id__in=revealed)


def _epoch(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def resolution_times(question_ids: Iterable[int] | None = None) -> dict[int, tuple[float | None, Any, str]]:
    """question id -> (resolved_at epoch, outcome, kind) of its current (latest) resolution."""
    qs = Resolution.objects.order_by().filter(question__in=Question.objects.filter(revealed_questions()).values("pk"))
    if question_ids is not None:
        qs = qs.filter(question_id__in=list(question_ids))
    latest: dict[int, tuple[int, float | None, Any, str]] = {}
    for qid, version, resolved_at, outcome, kind in qs.values_list(
        "question_id", "version", "resolved_at", "outcome", "kind"
    ):
        if qid not in latest or version > latest[qid][0]:
            latest[qid] = (version, _epoch(resolved_at), outcome, kind)
    return {qid: (v[1], v[2], v[3]) for qid, v in latest.items()}


def _grade_queryset(*, agent_ids: Iterable[int] | None = None, where: Q | None = None) -> Any:
    qs = eligible_grades()
    if agent_ids is not None:
        qs = qs.filter(forecast__agent_id__in=list(agent_ids))
    if where is not None:
        qs = qs.filter(where)
    return qs


def grade_table_sql(*, agent_ids: Iterable[int] | None = None, where: Q | None = None) -> tuple[str, tuple[Any, ...]]:
    """The standings' grade query (one chunk of grade ids; for EXPLAIN in the benchmark)."""
    return columns_sql(_grade_fields(list(METRIC_COLUMN)), _grade_queryset(agent_ids=agent_ids, where=where))


@dataclass(frozen=True)
class _QuestionInfo:
    """Attributes of a set of questions, aligned with ``ids`` (sorted)."""

    ids: npt.NDArray[np.int64]
    labels: dict[str, list[str]]
    codes: dict[str, npt.NDArray[np.int32]]
    horizon: npt.NDArray[np.int32]
    resolved_at: npt.NDArray[np.float64]

    def positions(self, question: npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
        pos = np.searchsorted(self.ids, question)
        if question.size and (
            bool((pos >= self.ids.size).any()) or bool((self.ids[np.minimum(pos, self.ids.size - 1)] != question).any())
        ):
            raise RuntimeError("a grade refers to a question that was not loaded")
        return pos


def _question_info(ids: npt.NDArray[np.int64], resolved: dict[int, tuple[float | None, Any, str]]) -> _QuestionInfo:
    qs = Question.objects.order_by().values_list("id", "track", "type", "domain", "origin", "horizon_days")
    if ids.size <= 1000:
        rows = sorted(qs.filter(pk__in=ids.tolist()))
    else:
        # a scan of the (small) question table beats binding thousands of ids into an IN list
        wanted = set(ids.tolist())
        rows = sorted(r for r in qs if r[0] in wanted)
    labels: dict[str, list[str]] = {}
    codes: dict[str, npt.NDArray[np.int32]] = {}
    for k, name in enumerate(("track", "qtype", "domain", "origin"), start=1):
        values = [str(r[k] or "") for r in rows]
        # sorted labels: view order (and so the rebuild) does not depend on the order rows arrive in
        labels[name] = sorted(set(values))
        index = {label: i for i, label in enumerate(labels[name])}
        codes[name] = np.fromiter((index[v] for v in values), dtype=np.int32, count=len(values))
    times = [resolved.get(r[0], (None, None, ""))[0] for r in rows]
    resolved_at = np.asarray([math.nan if t is None else t for t in times], dtype=np.float64)
    return _QuestionInfo(
        ids=np.asarray([r[0] for r in rows], dtype=np.int64),
        labels=labels,
        codes=codes,
        horizon=horizon_buckets([r[5] for r in rows]),
        resolved_at=resolved_at,
    )


def load_grade_table(
    *,
    agent_ids: Iterable[int] | None = None,
    where: Q | None = None,
    resolved: dict[int, tuple[float | None, Any, str]] | None = None,
    metrics: Sequence[str] | None = None,
) -> GradeTable:
    """Eligible grades as a :class:`GradeTable` (only ``metrics`` read when given: a narrow read)."""
    wanted = list(METRIC_COLUMN) if metrics is None else list(metrics)
    cols = read_columns(_grade_fields(wanted), _grade_queryset(agent_ids=agent_ids, where=where))
    if resolved is None:
        resolved = resolution_times()
    question = cols["question"]
    info = _question_info(np.unique(question), resolved)
    pos = info.positions(question)
    return GradeTable.from_coded(
        agent=cols["agent"],
        question=question,
        codes={name: info.codes[name][pos] for name in info.codes},
        labels=info.labels,
        horizon=info.horizon[pos],
        contaminated=cols["contaminated"].astype(bool),
        cutoff_declared=cols["cutoff_declared"].astype(bool),
        resolved_at=info.resolved_at[pos],
        metrics={m: cols[m] for m in wanted},
    )
