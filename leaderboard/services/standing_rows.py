"""Writing the standings' rows: Standing rows of every view and the published question difficulties.

COPY on PostgreSQL (a rebuild writes 10^5 rows), bulk_create elsewhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from django.db import connection

from common.bulk import on_postgresql
from leaderboard.models import QuestionDifficulty, Standing
from leaderboard.stats.columns import ViewColumns, brier_index_of
from leaderboard.stats.difficulty import QuestionStats
from leaderboard.stats.metrics import METRICS, STANDINGS_VERSION

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
    "standings_version",
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
        "brier_index": [_NULL if (i := brier_index_of(b)) is None else repr(i) for b in c.means["brier"].tolist()],
        "standings_version": [STANDINGS_VERSION] * k,
        "computed_at": [_copy_text(now)] * k,
    }
    for m in METRICS:
        out[m] = _float_texts(c.means[m])
        out[f"{m}_n"] = _int_texts(c.counts[m])
    return out


def insert_standings(results: Sequence[ViewColumns], now: datetime, *, ranked: bool = True) -> int:
    """Insert the Standing rows of these views (COPY on PostgreSQL, bulk_create elsewhere).

    ``ranked``: the results carry ranks (full rebuild); otherwise rank_metric is left empty for
    :func:`_rerank` to fill in.
    """
    if on_postgresql():
        texts = (_view_columns_text(c, c.rank_metric if ranked else None, now) for c in results if len(c))
        return _copy(Standing, _ALL_FIELDS, texts)
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
                    standings_version=STANDINGS_VERSION,
                    computed_at=now,
                    **{m: row.metrics[m].mean for m in METRICS},
                    **{f"{m}_n": row.metrics[m].n for m in METRICS},
                )
            )
    Standing.objects.bulk_create(objects, batch_size=1000)
    return len(objects)


def _copy(model: Any, fields: Sequence[str], texts: Iterable[dict[str, list[str]]]) -> int:
    """COPY rows into ``model``'s table: each item of ``texts`` holds the COPY text of some rows,
    field by field (attnames)."""
    by_attname = {f.attname: str(f.column) for f in model._meta.concrete_fields}
    columns = ", ".join(by_attname[f] for f in fields)
    written = 0
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {model._meta.db_table} ({columns}) FROM STDIN") as copy,
    ):
        for text in texts:
            lines = list(map("\t".join, zip(*(text[f] for f in fields), strict=True)))
            if lines:
                copy.write("\n".join(lines) + "\n")
                written += len(lines)
    return written


_DIFFICULTY_FIELDS = (
    "question_id",
    "contamination_filter",
    "effect",
    "agents",
    "mean_brier",
    "standings_version",
    "computed_at",
)


def insert_difficulties(stats: dict[bool, QuestionStats], now: datetime, *, only: dict[bool, Any] | None = None) -> int:
    """Insert the difficulty of every question with Brier grades in ``stats`` (per contamination
    setting), or only of the question ids in ``only[flag]``."""
    parts: list[tuple[bool, npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.int64], Any]] = []
    for flag, s in stats.items():
        keep = s.brier_n > 0
        if only is not None:
            keep &= np.isin(s.question, np.asarray(only.get(flag, []), dtype=np.int64))
        mean = s.brier_total[keep] / s.brier_n[keep]
        parts.append((flag, s.question[keep], s.effect[keep], s.brier_n[keep], mean))
    if on_postgresql():
        texts = (
            {
                "question_id": _int_texts(question),
                "contamination_filter": [_copy_text(flag)] * question.size,
                "effect": _float_texts(effect),
                "agents": _int_texts(agents),
                "mean_brier": _float_texts(mean),
                "standings_version": [STANDINGS_VERSION] * question.size,
                "computed_at": [_copy_text(now)] * question.size,
            }
            for flag, question, effect, agents, mean in parts
        )
        return _copy(QuestionDifficulty, _DIFFICULTY_FIELDS, texts)
    objects = [
        QuestionDifficulty(
            question_id=q,
            contamination_filter=flag,
            effect=None if math.isnan(e) else e,
            agents=k,
            mean_brier=m,
            standings_version=STANDINGS_VERSION,
            computed_at=now,
        )
        for flag, question, effect, agents, mean in parts
        for q, e, k, m in zip(question.tolist(), effect.tolist(), agents.tolist(), mean.tolist(), strict=True)
    ]
    QuestionDifficulty.objects.bulk_create(objects, batch_size=1000)
    return len(objects)
