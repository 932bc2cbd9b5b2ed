"""Materialised standings: full rebuild and the cheap incremental update after a question is graded.

The maths lives in :mod:`leaderboard.standings`; this module loads current, non-void grades of the
forecasts that count into its tables and writes :class:`~leaderboard.models.Standing` rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import psycopg
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import F, Max, Min, Q
from django.utils import timezone

from grading.scoring.outcome import brier_index
from ingestion.models import Question, Resolution
from leaderboard.models import Grade, Standing
from leaderboard.selectors.standings import view_filter
from leaderboard.standings import (
    METRICS,
    GradeTable,
    QuestionTable,
    ViewColumns,
    base_rates,
    compute_view_columns,
    horizon_buckets,
    market_aggregates,
    materialised_views,
    rank_columns,
    views_touching,
)

# (metric name, Grade column): what the standings read of each grade besides its agent and question.
_METRIC_COLUMN = {
    "accuracy": "correct",
    "brier": "brier",
    "log_score": "log_score",
    "market_edge": "market_edge",
    "source_precision": "source_precision",
    "key_event_recall": "key_event_recall",
    "ker_coverage": "carried_graph",
    "second_level_f1": "second_level_f1",
    "open_f1": "open_f1",
}
# Metrics read from a boolean column (true -> 1, false -> 0, null -> NaN).
_BOOLEAN_METRICS = frozenset({"accuracy", "ker_coverage"})
# Each grade is read as one fixed-width binary record (NULL metrics as NaN), the records of up to
# _CHUNK_IDS grades concatenated by string_agg into one bytea: a handful of values cross the wire
# instead of 10^6 rows, and numpy reads the records with one np.frombuffer.
# (name, field path, SQL of its binary send with {} for the column, numpy dtype of that send)
_GRADE_FIELDS: tuple[tuple[str, str, str, str], ...] = (
    ("agent", "forecast__agent_id", "int8send({}::int8)", ">i8"),
    ("question", "forecast__question_id", "int8send({}::int8)", ">i8"),
    ("contaminated", "contaminated", "boolsend({})", "u1"),
    ("cutoff_declared", "cutoff_declared", "boolsend({})", "u1"),
    *(
        (m, c, "float8send(COALESCE({}::int4::float8, 'NaN'::float8))", ">f8")
        for m, c in _METRIC_COLUMN.items()
        if m in _BOOLEAN_METRICS
    ),
    *(
        (m, c, "float8send(COALESCE({}::float8, 'NaN'::float8))", ">f8")
        for m, c in _METRIC_COLUMN.items()
        if m not in _BOOLEAN_METRICS
    ),
)
_MARKET_FIELDS: tuple[tuple[str, str, str, str], ...] = (
    ("agent", "forecast__agent_id", "int8send({}::int8)", ">i8"),
    ("question", "forecast__question_id", "int8send({}::int8)", ">i8"),
    ("log_score", "log_score", "float8send(COALESCE({}::float8, 'NaN'::float8))", ">f8"),
    ("market_edge", "market_edge", "float8send(COALESCE({}::float8, 'NaN'::float8))", ">f8"),
)
# Grades per bytea (by grade id): at most ~170 MB each, far below PostgreSQL's 1 GB limit.
_CHUNK_IDS = 1 << 21
_WORK_MEM = "64MB"


@dataclass(frozen=True)
class RebuildResult:
    views: int
    rows: int
    grades: int
    seconds: float


def revealed_questions() -> Q:
    """Questions whose outcome is public: live ones, and replay ones once staff publish the outcome.
    Standings (and their baselines) read nothing else, so a table never reveals a replay outcome."""
    return Q(track=Question.Track.LIVE) | Q(outcome_published_at__isnull=False)


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


# ------------------------------------------------------------------------------------ reading


def _columns_sql(
    fields: Sequence[tuple[str, str, str, str]], queryset: Any, *, ids: tuple[int, int] | None = None
) -> tuple[str, tuple[Any, ...]]:
    """SQL reading ``fields`` of the rows of ``queryset`` (with primary keys in ``ids``, [lo, hi)).

    On PostgreSQL: one bytea, the concatenated fixed-width records of the rows. Elsewhere: the
    plain columns.
    """
    if ids is not None:
        queryset = queryset.filter(pk__gte=ids[0], pk__lt=ids[1])
    paths = {f"c{i}": F(path) for i, (_, path, _, _) in enumerate(fields)}
    sql, params = queryset.order_by().values(**paths).query.sql_with_params()
    if connection.vendor != "postgresql":
        return sql, tuple(params)
    record = " || ".join(send.format(f'rows."c{i}"') for i, (_, _, send, _) in enumerate(fields))
    return f"SELECT string_agg({record}, ''::bytea) FROM ({sql}) AS rows", tuple(params)


def _read_columns(fields: Sequence[tuple[str, str, str, str]], queryset: Any) -> dict[str, npt.NDArray[Any]]:
    """The ``fields`` of the rows of ``queryset`` as native numpy arrays (row order unspecified)."""
    out: dict[str, npt.NDArray[Any]] = {}
    if connection.vendor != "postgresql":
        sql, params = _columns_sql(fields, queryset)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        cols = list(zip(*rows, strict=True)) if rows else [()] * len(fields)
        for (name, _, _, dtype), col in zip(fields, cols, strict=True):
            kind = np.dtype(dtype)
            values = [math.nan if v is None else v for v in col] if kind.kind == "f" else list(col)
            out[name] = np.asarray(values, dtype=kind.newbyteorder("="))
        return out
    record = np.dtype([(f"v{i}", dtype) for i, (_, _, _, dtype) in enumerate(fields)])
    # Bounds of every grade id (an index lookup each) rather than of the filtered rows (a scan).
    bounds = queryset.model.objects.order_by().aggregate(lo=Min("pk"), hi=Max("pk"))
    chunks: list[bytes] = []
    if bounds["lo"] is not None:
        with transaction.atomic():
            connection.ensure_connection()
            # Django's cursors bind client-side, which rules out binary results: a plain psycopg
            # cursor on the same connection (so inside the same transaction) fetches raw bytes.
            with psycopg.Cursor(connection.connection) as cursor:
                # The grade/forecast hash join spills to disk in batches at the default 4 MB.
                cursor.execute(f"SET LOCAL work_mem = '{_WORK_MEM}'")
                for lo in range(bounds["lo"], bounds["hi"] + 1, _CHUNK_IDS):
                    sql, params = _columns_sql(fields, queryset, ids=(lo, lo + _CHUNK_IDS))
                    cursor.execute(sql, params or None, binary=True)
                    row = cursor.fetchone()
                    if row is not None and row[0] is not None:
                        chunks.append(bytes(row[0]))
    data = b"".join(chunks)
    del chunks
    if len(data) % record.itemsize:
        raise RuntimeError("grade records are not fixed-width: a NULL or variable-width value slipped in")
    records = np.frombuffer(data, dtype=record)
    for i, (name, _, _, dtype) in enumerate(fields):
        out[name] = records[f"v{i}"].astype(np.dtype(dtype).newbyteorder("="))
    return out


def _grade_queryset(*, agent_ids: Iterable[int] | None = None, where: Q | None = None) -> Any:
    qs = eligible_grades()
    if agent_ids is not None:
        qs = qs.filter(forecast__agent_id__in=list(agent_ids))
    if where is not None:
        qs = qs.filter(where)
    return qs


def grade_table_sql(*, agent_ids: Iterable[int] | None = None, where: Q | None = None) -> tuple[str, tuple[Any, ...]]:
    """The standings' grade query (one chunk of grade ids; for EXPLAIN in the benchmark)."""
    return _columns_sql(_GRADE_FIELDS, _grade_queryset(agent_ids=agent_ids, where=where))


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
) -> GradeTable:
    """Eligible grades as a :class:`GradeTable`: one binary COPY of the grades' numbers, then the
    attributes of their questions (one row per question) joined in numpy."""
    cols = _read_columns(_GRADE_FIELDS, _grade_queryset(agent_ids=agent_ids, where=where))
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
        metrics={m: cols[m] for m in METRICS},
    )


def _binary_outcome(value: Any) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float) and value in (0, 1):
        return float(value)
    return None


def load_question_table(
    *, resolved: dict[int, tuple[float | None, Any, str]] | None = None, table: GradeTable | None = None
) -> QuestionTable:
    """Binary questions with eligible grades: outcomes, base rates and the market at forecast times.

    The market's scores are recovered per grade from ``log_score - market_edge`` and averaged per
    question (:func:`~leaderboard.standings.market_aggregates`). ``table``, when it holds *every*
    eligible grade (the full rebuild), supplies those grades; otherwise one narrow binary COPY does.
    Both give the grades in (agent, question) order, so both paths produce identical baselines.
    """
    if resolved is None:
        resolved = resolution_times()
    if table is not None:
        binary = table.code("qtype", Question.Type.BINARY)
        keep = table.qtype == binary if binary is not None else np.zeros(len(table), dtype=bool)
        question = table.question[keep]
        log_score, market_edge = table.metrics["log_score"][keep], table.metrics["market_edge"][keep]
    else:
        cols = _read_columns(_MARKET_FIELDS, eligible_grades().filter(forecast__question__type=Question.Type.BINARY))
        order = np.lexsort((cols["question"], cols["agent"]))
        question = cols["question"][order]
        log_score, market_edge = cols["log_score"][order], cols["market_edge"][order]
    ids, m_n, m_log, m_brier, above, tie = market_aggregates(
        question=question, log_score=log_score, market_edge=market_edge
    )
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
    aboves, ties = above.tolist(), tie.tolist()
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
        m_correct.append((aboves[k] + (ties[k] if y >= 0.5 else 0)) / n if n else None)
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


# ------------------------------------------------------------------------------------ services

_VERSION_KEY = "standings:version"
_T = TypeVar("_T")


def standings_version() -> int:
    """A number that changes whenever standings are written (cache keys of rendered tables use it).

    One cache GET per call (an ADD only the first time ever).
    """
    return int(cache.get_or_set(_VERSION_KEY, 1, None) or 1)


def leaderboard_cache_seconds() -> int:
    """How long a rendered leaderboard table is kept. A shared cache (Redis) sees every version
    bump, so entries live long; a per-process cache does not, so there they expire quickly."""
    backend = str(settings.CACHES.get("default", {}).get("BACKEND", ""))
    return 3600 if backend.endswith("RedisCache") else 30


def cached_for_version(key: str, build: Callable[[], _T]) -> _T:
    """``build()`` cached under ``key`` for the current standings version.

    One cache round trip on a hit: the version and the entry (stored with the version it was
    built under) are read together, so a standings write makes every entry stale at once.
    """
    found = cache.get_many([_VERSION_KEY, key])
    version = found.get(_VERSION_KEY)
    if version is None:
        version = standings_version()
    entry = found.get(key)
    if entry is not None and entry[0] == version:
        return entry[1]  # type: ignore[no-any-return]
    value = build()
    cache.set(key, (version, value), leaderboard_cache_seconds())
    return value


def bump_standings_version() -> None:
    """Make every cached leaderboard table stale (called after standings are written)."""
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
    from leaderboard.standings import RANK_METRICS

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
    "bump_standings_version",
    "cached_for_version",
    "eligible_grades",
    "grade_table_sql",
    "leaderboard_cache_seconds",
    "load_grade_table",
    "load_question_table",
    "resolution_times",
    "standings_rebuild",
    "standings_update_for_questions",
    "standings_version",
]
