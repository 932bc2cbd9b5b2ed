"""Hindsight builds for a batch of resolved questions (a round import resolves hundreds at once).

One run per batch rather than one task per question:

- every build is claimed as the single-question task claims it (one build per question and
  resolution version, so a duplicate delivery does nothing);
- a question with no article at all in its evidence window cannot get a graph from either
  builder: it is recorded as ``no_articles`` in bulk, without running a builder. A round of
  historical questions resolved before the corpus begins is mostly such questions;
- the others are built one by one with ``hindsight_build``, each failure recorded on its own
  question (and its claim released for a retry) while the batch goes on;
- the new graphs are announced once, as ``references_changed``, so the regrades they cause are
  batched too.
"""

from __future__ import annotations

import logging
import time as clock
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, time

from django.db import transaction
from django.utils import timezone

from common.progress import report_tally
from grading.builders.common import BuildContext
from grading.builders.llm import evidence_as_of
from grading.models import GraphBuildAttempt, HindsightBuildRequest
from grading.selectors import latest_attempt
from grading.services import default_builder, hindsight_build, hindsight_build_release, references_collected
from grading.signals import references_changed
from ingestion.models import Article, Question, Resolution
from ingestion.selectors.questions import CHUNK, question_current_resolutions

logger = logging.getLogger(__name__)
BUILD_KINDS = (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND)


@dataclass
class BatchBuildReport:
    questions: int = 0
    already_claimed: int = 0  # another delivery has (or had) the build
    built: int = 0  # a graph stored (passing the quality thresholds or not)
    no_articles: int = 0  # nothing published in the evidence window: no builder ran
    no_graph: int = 0  # a builder ran and produced no graph (reason on its attempt)
    failed: list[int] = field(default_factory=list)  # question ids whose build raised

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def __add__(self, other: BatchBuildReport) -> BatchBuildReport:
        """Two batches' reports as one (a round's batches, summed for one progress line)."""
        return BatchBuildReport(
            questions=self.questions + other.questions,
            already_claimed=self.already_claimed + other.already_claimed,
            built=self.built + other.built,
            no_articles=self.no_articles + other.no_articles,
            no_graph=self.no_graph + other.no_graph,
            failed=[*self.failed, *other.failed],
        )

    def summary(self) -> str:
        text = (
            f"hindsight graphs for {self.questions} resolved questions: {self.built} built, "
            f"{self.no_articles} with no article in their window, {self.no_graph} without a graph"
        )
        if self.already_claimed:
            text += f", {self.already_claimed} already claimed"
        if self.failed:
            text += f", {len(self.failed)} failed (questions {', '.join(map(str, self.failed))})"
        return text


def hindsight_build_batch(*, items: Sequence[tuple[int, int]], now: datetime | None = None) -> BatchBuildReport:
    """Build the hindsight graphs of (question id, resolution version) pairs; see the module docstring.

    ``now`` stamps the claims and the questions recorded without a builder run; each build that
    runs stamps its own time, as a batch can take minutes."""
    now = now or timezone.now()
    report = BatchBuildReport(questions=len(items))
    claimed = _claim(items, now=now)
    report.already_claimed = len(items) - len(claimed)
    empty, rest = _split_by_evidence(claimed)
    _record_no_articles(empty, builder=default_builder(), now=now)
    report.no_articles = len(empty)
    with references_collected() as changed:
        for question_id, version in rest:
            try:
                graph = hindsight_build(question_id=question_id)
            except Exception as exc:
                logger.exception("hindsight build for question %s (batch) failed", question_id)
                _record_failure(question_id, version, exc)
                report.failed.append(question_id)
                continue
            hindsight_build_release(question_id=question_id, resolution_version=version, finished=True)
            if graph is None:
                report.no_graph += 1
            else:
                report.built += 1
    if changed:
        question_ids = sorted(set(changed))
        transaction.on_commit(lambda: references_changed.send(sender=HindsightBuildRequest, question_ids=question_ids))
    report_tally(logger, "hindsight batch builds", report)
    return report


def _claim(items: Sequence[tuple[int, int]], *, now: datetime) -> list[tuple[int, int]]:
    """The builds this run claims (each with a conditional UPDATE, as ``hindsight_build_claim``)."""
    wanted = list(dict.fromkeys((int(q), int(v)) for q, v in items))
    existing = set(Question.objects.filter(pk__in=[q for q, _ in wanted]).values_list("pk", flat=True))
    wanted = [(q, v) for q, v in wanted if q in existing]
    claimed = []
    with transaction.atomic():
        HindsightBuildRequest.objects.bulk_create(
            [HindsightBuildRequest(question_id=q, resolution_version=v) for q, v in wanted], ignore_conflicts=True
        )
        for question_id, version in wanted:
            if HindsightBuildRequest.objects.filter(
                question_id=question_id, resolution_version=version, claimed_at=None
            ).update(claimed_at=now):
                claimed.append((question_id, version))
    return claimed


def _split_by_evidence(
    claimed: list[tuple[int, int]],
) -> tuple[list[tuple[BuildContext, int]], list[tuple[int, int]]]:
    """Resolved questions whose evidence window holds no article, and the rest (built one by one)."""
    ids = [question_id for question_id, _ in claimed]
    questions = Question.objects.in_bulk(ids)
    resolutions = question_current_resolutions(ids)
    known: dict[tuple[datetime, datetime], bool] = {}
    empty: list[tuple[BuildContext, int]] = []
    rest: list[tuple[int, int]] = []
    for question_id, version in claimed:
        question, resolution = questions.get(question_id), resolutions.get(question_id)
        if (
            question is None
            or resolution is None
            or question.status != Question.Status.RESOLVED
            or resolution.kind not in BUILD_KINDS
        ):
            rest.append((question_id, version))  # hindsight_build records why nothing is built
            continue
        ctx = BuildContext.for_question(question, resolution)
        window = _evidence_window(ctx)
        if window not in known:
            known[window] = Article.objects.filter(published_at__gte=window[0], published_at__lte=window[1]).exists()
        if known[window]:
            rest.append((question_id, version))
        else:
            empty.append((ctx, version))
    return empty, rest


def _evidence_window(ctx: BuildContext) -> tuple[datetime, datetime]:
    """Where either builder looks for articles: from the offline builder's first day (lookback
    before t0) to the later of the resolution and the LLM builder's evidence cut-off."""
    return datetime.combine(ctx.earliest, time.min, tzinfo=UTC), max(ctx.t_res, evidence_as_of(ctx))


def _record_no_articles(empty: list[tuple[BuildContext, int]], *, builder: str, now: datetime) -> None:
    """One finished attempt per question, reason ``no_articles``, and the claims marked finished."""
    if not empty:
        return
    attempts = []
    for ctx, _ in empty:
        start, end = _evidence_window(ctx)
        attempts.append(
            GraphBuildAttempt(
                question_id=ctx.question_id,
                builder=builder,
                started_at=now,
                finished_at=now,
                succeeded=False,
                reason=GraphBuildAttempt.Reason.NO_ARTICLES,
                resolution_version=ctx.resolution_version,
                error=f"No articles were published between {start.isoformat()} and {end.isoformat()}, "
                "the question's evidence window; no builder ran.",
            )
        )
    by_version: dict[int, list[int]] = defaultdict(list)
    for ctx, version in empty:
        by_version[version].append(ctx.question_id)
    with transaction.atomic():
        GraphBuildAttempt.objects.bulk_create(attempts, batch_size=CHUNK)
        for version, question_ids in by_version.items():
            for offset in range(0, len(question_ids), CHUNK):
                HindsightBuildRequest.objects.filter(
                    question_id__in=question_ids[offset : offset + CHUNK], resolution_version=version
                ).update(finished_at=now)


def _record_failure(question_id: int, version: int, exc: Exception) -> None:
    """An attempt that says what went wrong, and the claim released so a retry can take the build."""
    try:
        now = timezone.now()
        GraphBuildAttempt.objects.create(
            question_id=question_id,
            builder=default_builder(),
            started_at=now,
            finished_at=now,
            reason=GraphBuildAttempt.Reason.ERROR,
            resolution_version=version,
            error=f"The build failed in a batch: {type(exc).__name__}: {exc}"[:2000],
        )
        hindsight_build_release(question_id=question_id, resolution_version=version, finished=False)
    except Exception:  # the database may be what failed; the batch goes on
        logger.exception("recording the failed hindsight build of question %s failed", question_id)


@dataclass(frozen=True)
class SurveyRow:
    """One question's build in a survey: passed, failed the thresholds (with why), or no graph."""

    question_id: int
    external_id: str
    title: str
    passed: bool
    events: int = 0
    sources: int = 0
    depth: int = 0
    links: int = 0
    min_sources: int = 0  # the sources threshold the graph was checked against (fitted to the archive)
    relevant: int | None = None  # the articles the builder found about the question, when it says
    reasons: tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass
class SurveyReport:
    rows: list[SurveyRow] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> int:
        return sum(row.passed for row in self.rows)

    def summary(self) -> str:
        return (
            f"{self.passed} of {len(self.rows)} resolved questions got a hindsight graph that passes the quality "
            f"thresholds ({self.seconds:.1f} s)"
        )


def hindsight_build_survey(*, question_ids: Sequence[int], builder: str | None = None) -> SurveyReport:
    """Build a new graph for each question, one by one, and say which pass the thresholds and why
    the others fail (the failed checks, or the reason no graph was built). One question's failure
    never stops the others; new graphs are announced together, as a batch build announces them."""
    report = SurveyReport()
    started = clock.perf_counter()
    questions = Question.objects.in_bulk(list(question_ids))
    with references_collected() as changed:
        for question_id in question_ids:
            question = questions.get(question_id)
            if question is None:
                continue
            began = clock.perf_counter()
            try:
                graph = hindsight_build(question_id=question_id, builder=builder)
            except Exception as exc:
                logger.exception("hindsight build for question %s (survey) failed", question_id)
                graph, error = None, f"error: {type(exc).__name__}: {exc}"
            else:
                attempt = latest_attempt(question_id) if graph is None else None
                error = f"{attempt.reason}: {attempt.error}" if attempt else "no graph"
            seconds = round(clock.perf_counter() - began, 2)
            if graph is None:
                row = SurveyRow(
                    question_id, question.external_id or "", question.title, False, reasons=(error,), seconds=seconds
                )
            else:
                quality = graph.quality
                row = SurveyRow(
                    question_id,
                    question.external_id or "",
                    question.title,
                    bool(graph.graph_built),
                    events=int(quality.get("events", 0)),
                    sources=int(quality.get("sources", 0)),
                    depth=int(quality.get("depth", 0)),
                    links=int(quality.get("links", 0)),
                    min_sources=int(quality.get("thresholds", {}).get("min_sources", 0)),
                    relevant=_relevant_articles(graph.pk),
                    reasons=tuple(quality.get("failures", [])),
                    seconds=seconds,
                )
            report.rows.append(row)
    if changed:
        ids = sorted(set(changed))
        transaction.on_commit(lambda: references_changed.send(sender=HindsightBuildRequest, question_ids=ids))
    report.seconds = round(clock.perf_counter() - started, 2)
    return report


def _relevant_articles(graph_id: int) -> int | None:
    """How many articles the build found about the question (its log's last round says)."""
    attempt = GraphBuildAttempt.objects.filter(graph_id=graph_id).order_by("-id").first()
    rounds = [entry for entry in (attempt.log if attempt else []) if isinstance(entry, dict)]
    value = rounds[-1].get("relevant_articles") if rounds else None
    return int(value) if isinstance(value, int) else None
