"""Every forecast an agent made on a live question, for the time-averaged Brier.

The grade of the forecast that counts (the agent's last before the close) carries its Brier. The
forecasts it superseded have no score the standings can use, so their Brier is computed here from
the stored prediction and the question's current outcome with the grading's own scoring rules
(:mod:`grading.scoring.outcome`), the same Brier a grade carries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from grading.scoring.outcome import score_binary, score_multiple_choice
from ingestion.models import Question, Resolution
from leaderboard.models import Forecast
from leaderboard.selectors.column_reads import epoch_field, int_field, read_columns
from leaderboard.stats.tables import GradeTable
from leaderboard.stats.time_average import record_time_averages

_TIMELINE_FIELDS = (
    int_field("id", "id"),
    int_field("agent", "agent_id"),
    int_field("question", "question_id"),
    epoch_field("received_at", "received_at"),
)
_SCORED_TYPES = (Question.Type.BINARY, Question.Type.MULTIPLE_CHOICE)


def _brier(qtype: str, prediction: Any, outcome: Any, options: list[str]) -> float:
    """The Brier of a stored prediction (as its grade would have it), NaN when it cannot be scored."""
    try:
        if qtype == Question.Type.BINARY:
            return float(score_binary(float(prediction["probability"]), bool(outcome)).brier)
        return float(score_multiple_choice(prediction["probabilities"], options, str(outcome)).brier)
    except (KeyError, TypeError, ValueError):
        return math.nan


def attach_time_averages(table: GradeTable, resolved: Mapping[int, tuple[float | None, Any, str]]) -> None:
    """Fill the table's ``time_brier`` and ``time_coverage`` columns for its live Brier records."""
    live = table.code("track", Question.Track.LIVE)
    keep = ~np.isnan(table.metrics["brier"]) & (table.track == live if live is not None else False)
    if not bool(np.any(keep)):
        return
    agents = np.unique(table.agent[keep])
    questions = np.unique(table.question[keep])
    rows = Question.objects.filter(type__in=_SCORED_TYPES, track=Question.Track.LIVE).order_by()
    if questions.size <= 1000:
        rows = rows.filter(pk__in=questions.tolist())
    wanted = set(questions.tolist())
    # (type, options, open, close) of the table's live questions; beyond a thousand ids a scan of
    # the live questions beats binding them all into an IN list
    info = {
        row[0]: row[1:] for row in rows.values_list("id", "type", "options", "open_at", "close_at") if row[0] in wanted
    }
    forecasts = Forecast.objects.filter(question__type__in=_SCORED_TYPES, question__track=Question.Track.LIVE)
    if agents.size <= 1000:
        forecasts = forecasts.filter(agent_id__in=agents.tolist())
    cols = read_columns(_TIMELINE_FIELDS, forecasts)
    ids = np.asarray(sorted(info), dtype=np.int64)
    known = np.isin(cols["question"], ids)
    cols = {name: values[known] for name, values in cols.items()}
    at = np.searchsorted(ids, cols["question"])
    opens = np.asarray([info[q][2].timestamp() for q in ids.tolist()], dtype=np.float64)[at]
    closes = np.asarray([info[q][3].timestamp() for q in ids.tolist()], dtype=np.float64)[at]
    score = _timeline_scores(table, cols, closes, info, resolved)
    time_brier, coverage = record_time_averages(
        table.agent,
        table.question,
        agent=cols["agent"],
        question=cols["question"],
        submitted_at=cols["received_at"],
        score=score,
        open_at=opens,
        close_at=closes,
    )
    table.metrics["time_brier"] = np.where(keep, time_brier, np.nan)
    table.metrics["time_coverage"] = np.where(keep & ~np.isnan(time_brier), coverage, np.nan)


def _timeline_scores(
    table: GradeTable,
    cols: dict[str, npt.NDArray[Any]],
    closes: npt.NDArray[np.float64],
    info: Mapping[int, tuple[Any, ...]],
    resolved: Mapping[int, tuple[float | None, Any, str]],
) -> npt.NDArray[np.float64]:
    """Brier of each forecast of the timeline: the counting one's from its grade, the superseded
    ones' computed from their predictions; NaN after the close (they never stood)."""
    n = cols["id"].size
    score = np.full(n, np.nan)
    before = cols["received_at"] <= closes
    # The counting forecast of each (agent, question): the last before the close, by (time, id).
    order = np.lexsort((cols["id"], cols["received_at"], ~before, cols["question"], cols["agent"]))
    a, q, b = cols["agent"][order], cols["question"][order], before[order]
    last = np.ones(n, dtype=bool)
    last[:-1] = (a[1:] != a[:-1]) | (q[1:] != q[:-1])
    counting = np.zeros(n, dtype=bool)
    counting[order[last & b]] = True
    keys = (table.agent << 32) | table.question
    record_order = np.argsort(keys)
    wanted = (cols["agent"][counting] << 32) | cols["question"][counting]
    pos = np.minimum(np.searchsorted(keys[record_order], wanted), keys.size - 1)
    found = keys[record_order][pos] == wanted
    counting_at = np.flatnonzero(counting)
    score[counting_at[found]] = table.metrics["brier"][record_order[pos[found]]]
    superseded = np.flatnonzero(before & ~counting)
    if superseded.size:
        rows = Forecast.objects.filter(pk__in=cols["id"][superseded].tolist()).values_list(
            "id", "question_id", "prediction"
        )
        briers: dict[int, float] = {}
        for fid, qid, prediction in rows.iterator(chunk_size=2000):
            current = resolved.get(qid)
            if current is None or current[2] not in (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND):
                continue
            qtype, options = info[qid][0], list(info[qid][1] or [])
            briers[fid] = _brier(qtype, prediction, current[1], options)
        score[superseded] = [briers.get(fid, math.nan) for fid in cols["id"][superseded].tolist()]
    return score
