"""Celery tasks of the leaderboard app. Grading tasks are named ``grade_*`` / ``regrade_*`` so
CELERY_TASK_ROUTES sends them to the ``grade`` queue (so ``embed_*``, which run the embedding
model for grading); they are thin: ids in, a service call."""

from __future__ import annotations

import logging
from typing import Any

from celery import Task, shared_task
from django.conf import settings
from django.db import DatabaseError

from leaderboard.judges import JudgeUnavailable
from leaderboard.selectors.grade_keys import questions_needing_grading
from leaderboard.selectors.grading_claims import questions_with_abandoned_claims
from leaderboard.services.forecast_embeddings import forecast_embeddings_compute
from leaderboard.services.grade_runs import GradingReport, grade_question, grade_questions
from leaderboard.services.standings import standings_rebuild, standings_update_for_questions

logger = logging.getLogger(__name__)


# Grading runs: acknowledged once done (a worker lost mid-run is redelivered) and retried with
# backoff while the database or the LLM judge is unavailable.
GRADING_TASK_OPTIONS: dict[str, Any] = {
    "acks_late": True,
    "autoretry_for": (DatabaseError, JudgeUnavailable),
    "retry_backoff": 30,
    "retry_backoff_max": 1800,
    "max_retries": 8,
}


# How many times a run that found its questions held by another worker looks again.
BUSY_ATTEMPTS = 10


def _again_if_busy(task: Task, reports: list[GradingReport], attempt: int) -> None:
    """Questions another worker holds get a rerun request (``grade_questions``), which a live holder
    honours; look again once a dead holder's claim has gone stale, so that a worker killed mid-run
    stalls the question for about HINDSIGHT_GRADING_CLAIM_STALE_SECONDS, not until the sweeper."""
    busy = [r.question_id for r in reports if r.status == "busy"]
    if busy and not task.request.is_eager and attempt < BUSY_ATTEMPTS:
        # Through the broker even where nested calls run in-process (a worker under test settings):
        # the point is to wait.
        task.app.send_task(
            "leaderboard.tasks.regrade_questions",
            args=[busy],
            kwargs={"attempt": attempt + 1},
            countdown=settings.HINDSIGHT_GRADING_CLAIM_STALE_SECONDS + 1,
        )


@shared_task(bind=True, name="leaderboard.tasks.regrade_question", **GRADING_TASK_OPTIONS)
def regrade_question(self: Task, question_id: int) -> dict[str, Any]:
    """Grade or regrade one question's forecasts; a duplicate delivery finds nothing to do.

    When another worker holds the question the task leaves a rerun request for it, which the
    holder honours after it finishes (see ``grade_question``), and looks again later in case the
    holder died.
    """
    report = grade_question(question_id=question_id)
    if report.graded or report.withdrawn or report.counts_updated:
        # Standings are materialised rows: refresh the views holding this question.
        update_standings_for_questions.delay([question_id])
    _again_if_busy(self, [report], 0)
    return report.as_dict()


@shared_task(bind=True, name="leaderboard.tasks.regrade_questions", **GRADING_TASK_OPTIONS)
def regrade_questions(self: Task, question_ids: list[int], attempt: int = 0) -> list[dict[str, Any]]:
    """``regrade_question`` for several questions in one run (shared reads and writes)."""
    reports = grade_questions(question_ids=question_ids)
    changed = [r.question_id for r in reports if r.graded or r.withdrawn or r.counts_updated]
    if changed:
        update_standings_for_questions.delay(changed)
    _again_if_busy(self, reports, attempt)
    return [report.as_dict() for report in reports]


@shared_task(bind=True, name="leaderboard.tasks.grade_published_question", **GRADING_TASK_OPTIONS)
def grade_published_question(self: Task, question_id: int) -> dict[str, Any]:
    """Staff published a replay outcome: grade what arrived since its resolution (replay forecasts
    always do), then refresh the standings, which take the question's grades from now on even when
    none changed."""
    report = grade_question(question_id=question_id)
    update_standings_for_questions.delay([question_id])
    _again_if_busy(self, [report], 0)
    return report.as_dict()


@shared_task(name="leaderboard.tasks.sweep_pending_grading", acks_late=True)
def sweep_pending_grading() -> list[int]:
    """Enqueue regrades of the questions with missing or stale grades (re-drives lost messages),
    HINDSIGHT_GRADING_QUESTIONS_PER_RUN questions per task."""
    question_ids = questions_needing_grading(limit=settings.HINDSIGHT_GRADING_SWEEP_LIMIT)
    size = max(1, settings.HINDSIGHT_GRADING_QUESTIONS_PER_RUN)
    for start in range(0, len(question_ids), size):
        regrade_questions.delay(question_ids[start : start + size])
    if question_ids:
        logger.info("grading sweeper enqueued %d questions", len(question_ids))
    return question_ids


@shared_task(name="leaderboard.tasks.recover_abandoned_grading", acks_late=True)
def recover_abandoned_grading() -> list[int]:
    """Send the questions whose grading run died (its claim's heartbeat went silent) to be graded
    again; the new run takes the abandoned claim over. Runs every HINDSIGHT_GRADING_RECOVERY_SECONDS:
    cheap (it reads only claimed rows), and what bounds the stall after a whole worker is killed."""
    question_ids = questions_with_abandoned_claims(limit=settings.HINDSIGHT_GRADING_SWEEP_LIMIT)
    size = max(1, settings.HINDSIGHT_GRADING_QUESTIONS_PER_RUN)
    for start in range(0, len(question_ids), size):
        regrade_questions.delay(question_ids[start : start + size])
    if question_ids:
        logger.warning("grading runs died holding questions %s; sent them to be graded again", question_ids)
    return question_ids


@shared_task(name="leaderboard.tasks.rebuild_standings", acks_late=True)
def rebuild_standings() -> dict[str, Any]:
    """Full rebuild; idempotent, so a duplicate delivery only recomputes the same rows."""
    result = standings_rebuild()
    return {"views": result.views, "rows": result.rows, "grades": result.grades}


@shared_task(name="leaderboard.tasks.update_standings_for_questions", acks_late=True)
def update_standings_for_questions(question_ids: list[int]) -> dict[str, Any]:
    """Recompute the standings views that hold these questions (after their grades changed)."""
    result = standings_update_for_questions(question_ids=question_ids)
    return {"views": result.views, "rows": result.rows}


@shared_task(name="leaderboard.tasks.embed_forecast_events", acks_late=True)
def embed_forecast_events(forecast_ids: list[int]) -> int:
    """Store the vectors and parse facts of these forecasts' event texts ahead of grading; idempotent,
    and a failure only means grading embeds or parses them itself. Returns how many texts the model
    embedded."""
    return forecast_embeddings_compute(forecast_ids=forecast_ids)
