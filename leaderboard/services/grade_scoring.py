"""Scoring of one question's forecasts into grade rows: outcome, evidence and reasoning.

``QuestionGrader`` holds everything about a question that does not depend on the forecast (its
resolution, hindsight reference and matcher index, market prices, judge), built once per run,
and turns batches of forecasts into grade rows (``leaderboard.services.grade_writer``) in batch
order. Outcome is always scored; evidence (SrcP, source recall) and reasoning (KER, event
P/R/F1, temporal MAE) only when the reference passed its quality thresholds (``graph_built``).
Leaks need no reference and are always counted. An annulled question's rows are void.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError

from grading.embeddings import stored_embedding_cache
from grading.scoring import GRADER_VERSION
from grading.scoring import outcome as outcome_rules
from grading.scoring.evidence import leaked_items, score_evidence
from grading.scoring.matchers import build_reference_index
from grading.scoring.matching import Event, MatcherIndex, MatcherSettings, ReasoningScore
from grading.scoring.open_ended import PredictionVerdict, score_open_ended
from grading.scoring.relation import sanitize_relation, score_relation
from grading.selectors import Reference
from grading.text_facts import stored_facts_store
from ingestion.models import Question, Resolution
from ingestion.reference_data import cameo_children
from ingestion.selectors.evidence import articles_search
from ingestion.text import tokenize
from leaderboard.judges import EvidenceItem, Judge, Judgement, JudgeUnavailable, LexicalJudge, judge_for_question
from leaderboard.selectors.grade_inputs import ForecastData, Read
from leaderboard.selectors.market_prices import MarketSeries
from leaderboard.services.grade_writer import blank_grade_row
from leaderboard.services.leaks import ServedIndex, forecast_as_of
from leaderboard.services.predictions import question_options

logger = logging.getLogger(__name__)

# A grade's details list this many of its leaked reads (the count is always complete).
LEAKED_READS_LISTED = 50
_MARKS = str.maketrans("", "", "\x02\x03")


def forecast_events(graph_events: Any) -> list[Event]:
    """A stored forecast graph's events as the matcher reads them (unreadable entries skipped)."""
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


def _failure(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)


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
        # Why no forecast of this question can have a reasoning score (the hindsight graph's text
        # could not be read), or "".
        self.reasoning_error = ""
        if self.built and reference is not None:
            self.index = self._index(reference, matcher)
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
            **blank_grade_row(),
            "is_current": True,
            "grader_version": GRADER_VERSION,
            "matcher_settings": self.matcher_dict,
            "resolution_version": resolution.version,
            "reference_version": reference.version if reference is not None else None,
            "void": self.void,
            "inputs_key": key,
            "created_at": now,
        }

    def _index(self, reference: Reference, matcher: MatcherSettings) -> MatcherIndex | None:
        """The matcher's index of the hindsight events; None (every forecast's reasoning then
        ungradable, its outcome and evidence graded) when the matcher cannot read the graph."""
        events = [
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
        ]
        try:
            return build_reference_index(
                events,
                matcher,
                question=self.question.title,
                # Vectors computed once ever per distinct text (the guarded matcher's embeddings).
                embeddings=stored_embedding_cache(),
                facts=stored_facts_store(),  # and parse facts
            )
        except DatabaseError:
            raise
        except Exception as exc:  # a defect in reading text must not stop the question's grading
            logger.exception("question %s: the matcher cannot read the hindsight graph", self.question.pk)
            self.reasoning_error = f"The event matcher could not read the hindsight graph ({_failure(exc)})."
            return None

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
        if self.void:
            return rows
        if self.index is not None:
            scores = self._reasoning_scores([forecast_events(d.graph_events) for d in batch])
            for row, score in zip(rows, scores, strict=True):
                if isinstance(score, str):
                    row["details"]["reasoning_error"] = score
                else:
                    self._reasoning(row, score)
        elif self.reasoning_error:
            for row, data in zip(rows, batch, strict=True):
                if forecast_events(data.graph_events):
                    row["details"]["reasoning_error"] = self.reasoning_error
        return rows

    def _reasoning_scores(self, forecasts: Sequence[Sequence[Event]]) -> Sequence[ReasoningScore | str]:
        """Each forecast's reasoning score, or why the matcher could not score it. A forecast whose
        text the matcher cannot read is graded without reasoning and holds back no other; when no
        forecast of several can be scored the fault is not theirs, and it is raised (the run fails,
        records why, and is tried again)."""
        assert self.index is not None
        try:
            return self.index.score_many(forecasts)
        except DatabaseError:
            raise
        except Exception as exc:
            first = exc
        out: list[ReasoningScore | str] = []
        for events in forecasts:
            try:
                out.append(self.index.score(events))
            except DatabaseError:
                raise
            except Exception as exc:  # a defect in reading one forecast's text
                logger.exception("question %s: the matcher cannot read a forecast's graph", self.question.pk)
                out.append(f"The event matcher could not read this forecast's graph ({_failure(exc)}).")
        if len(out) > 1 and all(isinstance(score, str) for score in out):
            raise first
        return out

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
            if s.predicted is None:
                details["no_call"] = True  # exactly 50%: leans to neither answer, so not correct
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
            if m.tied_options:
                details["no_call"] = True  # options tied for the highest probability: no single pick
                details["tied_options"] = list(m.tied_options)
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
        # A list answer's near-duplicate events count once (an argument answer is one prediction).
        texts = [str(e) for e in prediction["events"]] if "events" in prediction else None
        s = score_open_ended(
            verdicts,
            n_gold,
            judge="llm" if self.judge.label == "llm" else "lexical",
            predictions=texts if texts is not None and len(texts) == len(verdicts) else None,
        )
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
        if r.verdicts:  # the guarded matcher's verdict on every pair it considered
            grade["details"]["reasoning"]["verdicts"] = [[f, ref, round(sim, 4), v] for f, ref, sim, v in r.verdicts]
