"""Grading runs: every forecast of a question scored on outcome, evidence and reasoning.

``grade_question`` is the one entry point (tasks, receivers, the sweeper and the ``regrade``
command call it). What it does depends on the question's current resolution:

- resolved / amended: every forecast whose current grade was not computed from the question's
  current inputs key (see ``leaderboard.selectors.grade_keys``) gets a new grade version, in batches:
  scored by ``leaderboard.services.grade_scoring`` and stored by ``leaderboard.services.grade_writer``.
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

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from itertools import groupby
from operator import itemgetter
from typing import Any, TypeVar

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from common.bulk import cyclic_gc_paused
from grading.scoring.matching import MatcherSettings
from grading.selectors import Reference, references_for_questions
from ingestion.models import Question, Resolution
from leaderboard.judges import LexicalJudge, LLMJudge
from leaderboard.models import Grade, QuestionGradingState
from leaderboard.selectors.grade_inputs import (
    CurrentGrade,
    ForecastHead,
    HeadsAndGrades,
    Read,
    current_resolutions,
    forecast_data,
    forecast_heads_and_grades_of,
    gateway_reads_for_questions,
)
from leaderboard.selectors.grade_keys import inputs_key, judge_label, matcher_digest, matcher_settings, reference_key_of
from leaderboard.services.claims import claims_kept_alive, grading_claim, released
from leaderboard.services.grade_scoring import QuestionGrader
from leaderboard.services.grade_writer import GradeBatchWriter
from leaderboard.services.leaks import ServedIndex

logger = logging.getLogger(__name__)
T = TypeVar("T")

RESOLVED_KINDS = (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND)


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


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


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
    with GradeBatchWriter() as writer:
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
