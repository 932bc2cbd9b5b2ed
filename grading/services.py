"""Hindsight graph writes: building a new version, and reviewers' decisions on events."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from grading.builders import llm, offline
from grading.builders.common import BuildContext, BuildError, BuildResult, thresholds_from_settings
from grading.builders.draft import GraphDraft
from grading.embeddings import event_texts_embed
from grading.models import (
    CausalLink,
    GraphBuildAttempt,
    HindsightBuildRequest,
    HindsightEvent,
    HindsightGraph,
    OutcomeImpact,
)
from grading.scoring.guarded_texts import embeddable_texts, parsed_texts
from grading.scoring.matching import Event
from grading.signals import reference_changed
from grading.text_facts import event_texts_parse
from ingestion.models import Article, Question, Resolution

logger = logging.getLogger(__name__)
BUILDERS = ("offline", "llm")
ANNOTATORS_GROUP = "annotators"


def default_builder() -> str:
    """The LLM builder when a model is configured, else the offline builder."""
    return "llm" if llm.is_configured() else "offline"


# Inside ``references_collected()`` (a batch of builds) the questions of new graphs are gathered
# for one announcement per batch, instead of a ``reference_changed`` per graph.
_collected: ContextVar[list[int] | None] = ContextVar("hindsight_references_collected", default=None)


@contextmanager
def references_collected() -> Iterator[list[int]]:
    """Gather the questions whose new graphs are stored inside the block, unannounced."""
    collected: list[int] = []
    token = _collected.set(collected)
    try:
        yield collected
    finally:
        _collected.reset(token)


def reference_announce(graph: HindsightGraph) -> None:
    """Tell the graders that ``graph``'s question has a new reference (on commit, or once per batch)."""
    question_id, graph_id, version = graph.question_id, graph.pk, graph.version
    collected = _collected.get()
    if collected is not None:
        # The batch announces once, after its builds (a graph whose commit failed at the last step
        # only costs a regrade that finds nothing new).
        collected.append(question_id)
        return
    transaction.on_commit(
        lambda: reference_changed.send(
            sender=HindsightGraph, question_id=question_id, graph_id=graph_id, version=version
        )
    )


def _finish(
    attempt: GraphBuildAttempt,
    *,
    reason: str,
    error: str = "",
    log: Any = None,
    record: BuildResult | BuildError | None = None,
    succeeded: bool | None = None,
) -> None:
    """Close an attempt with its reason; ``record`` (an LLM result or error) adds what the model cost."""
    attempt.finished_at = timezone.now()
    attempt.reason = reason
    attempt.error = error
    attempt.succeeded = (
        reason in (GraphBuildAttempt.Reason.BUILT, GraphBuildAttempt.Reason.QUALITY_FAILED)
        if succeeded is None
        else succeeded
    )
    if log is not None:
        attempt.log = log
    fields = ["finished_at", "reason", "error", "succeeded", "log"]
    if record is not None and record.model_name:
        attempt.model_name = record.model_name
        attempt.prompts = record.prompts
        attempt.token_usage = record.token_usage
        attempt.stages = getattr(record, "stages", [])
        attempt.structured_output = getattr(record, "structured_output", "")
        fields += ["model_name", "prompts", "token_usage", "stages", "structured_output"]
    attempt.save(update_fields=fields)


def _embed_events(draft: GraphDraft) -> None:
    """The guarded matcher's vectors and parse facts of the graph's events (HINDSIGHT_EMBED_ON_BUILD),
    computed once as the graph is stored, outside its transaction, so that grading only reads them;
    a failure only means grading embeds or parses them itself."""
    if settings.HINDSIGHT_MATCHER != "guarded" or not settings.HINDSIGHT_EMBED_ON_BUILD:
        return
    events = [Event(e.key, e.title[:500], e.description, is_outcome=e.is_outcome) for e in draft.events]
    try:
        embedded = event_texts_embed(texts=embeddable_texts(events, hindsight=True))
        parsed = event_texts_parse(texts=parsed_texts(events, hindsight=True))
    except Exception:  # the graph is stored all the same
        logger.exception("embedding or parsing the events of a new hindsight graph failed; grading will do it")
        return
    logger.info("embedded %d and parsed %d of the %d events of a new hindsight graph", embedded, parsed, len(events))


def _store(
    *, question_id: int, result: BuildResult, resolution_version: int, now: datetime, fallback_reason: str = ""
) -> HindsightGraph:
    """Write the whole graph as one new current version, or nothing at all."""
    _embed_events(result.draft)
    with transaction.atomic():
        # Lock the question so two concurrent builds get consecutive versions.
        Question.objects.select_for_update().filter(pk=question_id).first()
        version = (HindsightGraph.objects.filter(question_id=question_id).aggregate(v=Max("version"))["v"] or 0) + 1
        HindsightGraph.objects.filter(question_id=question_id, is_current=True).update(is_current=False)
        draft = result.draft
        graph = HindsightGraph.objects.create(
            question_id=question_id,
            version=version,
            is_current=True,
            builder=result.builder,
            builder_version=result.builder_version,
            model_name=result.model_name,
            prompts=result.prompts,
            token_usage=result.token_usage,
            explanation=draft.explanation,
            graph_built=result.quality.passed,
            quality=result.quality.as_dict(),
            resolution_version=resolution_version,
            fallback_reason=fallback_reason,
            created_at=now,
        )
        existing = set(Article.objects.filter(pk__in=draft.source_ids()).values_list("pk", flat=True))
        events = {
            e.key: HindsightEvent(
                graph=graph,
                key=e.key,
                title=e.title[:500],
                description=e.description,
                occurred_on=e.occurred_on,
                event_type=e.event_type,
                is_outcome=e.is_outcome,
            )
            for e in draft.events
        }
        HindsightEvent.objects.bulk_create(events.values())
        source_rows = [
            HindsightEvent.sources.through(hindsightevent_id=events[e.key].pk, article_id=a)
            for e in draft.events
            for a in e.source_ids
            if a in existing
        ]
        HindsightEvent.sources.through.objects.bulk_create(source_rows)
        OutcomeImpact.objects.bulk_create(
            OutcomeImpact(
                event=events[e.key],
                direction=e.impact.direction,
                magnitude=e.impact.magnitude,
                confidence=e.impact.confidence,
            )
            for e in draft.events
            if e.impact is not None
        )
        links = [
            CausalLink(
                graph=graph,
                source=events[link.source],
                target=events[link.target],
                relation=link.relation,
                strength=link.strength,
                confidence=link.confidence,
                reasoning=link.reasoning,
            )
            for link in draft.links
        ]
        CausalLink.objects.bulk_create(links)
        CausalLink.evidence.through.objects.bulk_create(
            CausalLink.evidence.through(causallink_id=row.pk, article_id=a)
            for row, link in zip(links, draft.links, strict=True)
            for a in link.evidence_ids
            if a in existing
        )
        reference_announce(graph)
    return graph


def builder_run(ctx: BuildContext, *, builder: str, thresholds: Any) -> BuildResult:
    """Run one builder with the budgets from settings (no writes); raises BuildError on failure."""
    if builder == "llm":
        return llm.build(
            ctx,
            thresholds=thresholds,
            budget=settings.HINDSIGHT_GRAPH_BUDGET,
            max_articles=settings.HINDSIGHT_GRAPH_MAX_ARTICLES,
        )
    return offline.build(
        ctx,
        thresholds=thresholds,
        max_articles=settings.HINDSIGHT_GRAPH_MAX_ARTICLES,
        max_events=settings.HINDSIGHT_GRAPH_MAX_EVENTS,
        budget=settings.HINDSIGHT_GRAPH_BUDGET,
    )


def hindsight_build(
    *, question_id: int, builder: str | None = None, now: datetime | None = None
) -> HindsightGraph | None:
    """Build and store a new hindsight graph version for a resolved question.

    Returns the stored graph (``graph_built`` tells whether it met the quality thresholds), or None
    when no graph could be built; every builder run leaves a GraphBuildAttempt with the reason.
    Model calls happen outside any transaction (they can take minutes); the graph itself is written
    in one. An LLM build that fails (timeout, server fault, output still invalid after the
    corrections, prompt too long), or whose graph misses the quality thresholds, falls back to the
    offline builder: its graph is stored labelled with ``fallback_reason`` and its attempt points
    at the failed one (``fallback_of``). Never raises for build failures, so the question's
    outcome grading is unaffected.
    """
    now = now or timezone.now()
    builder = builder or default_builder()
    if builder not in BUILDERS:
        raise ValidationError({"builder": f"{builder!r} is not one of {', '.join(BUILDERS)}."})
    question = Question.objects.filter(pk=question_id).first()
    if question is None:
        raise ValidationError({"question_id": f"No question with id {question_id}."})
    attempt = GraphBuildAttempt.objects.create(question=question, builder=builder, started_at=now)
    resolution = question.current_resolution
    if (
        question.status != Question.Status.RESOLVED
        or resolution is None
        or resolution.kind not in (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND)
    ):
        _finish(
            attempt,
            reason=GraphBuildAttempt.Reason.NOT_RESOLVED,
            error=f"Question {question_id} is {question.status}, not resolved; hindsight graphs need an outcome.",
        )
        return None
    attempt.resolution_version = resolution.version
    attempt.save(update_fields=["resolution_version"])
    ctx = BuildContext.for_question(question, resolution)
    thresholds = thresholds_from_settings()
    try:
        result = builder_run(ctx, builder=builder, thresholds=thresholds)
    except BuildError as exc:
        _finish(attempt, reason=exc.reason, error=exc.message, log=exc.log, record=exc)
        if builder == "llm" and exc.reason in FALLBACK_REASONS:
            why = f"The LLM build failed ({exc.reason}): {exc.message}"
            return _fall_back(ctx, thresholds, failed=attempt, why=why, now=now)
        return None
    except Exception as exc:  # an unexpected failure must still leave a recorded attempt, not a crash
        logger.exception("hindsight build for question %s failed", question_id)
        _finish(attempt, reason=GraphBuildAttempt.Reason.ERROR, error=f"{type(exc).__name__}: {exc}")
        if builder == "llm":
            why = f"The LLM build failed unexpectedly: {type(exc).__name__}: {exc}"
            return _fall_back(ctx, thresholds, failed=attempt, why=why, now=now)
        return None
    if builder == "llm" and not result.quality.passed:
        offline_result = _offline_result(ctx, thresholds)
        if offline_result is not None and offline_result.quality.passed:
            missed = " ".join(result.quality.failures)
            _finish(
                attempt,
                reason=GraphBuildAttempt.Reason.QUALITY_FAILED,
                error=f"The model's graph missed the quality thresholds ({missed}); the offline graph, which "
                "passed, was stored instead.",
                log=result.log,
                record=result,
                succeeded=False,
            )
            why = f"The LLM graph missed the quality thresholds: {missed}"
            return _store_attempt(
                _new_attempt(ctx, failed=attempt, now=now), offline_result, ctx=ctx, now=now, fallback_reason=why
            )
    return _store_attempt(attempt, result, ctx=ctx, now=now)


FALLBACK_REASONS = frozenset(
    {
        GraphBuildAttempt.Reason.TIMEOUT,
        GraphBuildAttempt.Reason.SERVER_ERROR,
        GraphBuildAttempt.Reason.SERVER_DOWN,
        GraphBuildAttempt.Reason.MALFORMED_OUTPUT,
        GraphBuildAttempt.Reason.CONTEXT_EXCEEDED,
        GraphBuildAttempt.Reason.NO_ARTICLES,
    }
)


def _new_attempt(ctx: BuildContext, *, failed: GraphBuildAttempt, now: datetime) -> GraphBuildAttempt:
    return GraphBuildAttempt.objects.create(
        question_id=ctx.question_id,
        builder=HindsightGraph.Builder.OFFLINE,
        started_at=now,
        resolution_version=ctx.resolution_version,
        fallback_of=failed,
    )


def _offline_result(ctx: BuildContext, thresholds: Any) -> BuildResult | None:
    try:
        return builder_run(ctx, builder="offline", thresholds=thresholds)
    except BuildError:
        return None


def _fall_back(
    ctx: BuildContext, thresholds: Any, *, failed: GraphBuildAttempt, why: str, now: datetime
) -> HindsightGraph | None:
    """The offline builder standing in for a failed LLM build, recorded as its own attempt.

    A current graph of the same resolution that passed the quality thresholds is better than any
    fallback: it is kept, and nothing is built.
    """
    if HindsightGraph.objects.filter(
        question_id=ctx.question_id, is_current=True, graph_built=True, resolution_version=ctx.resolution_version
    ).exists():
        return None
    attempt = _new_attempt(ctx, failed=failed, now=now)
    try:
        result = builder_run(ctx, builder="offline", thresholds=thresholds)
    except BuildError as exc:
        _finish(attempt, reason=exc.reason, error=f"{exc.message} (fallback after: {why})", log=exc.log)
        return None
    except Exception as exc:
        logger.exception("the offline fallback build for question %s failed", ctx.question_id)
        _finish(attempt, reason=GraphBuildAttempt.Reason.ERROR, error=f"{type(exc).__name__}: {exc}")
        return None
    return _store_attempt(attempt, result, ctx=ctx, now=now, fallback_reason=why)


def _store_attempt(
    attempt: GraphBuildAttempt, result: BuildResult, *, ctx: BuildContext, now: datetime, fallback_reason: str = ""
) -> HindsightGraph | None:
    """Store a builder's result as the new current graph and close its attempt."""
    try:
        graph = _store(
            question_id=ctx.question_id,
            result=result,
            resolution_version=ctx.resolution_version,
            now=now,
            fallback_reason=fallback_reason,
        )
    except Exception as exc:
        logger.exception("storing the hindsight graph for question %s failed", ctx.question_id)
        _finish(attempt, reason=GraphBuildAttempt.Reason.ERROR, error=f"Storing failed: {type(exc).__name__}: {exc}")
        return None
    attempt.graph = graph
    attempt.save(update_fields=["graph"])
    if graph.graph_built:
        _finish(attempt, reason=GraphBuildAttempt.Reason.BUILT, log=result.log, record=result)
    else:
        _finish(
            attempt,
            reason=GraphBuildAttempt.Reason.QUALITY_FAILED,
            error="Quality thresholds unmet after the correction budget: " + " ".join(result.quality.failures),
            log=result.log,
            record=result,
        )
    return graph


def hindsight_build_claim(*, question_id: int, resolution_version: int, now: datetime | None = None) -> bool:
    """Claim the automatic build for one resolution version; False when another delivery has it."""
    now = now or timezone.now()
    HindsightBuildRequest.objects.get_or_create(question_id=question_id, resolution_version=resolution_version)
    return (
        HindsightBuildRequest.objects.filter(
            question_id=question_id, resolution_version=resolution_version, claimed_at=None
        ).update(claimed_at=now)
        == 1
    )


def hindsight_build_release(
    *, question_id: int, resolution_version: int, finished: bool, now: datetime | None = None
) -> None:
    """Mark the claimed build finished, or release the claim so a retry can take it."""
    query = HindsightBuildRequest.objects.filter(question_id=question_id, resolution_version=resolution_version)
    if finished:
        query.update(finished_at=now or timezone.now())
    else:
        query.update(claimed_at=None)
