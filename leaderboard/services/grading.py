"""Grade orchestration: every forecast of a question scored on outcome, evidence and reasoning.

``grade_question`` is the one entry point (tasks, receivers, the sweeper and the ``regrade``
command call it). What it does depends on the question's current resolution:

- resolved / amended: every forecast whose current grade was not computed from the question's
  current inputs key (see ``leaderboard.selectors.grades``) gets a new grade version, in batches:
  outcome always; evidence (SrcP, source recall) and reasoning (KER, event P/R/F1, temporal MAE)
  only when the current hindsight reference passed its quality thresholds (``graph_built``), else
  those fields are null. Leaks need no reference and are always counted.
- annulled: a new version with ``void=True`` and every metric null.
- un-resolved (or never resolved): current grades are withdrawn (marked not current, kept as
  history, no new version); re-resolving writes the next version.

A run that finds every current grade on the current key writes nothing (idempotent). Two workers
on one question: the first claims ``QuestionGradingState`` with a conditional UPDATE on
``claimed_at`` and keeps the claim alive with a heartbeat; the other gets ``status="busy"`` (the
task tries again once a dead holder's claim would be stale). A claim whose heartbeat stopped for
HINDSIGHT_GRADING_CLAIM_STALE_SECONDS is taken over (its worker died): ``leaderboard.services.claims``.
"""

from __future__ import annotations

import json
import logging
import math
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from itertools import groupby
from operator import itemgetter
from typing import Any, TypeVar

import numpy as np
import orjson
from django.conf import settings
from django.db import connection, connections, transaction
from django.db.models import F, Field
from django.utils import timezone

from common.bulk import copy_rows, cyclic_gc_paused
from grading.scoring import GRADER_VERSION
from grading.scoring import outcome as outcome_rules
from grading.scoring.evidence import leaked_items, score_evidence
from grading.scoring.matchers import build_reference_index
from grading.scoring.open_ended import PredictionVerdict, score_open_ended
from grading.scoring.reasoning import Event, MatcherIndex, MatcherSettings, ReasoningScore
from grading.scoring.relation import sanitize_relation, score_relation
from grading.selectors import Reference, references_for_questions
from ingestion.models import PricePoint, Question, Resolution
from ingestion.reference_data import cameo_children
from ingestion.selectors.evidence import articles_search
from ingestion.text import tokenize
from leaderboard.judges import (
    EvidenceItem,
    Judge,
    Judgement,
    JudgeUnavailable,
    LexicalJudge,
    LLMJudge,
    judge_for_question,
)
from leaderboard.models import Agent, Grade, QuestionGradingState
from leaderboard.selectors.grades import (
    CurrentGrade,
    ForecastData,
    ForecastHead,
    HeadsAndGrades,
    Read,
    current_resolutions,
    forecast_data,
    forecast_heads_and_grades_of,
    gateway_reads_for_questions,
    inputs_key,
    judge_label,
    matcher_digest,
    matcher_settings,
    reference_key_of,
)
from leaderboard.services.claims import claims_kept_alive, grading_claim, released
from leaderboard.services.leaks import ServedIndex, forecast_as_of
from leaderboard.services.predictions import question_options

logger = logging.getLogger(__name__)
T = TypeVar("T")

RESOLVED_KINDS = (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND)
# A grade's details list this many of its leaked reads (the count is always complete).
LEAKED_READS_LISTED = 50
_MARKS = str.maketrans("", "", "\x02\x03")


@dataclass
class GradingReport:
    question_id: int
    status: str  # graded | up_to_date | withdrawn | busy | missing
    inputs_key: str = ""
    graded: int = 0  # new grade rows written
    unchanged: int = 0  # forecasts whose current grade was already up to date
    withdrawn: int = 0  # grades marked not current because the question is no longer resolved
    counts_updated: int = 0
    void: bool = False
    reference: str = "none"  # none | built | not_built
    judge: str = ""
    judge_fallback: str = ""  # why the lexical judge stood in for the LLM judge on this question
    judge_usage: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------------------------ which counts


def counting_forecasts(question: Question, heads: Sequence[ForecastHead]) -> set[int]:
    """Ids of the forecasts that count: live, each agent's latest at or before close_at; replay,
    each session's latest received before the outcome was published (a forecast made once the
    outcome is public never counts, however it got in). ``heads`` are ordered by received_at, id."""
    latest: dict[tuple[int, Any], int] = {}
    replay = question.track == Question.Track.REPLAY
    published = question.outcome_published_at
    for head in heads:
        if replay:
            if published is None or head.received_at < published:
                latest[(head.agent_id, head.session_id)] = head.id
        elif head.received_at <= question.close_at:
            latest[(head.agent_id, None)] = head.id
    return set(latest.values())


# ------------------------------------------------------------------------------------ market prices


class MarketSeries:
    """Price history of the question's market, per outcome, for 'price at or before t' lookups."""

    def __init__(self, question: Question) -> None:
        self.series: dict[str, tuple[list[datetime], list[float]]] = {}
        if question.market_id is None:
            return
        for outcome, time, probability in (
            PricePoint.objects.filter(market_id=question.market_id)
            .order_by("time")
            .values_list("outcome", "time", "probability")
        ):
            times, probs = self.series.setdefault(outcome, ([], []))
            times.append(time)
            probs.append(probability)
        lowered = {o.strip().lower(): o for o in self.series}
        self.yes = lowered.get("yes") or (sorted(self.series)[0] if self.series else None)
        self._lowered = lowered

    def price(self, outcome: str | None, at: datetime) -> float | None:
        if outcome is None:
            return None
        found = self.series.get(outcome) or self.series.get(self._lowered.get(outcome.strip().lower(), ""))
        if not found:
            return None
        times, probs = found
        i = bisect_right(times, at) - 1
        return probs[i] if i >= 0 else None

    def binary(self, at: datetime) -> float | None:
        return self.price(getattr(self, "yes", None), at) if self.series else None

    def vector(self, options: Sequence[str], at: datetime) -> dict[str, float] | None:
        if not self.series:
            return None
        prices = {o: self.price(o, at) for o in options}
        if any(p is None for p in prices.values()):
            return None
        return {o: float(p) for o, p in prices.items() if p is not None}


# ------------------------------------------------------------------------------------ one question


def _forecast_events(graph_events: Any) -> list[Event]:
    events: list[Event] = []
    if not isinstance(graph_events, list):
        return events
    for raw in graph_events:
        if not isinstance(raw, dict):
            continue
        day: date | None = None
        text = raw.get("date")
        if type(text) is str and len(text) >= 10:
            try:
                day = date.fromisoformat(text[:10])
            except ValueError:
                day = None
        title, description = raw.get("title"), raw.get("description")
        events.append(
            Event(
                str(raw.get("id")),
                title if type(title) is str else str(title or ""),
                description if type(description) is str else str(description or ""),
                day,
            )
        )
    return events


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


class QuestionGrader:
    """Everything about one question that does not depend on the forecast, built once per run."""

    def __init__(
        self,
        *,
        question: Question,
        resolution: Resolution,
        reference: Reference | None,
        matcher: MatcherSettings,
        key: str,
        now: datetime,
        reads: dict[int, list[Read]],
        served: ServedIndex | None = None,
    ) -> None:
        self.question = question
        self.resolution = resolution
        self.outcome = resolution.outcome
        self.void = resolution.kind == Resolution.Kind.ANNUL
        self.key = key
        self.now = now
        self.reads = reads
        self.served = served or ServedIndex({})
        self.matcher = matcher
        self.matcher_dict = matcher.as_dict()
        self.reference = reference
        self.built = reference is not None and reference.graph_built
        self.reference_ids: frozenset[int] = reference.source_article_ids if self.built and reference else frozenset()
        self.index: MatcherIndex | None = None
        if self.built and reference is not None:
            self.index = build_reference_index(
                [
                    Event(
                        id=str(e.id),
                        title=e.title,
                        description=e.description,
                        date=e.date,
                        magnitude=e.magnitude,
                        confidence=e.confidence,
                        has_impact=e.has_impact,
                        rejected=e.rejected,
                        is_outcome=e.is_outcome,
                    )
                    for e in reference.events
                ],
                matcher,
            )
        self.options = question_options(question)
        self.market = MarketSeries(question) if question.type in ("binary", "multiple_choice") else None
        self.cameo = cameo_children() if question.type == Question.Type.RELATION else None
        self.gold_relation = (
            sanitize_relation((self.outcome or {}).get("relations"), self.cameo)
            if self.cameo is not None and not self.void and isinstance(self.outcome, dict)
            else None
        )
        self.judge: Judge | None = None
        if question.type == Question.Type.OPEN_ENDED and not self.void:
            self.judge = judge_for_question(evidence=self._evidence_for)
        self.open_day = question.open_at.date()
        # What every grade of this run shares; each forecast's row starts as a copy.
        self.template: dict[str, Any] = {
            **{f.attname: f.get_default() for f in _GRADE_FIELDS},
            "is_current": True,
            "grader_version": GRADER_VERSION,
            "matcher_settings": _JsonText(json.dumps(self.matcher_dict)),
            "resolution_version": resolution.version,
            "reference_version": reference.version if reference is not None else None,
            "void": self.void,
            "inputs_key": key,
            "created_at": now,
        }

    # -- LRAE stage 2 evidence: the platform's corpus after the question's cut-off (t0)
    def _evidence_for(self, prediction: str) -> list[EvidenceItem]:
        terms = list(dict.fromkeys(tokenize(prediction)))[:12]
        if not terms:
            return []
        resolved_at = self.resolution.resolved_at or self.resolution.created_at
        as_of = resolved_at + timedelta(days=settings.HINDSIGHT_EVIDENCE_WINDOW_DAYS)
        page = articles_search(query=" or ".join(terms), as_of=as_of, limit=20)
        items = [
            # The search marks hits with STX/ETX for the HTML snippet; the judge wants plain text.
            EvidenceItem(article_id=r.id, text=f"{r.title}: {r.snippet}".translate(_MARKS).strip())
            for r in page.results
            if r.published_at is not None and r.published_at >= self.question.open_at
        ]
        return items[: settings.HINDSIGHT_JUDGE_EVIDENCE_ARTICLES]

    # -- forecasts
    def grade_batch(
        self, batch: Sequence[ForecastData], *, versions: Mapping[int, int], counting: set[int]
    ) -> list[dict[str, Any]]:
        """Grade rows (Grade field attname -> value) for a batch of forecasts, in batch order.

        Reasoning is scored for the whole batch in one call (``score_many``, vectorised by the hybrid matcher).
        """
        rows = [self._row(d, version=versions.get(d.id, 0) + 1, counts=d.id in counting) for d in batch]
        if self.index is not None and not self.void:
            scores = self.index.score_many([_forecast_events(d.graph_events) for d in batch])
            for row, score in zip(rows, scores, strict=True):
                self._reasoning(row, score)
        return rows

    def _row(self, data: ForecastData, *, version: int, counts: bool) -> dict[str, Any]:
        cutoff = data.knowledge_cutoff
        grade = dict(self.template)
        grade["forecast_id"] = data.id
        grade["version"] = version
        grade["contaminated"] = cutoff is not None and self.open_day < cutoff
        grade["cutoff_declared"] = cutoff is not None
        grade["counts"] = counts
        details: dict[str, Any] = {}
        grade["details"] = details
        if self.void:
            details["void"] = self.resolution.note or "The question was annulled."
            return grade
        # The forecast's moment: t_sim for a replay session, the server's receipt time for live.
        as_of = data.simulated_at or data.received_at
        try:
            self._outcome(grade, data, as_of, details)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            # A stored prediction that the rules cannot read is graded as ungradable, not skipped.
            details["outcome_error"] = str(exc)[:500]
        leak_as_of = forecast_as_of(self.question, simulated_at=data.simulated_at, received_at=data.received_at)
        self._evidence(grade, data, leak_as_of, details)
        return grade

    def _outcome(self, grade: dict[str, Any], data: ForecastData, as_of: datetime, details: dict[str, Any]) -> None:
        qtype = self.question.type
        prediction = data.prediction or {}
        y: Any = self.outcome
        if qtype == Question.Type.BINARY:
            p = prediction["probability"]
            s = outcome_rules.score_binary(p, bool(y))
            grade["correct"], grade["brier"], grade["log_score"] = s.correct, s.brier, s.log_score
            if self.market is not None:
                market_p = self.market.binary(as_of)
                grade["market_edge"] = outcome_rules.market_edge_binary(p, bool(y), market_p)
                if market_p is not None:
                    details["market_p"] = market_p
        elif qtype == Question.Type.MULTIPLE_CHOICE:
            probs = prediction["probabilities"]
            m = outcome_rules.score_multiple_choice(probs, self.options, y)
            grade["correct"], grade["brier"], grade["log_score"] = m.correct, m.brier, m.log_score
            grade["reduced_correct"] = m.correct
            details["predicted_option"] = m.predicted_option
            details["reduced"] = {"brier": _round(m.reduced_brier), "log_score": _round(m.reduced_log_score)}
            vector = self.market.vector(self.options, as_of) if self.market is not None else None
            if vector is not None:  # without market prices there is no edge (and nothing to score twice)
                grade["market_edge"] = outcome_rules.market_edge_multiple_choice(probs, self.options, y, vector)
        elif qtype == Question.Type.QUANTITY:
            if "value" in prediction:
                q = outcome_rules.score_point(prediction["value"], float(y))
            elif "interval" in prediction:
                lo, hi = prediction["interval"]
                q = outcome_rules.score_interval(lo, hi, float(y))
            else:
                q = outcome_rules.score_quantiles({float(k): v for k, v in prediction["quantiles"].items()}, float(y))
                grade["pinball"] = q.pinball_loss
            grade["correct"] = q.correct
            details["quantity"] = {
                "kind": q.kind,
                "absolute_error": _round(q.absolute_error),
                "relative_error": _round(q.relative_error),
                "interval_width": _round(q.interval_width),
            }
        elif qtype == Question.Type.TIMEFRAME:
            t = outcome_rules.score_timeframe(self.question.granularity, prediction["period"], y)
            grade["correct"] = t.correct
            details["period_offset"] = t.offset
        elif qtype == Question.Type.RELATION:
            assert self.cameo is not None and self.gold_relation is not None
            r = score_relation(prediction.get("relations"), self.gold_relation, self.cameo)
            grade["first_level_f1"], grade["second_level_f1"] = r.first_level.f1, r.second_level.f1
            grade["kl_binary"], grade["kl_quad"] = r.binary_kl, r.quad_kl
            details["relation"] = {
                "first_level": {"precision": r.first_level.precision, "recall": r.first_level.recall},
                "second_level": {"precision": r.second_level.precision, "recall": r.second_level.recall},
            }
        elif qtype == Question.Type.OPEN_ENDED:
            self._open_ended(grade, prediction, details)

    def _judgement(self, prediction: dict[str, Any]) -> tuple[Judgement, int]:
        assert self.judge is not None
        gold: Any = self.outcome
        events = prediction["events"] if "events" in prediction else [prediction["answer"]]
        predictions = [str(e) for e in events]
        if isinstance(gold, str):
            return self.judge.judge_argument(
                question=self.question.title, label=gold, prediction=" ".join(predictions)
            ), 1
        gold_list = [str(g) for g in gold]
        return self.judge.judge_list(question=self.question.title, gold=gold_list, predictions=predictions), len(
            gold_list
        )

    def judge_ahead(self, batch: Sequence[ForecastData]) -> str:
        """Ask the LLM judge about every forecast before any grade is written (its answers are cached
        for the rows). If it fails, the lexical judge takes over the whole question, so no question
        mixes judges; returns why it failed, or "" when it did not."""
        for data in batch:
            try:
                self._judgement(data.prediction or {})
            except JudgeUnavailable as exc:
                self.judge = LexicalJudge(fallback_reason=str(exc))
                return str(exc)
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # graded as ungradable by _row, as without the look-ahead
        return ""

    def use_key(self, key: str) -> None:
        self.key = key
        self.template["inputs_key"] = key

    def _open_ended(self, grade: dict[str, Any], prediction: dict[str, Any], details: dict[str, Any]) -> None:
        assert self.judge is not None
        judgement, n_gold = self._judgement(prediction)
        if isinstance(self.outcome, str):
            grade["correct"] = judgement.verdicts[0].gold_index == 0
        verdicts: list[PredictionVerdict] = judgement.verdicts
        s = score_open_ended(verdicts, n_gold, judge="llm" if self.judge.label == "llm" else "lexical")
        grade["open_precision"], grade["open_recall"], grade["open_f1"] = s.precision, s.recall, s.f1
        grade["judge"] = self.judge.label
        details["lrae"] = {
            "judge": self.judge.label,
            "model": self.judge.model,
            "counts": asdict(s.counts),
            "without_retrieval": {
                "precision": s.precision_without_retrieval,
                "recall": s.recall_without_retrieval,
                "f1": s.f1_without_retrieval,
            },
            "items": judgement.items,
        }
        fallback = getattr(self.judge, "fallback_reason", "")
        if fallback:
            details["lrae"]["fallback"] = f"Lexical judge standing in for the LLM judge: {fallback}"

    def _evidence(self, grade: dict[str, Any], data: ForecastData, as_of: datetime, details: dict[str, Any]) -> None:
        cited_ids = [a for a, _ in data.cited]
        published: dict[int | str, datetime | None] = dict(data.cited)
        urls = [s for s in data.sources or [] if isinstance(s, str)]
        # Leaks need only the forecast and the access log: counted whether or not the reference is ready.
        cited: list[int | str] = [*cited_ids, *urls]
        leaked, _unknown = leaked_items(cited, published, as_of)
        if leaked:
            details["leaked_article_ids"] = leaked
        # A replay forecast also leaks whatever the gateway served its agent, in any scope, dated at
        # or after its date (leaderboard.services.leaks).
        served = (
            self.served.leaked(agent_id=data.agent_id, until=data.received_at, as_of=as_of)
            if data.session_id is not None
            else []
        )
        if served:
            details["leaked_reads"] = {"count": len(served), "items": served[:LEAKED_READS_LISTED]}
        leaks: set[int | str] = {*leaked, *served}
        grade["leaks"] = len(leaks)
        if not self.built:
            return
        read: set[int] = set()
        for r in self.reads.get(data.agent_id, ()):
            if r.at > data.received_at:
                break
            if data.session_id is None or r.session_id == data.session_id:
                read.update(r.article_ids)
        # C: cited articles, cited URLs that are not archive articles, articles read for it, and the
        # leaked articles read elsewhere; a leaked item counts in C but is never credited as overlap.
        sources: set[int | str] = {*cited_ids, *read, *(k for k in served if isinstance(k, int))}
        sources.update(u for u in urls if u not in published)
        srcp = score_evidence(sources, self.reference_ids, leaked=leaks)
        grade["source_precision"] = srcp.source_precision
        grade["source_recall"] = srcp.source_recall
        details["evidence"] = {"sources": srcp.n_sources, "read": len(read), "overlap": srcp.n_overlap}

    def _reasoning(self, grade: dict[str, Any], r: ReasoningScore) -> None:
        # No graph, no reasoning score: every reasoning metric stays null (whatever the matcher).
        grade["carried_graph"] = r.n_forecast_events > 0
        if not grade["carried_graph"]:
            return
        grade["key_event_recall"] = r.ker
        grade["event_precision"] = r.event_precision
        grade["event_recall"] = r.event_recall
        grade["event_f1"] = r.event_f1
        grade["temporal_mae"] = r.temporal_mae_days
        grade["details"]["reasoning"] = {
            "forecast_events": r.n_forecast_events,
            "key_events": list(r.key_event_ids),
            "matched_key_events": list(r.matched_key_event_ids),
            "matches": [[m.forecast_id, m.reference_id, round(m.score, 4), m.day_diff] for m in r.matches],
        }


# ------------------------------------------------------------------------------------ writes


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# Grade columns in COPY order (every concrete field but the primary key).
_GRADE_FIELDS: tuple[Field[Any, Any], ...] = tuple(f for f in Grade._meta.concrete_fields if not f.primary_key)
_GRADE_COLUMNS: tuple[str, ...] = tuple(f.column or f.attname for f in _GRADE_FIELDS)  # concrete: column is set


class _JsonText(str):
    """A value already serialised for a JSON column (the matcher settings, the same on every row)."""


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python number it holds (orjson's fallback for types it does not know)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _json(value: Any) -> str | bytes:
    # The JSON JSONField would send, serialised by orjson (the details of every grade are the
    # largest values a grading run writes); copy_rows takes the text as it is.
    return value if type(value) is _JsonText else orjson.dumps(value, default=_plain)


def _portable(value: Any) -> Any:
    """A row value as the ORM takes it (pre-serialised JSON decoded again)."""
    return json.loads(value) if type(value) is _JsonText else value


def _nullable(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else convert(value)


def _column_converter(field: Field[Any, Any]) -> Callable[[Any], Any]:
    """The Python value a column gets, as the field's get_db_prep_save would give it."""
    kind = field.get_internal_type()
    if kind == "JSONField":
        return _json
    if kind == "FloatField":
        return _nullable(float)
    if kind == "BooleanField":
        return _nullable(bool)
    if kind in ("PositiveIntegerField", "IntegerField", "BigIntegerField", "ForeignKey"):
        return _nullable(int)
    if kind == "CharField":
        return _nullable(str)
    if kind == "DateTimeField":
        return lambda value: value  # aware datetimes go to timestamptz as they are
    raise TypeError(f"Grade.{field.name}: no COPY conversion for {kind}")


_GRADE_CONVERTERS = tuple((f.attname, _column_converter(f)) for f in _GRADE_FIELDS)


@transaction.atomic
def _write_batch(*, forecast_ids: Sequence[int], rows: list[dict[str, Any]], replaces_current: bool) -> None:
    """Mark the batch's current grades not current and insert the new versions.

    Rows go in with binary COPY, several times faster than a multi-row INSERT for wide rows with JSON.
    """
    if replaces_current:
        Grade.objects.filter(forecast_id__in=forecast_ids, is_current=True).update(is_current=False)
    if not rows:
        return
    if connection.vendor != "postgresql":
        Grade.objects.bulk_create(
            [Grade(**{name: _portable(row[name]) for name, _ in _GRADE_CONVERTERS}) for row in rows], batch_size=500
        )
        return
    # The default database: the one transaction.atomic above wraps.
    with connection.cursor() as cursor:
        copy_rows(
            cursor,
            table=Grade._meta.db_table,
            columns=_GRADE_COLUMNS,
            rows=([convert(row[name]) for name, convert in _GRADE_CONVERTERS] for row in rows),
        )


class _BatchWriter:
    """Writes grade batches (``_write_batch``) for one run.

    On PostgreSQL, when the caller holds no transaction, batches are written by one background
    thread over its own connection, so the database stores a batch while this thread scores the
    next one (on two cores the two overlap instead of adding up). At most one batch is in flight;
    a failed write is raised by the next ``submit`` or on leaving the block, and leaving the block
    always waits for the write in flight, so nothing is written after the run's claims are released.
    Inside a caller's transaction (or on SQLite) batches are written in place, in that transaction.
    """

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None
        if connection.vendor == "postgresql" and not connection.in_atomic_block:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grade-writer")

    def __enter__(self) -> _BatchWriter:
        return self

    def submit(self, *, forecast_ids: Sequence[int], rows: list[dict[str, Any]], replaces_current: bool) -> None:
        if self._pool is None:
            _write_batch(forecast_ids=forecast_ids, rows=rows, replaces_current=replaces_current)
            return
        self._wait()
        self._pending = self._pool.submit(
            _write_batch, forecast_ids=forecast_ids, rows=rows, replaces_current=replaces_current
        )

    def _wait(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        try:
            self._wait()
        except Exception:
            if exc_type is None:
                raise
            logger.exception("a grade batch write failed while the run was failing too")
        finally:
            if self._pool is not None:
                self._pool.submit(connections.close_all).result()  # the writer thread's connection
                self._pool.shutdown()


def _sync_counts(*, current: Mapping[int, CurrentGrade], counting: set[int], regraded: set[int]) -> int:
    """Flip ``counts`` on current grades that were not regraded (``current`` as read before the run's
    writes, which touched only the regraded forecasts)."""
    turn_on = [fid for fid, g in current.items() if fid not in regraded and fid in counting and not g.counts]
    turn_off = [fid for fid, g in current.items() if fid not in regraded and fid not in counting and g.counts]
    n = 0
    if turn_on:
        n += Grade.objects.filter(forecast_id__in=turn_on, is_current=True).update(counts=True)
    if turn_off:
        n += Grade.objects.filter(forecast_id__in=turn_off, is_current=True).update(counts=False)
    return n


@dataclass(eq=False)
class _Plan:
    """One claimed question of a run: what it grades and against what."""

    question: Question
    report: GradingReport
    grader: QuestionGrader | None = None
    todo: list[int] = field(default_factory=list)
    current: dict[int, CurrentGrade] = field(default_factory=dict)
    versions: dict[int, int] = field(default_factory=dict)
    counting: set[int] = field(default_factory=set)


def _plan(
    question: Question,
    *,
    resolution: Resolution | None,
    reference: Reference | None,
    heads_and_grades: HeadsAndGrades,
    reads: dict[int, list[Read]],
    matcher: MatcherSettings,
    now: datetime,
    force: bool,
) -> _Plan:
    report = GradingReport(question_id=question.pk, status="up_to_date")
    plan = _Plan(question=question, report=report)
    if resolution is None or resolution.kind == Resolution.Kind.UNRESOLVE:
        report.withdrawn = Grade.objects.filter(forecast__question_id=question.pk, is_current=True).update(
            is_current=False
        )
        report.status = "withdrawn"
        return plan
    if resolution.kind not in RESOLVED_KINDS:
        reference = None

    def key_for(judge: str) -> str:
        return inputs_key(
            question_type=question.type,
            resolution_version=resolution.version,
            resolution_kind=resolution.kind,
            reference=reference_key_of(reference),
            matcher=matcher_digest(matcher),
            judge=judge,
        )

    key = key_for(judge_label())
    report.inputs_key = key
    report.void = resolution.kind == Resolution.Kind.ANNUL
    if reference is not None:
        report.reference = "built" if reference.graph_built else "not_built"
    heads, plan.current, plan.versions = heads_and_grades
    plan.counting = counting_forecasts(question, heads)
    plan.todo = [h.id for h in heads if force or h.id not in plan.current or plan.current[h.id].inputs_key != key]
    report.unchanged = len(heads) - len(plan.todo)
    if plan.todo:
        plan.grader = QuestionGrader(
            question=question,
            resolution=resolution,
            reference=reference,
            matcher=matcher,
            key=key,
            now=now,
            reads=reads if reference is not None and reference.graph_built else {},
        )
        judge = plan.grader.judge
        if isinstance(judge, LLMJudge):
            report.judge_fallback = plan.grader.judge_ahead(forecast_data(plan.todo))
            report.judge_usage = judge.usage()
            if report.judge_fallback:
                # The whole question moves to the lexical judge: every forecast not yet on its key.
                key = key_for(LexicalJudge.label)
                plan.grader.use_key(key)
                report.inputs_key = key
                plan.todo = [
                    h.id for h in heads if force or h.id not in plan.current or plan.current[h.id].inputs_key != key
                ]
                report.unchanged = len(heads) - len(plan.todo)
                logger.warning("question %s: %s; judged lexically", question.pk, report.judge_fallback)
        report.judge = plan.grader.judge.label if plan.grader.judge is not None else ""
        report.status = "graded" if plan.todo else "up_to_date"
    return plan


def _grade(questions: Sequence[Question], *, now: datetime, force: bool) -> dict[int, GradingReport]:
    """Grade claimed questions together: every read is one query for all of them, and forecasts
    are scored and written in batches of HINDSIGHT_GRADING_BATCH_SIZE that may span questions
    (each batch is one COPY and one commit)."""
    ids = [q.pk for q in questions]
    resolutions = current_resolutions(ids)
    references = references_for_questions(
        [qid for qid in ids if qid in resolutions and resolutions[qid].kind in RESOLVED_KINDS]
    )
    heads_and_grades = forecast_heads_and_grades_of(ids)
    reads = gateway_reads_for_questions([qid for qid, ref in references.items() if ref.graph_built])
    matcher = matcher_settings()
    plans = [
        _plan(
            question,
            resolution=resolutions.get(question.pk),
            reference=references.get(question.pk),
            heads_and_grades=heads_and_grades.get(question.pk, ([], {}, {})),
            reads=reads.get(question.pk, {}),
            matcher=matcher,
            now=now,
            force=force,
        )
        for question in questions
    ]
    grading = [plan for plan in plans if plan.grader is not None]
    served = ServedIndex.for_questions(
        [plan.question for plan in grading], {qid: found[0] for qid, found in heads_and_grades.items()}
    )
    for plan in grading:
        assert plan.grader is not None
        plan.grader.served = served
    work = [(plan, forecast_id) for plan in grading for forecast_id in plan.todo]
    with _BatchWriter() as writer:
        for chunk in _chunks(work, settings.HINDSIGHT_GRADING_BATCH_SIZE):
            data = {d.id: d for d in forecast_data([forecast_id for _, forecast_id in chunk])}
            rows: list[dict[str, Any]] = []
            replaces_current = False
            for plan, items in groupby(chunk, key=itemgetter(0)):
                # A forecast deleted since the heads were read is simply gone.
                batch = [data[forecast_id] for _, forecast_id in items if forecast_id in data]
                assert plan.grader is not None
                rows.extend(plan.grader.grade_batch(batch, versions=plan.versions, counting=plan.counting))
                replaces_current = replaces_current or any(d.id in plan.current for d in batch)
                plan.report.graded += len(batch)
            writer.submit(
                forecast_ids=[forecast_id for _, forecast_id in chunk], rows=rows, replaces_current=replaces_current
            )
    for plan in plans:
        if plan.report.status != "withdrawn":
            plan.report.counts_updated = _sync_counts(
                current=plan.current, counting=plan.counting, regraded=set(plan.todo)
            )
    return {plan.question.pk: plan.report for plan in plans}


@transaction.atomic
def grades_refresh_contamination(*, agent_id: int) -> list[int]:
    """Recompute the contamination data of an agent's current grades from its declared cutoff (after
    the agent changed it); returns the ids of the questions whose grades changed.

    Only the two flags change, in place: the scores do not depend on the cutoff, so no new grade
    version is written.
    """
    cutoff = Agent.objects.filter(pk=agent_id).values_list("knowledge_cutoff", flat=True).first()
    grades = Grade.objects.filter(forecast__agent_id=agent_id, is_current=True)
    by_flags: dict[tuple[bool, bool], list[int]] = defaultdict(list)
    questions: set[int] = set()
    for grade_id, question_id, open_at, contaminated, declared in grades.values_list(
        "id", "forecast__question_id", "forecast__question__open_at", "contaminated", "cutoff_declared"
    ):
        wanted = (cutoff is not None and open_at.date() < cutoff, cutoff is not None)
        if wanted != (contaminated, declared):
            by_flags[wanted].append(grade_id)
            questions.add(question_id)
    for (contaminated, declared), ids in by_flags.items():
        Grade.objects.filter(pk__in=ids).update(contaminated=contaminated, cutoff_declared=declared)
    return sorted(questions)


def grading_request_rerun(*, question_id: int) -> None:
    """Ask the worker holding the question to run once more after it finishes (it may have read
    the question before the change that sent this request)."""
    QuestionGradingState.objects.filter(question_id=question_id).update(rerun_requested=True)


def _take_rerun_request(question_id: int) -> bool:
    return (
        QuestionGradingState.objects.filter(question_id=question_id, rerun_requested=True).update(rerun_requested=False)
        == 1
    )


def _release(question_id: int, *, now: datetime, report: GradingReport) -> None:
    """Record how the run ended and release our claim, in one UPDATE."""
    changed = report.graded or report.withdrawn or report.counts_updated
    updates: dict[str, Any] = {
        "inputs_key": report.inputs_key,
        "graded_at": now,
        "last_error": "",
        "checks": F("checks") + 1,
    }
    if changed:
        updates["runs"] = F("runs") + 1
    QuestionGradingState.objects.filter(question_id=question_id).update(**updates, claimed_at=released(now))


def _release_failed(question_id: int, *, now: datetime, exc: BaseException) -> None:
    QuestionGradingState.objects.filter(question_id=question_id).update(
        last_error=f"{type(exc).__name__}: {exc}"[:2000], claimed_at=released(now)
    )


def _run_claimed(questions: Sequence[Question], *, now: datetime, force: bool) -> dict[int, GradingReport]:
    """One grading run over questions we hold; every claim is released, with how its run ended.

    When the joint run fails, each question is run on its own, so a question that cannot be
    graded records its error and holds back no other; the first error is raised afterwards (the
    task retries, and finds the others up to date).
    """
    try:
        reports = _grade(questions, now=now, force=force)
    except Exception as exc:
        if len(questions) == 1:
            _release_failed(questions[0].pk, now=now, exc=exc)
            raise
        logger.warning("grading %d questions together failed (%s); grading them one by one", len(questions), exc)
        reports = {}
        failure: Exception | None = None
        for question in questions:
            try:
                reports.update(_grade([question], now=now, force=force))
            except Exception as one:
                _release_failed(question.pk, now=now, exc=one)
                failure = failure or one
                continue
            _release(question.pk, now=now, report=reports[question.pk])
            logger.info("graded question %s: %s", question.pk, reports[question.pk].as_dict())
        if failure is not None:
            raise failure from exc
        return reports
    for question in questions:
        _release(question.pk, now=now, report=reports[question.pk])
        logger.info("graded question %s: %s", question.pk, reports[question.pk].as_dict())
    return reports


def grade_question(*, question_id: int, now: datetime | None = None, force: bool = False) -> GradingReport:
    """Grade (or regrade) every forecast of one question; see the module docstring and ``grade_questions``."""
    return grade_questions(question_ids=[question_id], now=now, force=force)[0]


def grade_questions(
    *, question_ids: Sequence[int], now: datetime | None = None, force: bool = False
) -> list[GradingReport]:
    """Grade (or regrade) every forecast of each question, in one run; reports in the given order.

    ``force`` writes a new version for every forecast even when its grade is up to date (the
    ``regrade --force`` command). Not wrapped in one transaction on purpose: the claims must be
    visible to other workers at once, and each batch commits on its own so a crash loses at most
    one batch (a rerun grades only what is still stale).

    A question another worker holds gets a rerun request and the report ``busy``; the holder
    checks for requests after releasing its claim and runs again, so a change that arrives during
    a run is never lost (and the sweeper re-drives anything else).
    """
    fixed_now = now
    now = now or timezone.now()
    wanted = list(dict.fromkeys(question_ids))
    found = {q.pk: q for q in Question.objects.filter(pk__in=wanted)}
    reports: dict[int, GradingReport] = {}
    claimed: list[Question] = []
    for question_id in wanted:
        if question_id not in found:
            reports[question_id] = GradingReport(question_id=question_id, status="missing")
        elif grading_claim(question_id=question_id, now=now):
            claimed.append(found[question_id])
        else:
            grading_request_rerun(question_id=question_id)
            # The holder may have released (and checked for requests) in between: try once more.
            if grading_claim(question_id=question_id, now=now):
                _take_rerun_request(question_id)
                claimed.append(found[question_id])
            else:
                reports[question_id] = GradingReport(question_id=question_id, status="busy")
    if claimed:
        with cyclic_gc_paused(), claims_kept_alive([q.pk for q in claimed], claimed_at=now):
            reports.update(_run_claimed(claimed, now=now, force=force))
    # Released first, then look for requests: a request left after this check finds the claim free.
    for question in claimed:
        report = reports[question.pk]
        while _take_rerun_request(question.pk):
            again_now = fixed_now or timezone.now()
            if not grading_claim(question_id=question.pk, now=again_now):
                grading_request_rerun(question_id=question.pk)
                break
            with claims_kept_alive([question.pk], claimed_at=again_now):
                again = _run_claimed([question], now=again_now, force=False)[question.pk]
            report.graded += again.graded
            report.withdrawn += again.withdrawn
            report.counts_updated += again.counts_updated
            report.inputs_key = again.inputs_key
            report.status = again.status if again.status != "up_to_date" else report.status
    return [reports[question_id] for question_id in question_ids]
