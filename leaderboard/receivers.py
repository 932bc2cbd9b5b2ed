"""Subscriptions to the announcements of lower apps (docs/design.md, Architecture: ingestion <- grading <- leaderboard)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.dispatch import receiver

from common.progress import report_progress
from grading.signals import reference_changed, references_changed
from ingestion.signals import ResolutionChange, outcome_published, resolution_changed, resolutions_changed

# The evidence access log flushes its buffer when a request finishes; importing the module at
# startup connects that receiver before the first request.
from leaderboard.services import evidence as _evidence_log  # noqa: F401

logger = logging.getLogger(__name__)


def _enqueue_regrade(question_id: int) -> None:
    from leaderboard.tasks import regrade_question

    transaction.on_commit(lambda: regrade_question.delay(question_id))


def _enqueue_regrades(question_ids: Iterable[int], *, what: str) -> None:
    """Regrade many questions in runs of HINDSIGHT_GRADING_QUESTIONS_PER_RUN, one task per run.

    Only questions with forecasts are sent: a question without any has no grade to write or
    withdraw (and the sweeper finds any forecast that arrives later ungraded).
    """
    wanted = sorted(set(question_ids))

    def enqueue() -> None:
        from leaderboard.selectors.forecasts import questions_with_forecasts
        from leaderboard.tasks import regrade_questions

        ids = questions_with_forecasts(wanted)
        if not ids:
            report_progress(logger, f"grading: none of the {len(wanted)} questions ({what}) has forecasts to regrade")
            return
        size = max(1, settings.HINDSIGHT_GRADING_QUESTIONS_PER_RUN)
        for start in range(0, len(ids), size):
            regrade_questions.delay(ids[start : start + size])
            done = min(start + size, len(ids))
            report_progress(
                logger, f"grading: regrade sent for {done} of the {len(ids)} questions with forecasts ({what})"
            )

    transaction.on_commit(enqueue)


@receiver(resolution_changed, dispatch_uid="leaderboard.regrade_on_resolution")
def regrade_on_resolution(sender: Any, *, question_id: int, **kwargs: Any) -> None:
    """Resolve, amend, annul or un-resolve: the question's grades follow the new resolution."""
    _enqueue_regrade(question_id)


@receiver(resolutions_changed, dispatch_uid="leaderboard.regrade_on_resolutions")
def regrade_on_resolutions(sender: Any, *, changes: list[ResolutionChange], **kwargs: Any) -> None:
    """Many resolutions at once (a bulk import): their questions are regraded in runs."""
    _enqueue_regrades((change.question_id for change in changes), what="resolved together")


@receiver(reference_changed, dispatch_uid="leaderboard.regrade_on_reference")
def regrade_on_reference(sender: Any, *, question_id: int, **kwargs: Any) -> None:
    """A new hindsight graph or a review decision changes evidence and reasoning grades."""
    _enqueue_regrade(question_id)


@receiver(references_changed, dispatch_uid="leaderboard.regrade_on_references")
def regrade_on_references(sender: Any, *, question_ids: list[int], **kwargs: Any) -> None:
    """New hindsight graphs from a batch of builds: their questions are regraded in runs."""
    _enqueue_regrades(question_ids, what="new hindsight graphs")


@receiver(outcome_published, dispatch_uid="leaderboard.grade_on_publish")
def grade_on_publish(sender: Any, *, question_id: int, **kwargs: Any) -> None:
    """A published replay outcome: grade the forecasts that arrived since the resolution, then let
    the question's grades into the public standings."""
    from leaderboard.tasks import grade_published_question

    transaction.on_commit(lambda: grade_published_question.delay(question_id))
