"""The baselines' input: binary questions with eligible grades, their outcomes, base rates and the
market at the graded forecasts' times."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ingestion.models import Question, Resolution
from leaderboard.selectors.grade_tables import resolution_times
from leaderboard.stats.baselines import base_rates, market_aggregates
from leaderboard.stats.tables import GradeTable, QuestionTable


def _binary_outcome(value: Any) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float) and value in (0, 1):
        return float(value)
    return None


def load_question_table(
    *, table: GradeTable, resolved: dict[int, tuple[float | None, Any, str]] | None = None
) -> QuestionTable:
    """Binary questions with eligible grades: outcomes, base rates and the market at forecast times.

    ``table`` holds *every* eligible grade with its log score and market edge (the full rebuild's
    table, or the incremental update's narrow one). The market's scores are recovered per grade
    from ``log_score - market_edge`` and averaged per question
    (:func:`~leaderboard.stats.baselines.market_aggregates`); the table keeps its records in
    (agent, question) order, so both paths produce identical baselines.
    """
    if resolved is None:
        resolved = resolution_times()
    binary = table.code("qtype", Question.Type.BINARY)
    keep = table.qtype == binary if binary is not None else np.zeros(len(table), dtype=bool)
    question = table.question[keep]
    log_score, market_edge = table.metrics["log_score"][keep], table.metrics["market_edge"][keep]
    ids, m_n, m_log, m_brier, above = market_aggregates(question=question, log_score=log_score, market_edge=market_edge)
    resolved_binary = [
        (t, y)
        for qid, (t, outcome, kind) in resolved.items()
        if kind in (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND)
        and t is not None
        and (y := _binary_outcome(outcome)) is not None
    ]
    info = {
        row[0]: row[1:]
        for row in Question.objects.filter(pk__in=ids.tolist())
        .order_by()
        .values_list("id", "open_at", "track", "type", "domain", "origin", "horizon_days")
    }
    kept: list[int] = []
    outcomes: list[float] = []
    opens: list[float] = []
    m_correct: list[float | None] = []
    attrs: list[tuple[Any, ...]] = []
    counts = m_n.tolist()
    aboves = above.tolist()
    for k, qid in enumerate(ids.tolist()):
        current = resolved.get(qid)
        y = _binary_outcome(current[1]) if current and current[2] != Resolution.Kind.ANNUL else None
        if y is None or qid not in info:
            continue
        attrs.append((*info[qid][1:], current[0] if current else None))
        kept.append(k)
        outcomes.append(y)
        opens.append(info[qid][0].timestamp())
        n = counts[k]
        m_correct.append(aboves[k] / n if n else None)
    at = np.asarray(kept, dtype=np.intp)
    has = m_n[at] > 0
    rates = base_rates(
        open_at=opens,
        resolved_at=[t for t, _ in resolved_binary],
        resolved_outcome=[y for _, y in resolved_binary],
    )
    return QuestionTable.build(
        question=ids[at].tolist(),
        outcome=outcomes,
        base_rate=rates.tolist(),
        market_brier=np.where(has, m_brier[at], math.nan).tolist(),
        market_log=np.where(has, m_log[at], math.nan).tolist(),
        market_correct=m_correct,
        track=[a[0] for a in attrs],
        qtype=[a[1] for a in attrs],
        domain=[a[2] for a in attrs],
        origin=[a[3] for a in attrs],
        horizon_days=[a[4] for a in attrs],
        resolved_at=[a[5] for a in attrs],
    )
