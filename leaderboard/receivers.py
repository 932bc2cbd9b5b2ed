"""Subscriptions to the announcements of lower apps (docs/design.md, Architecture: ingestion <- grading <- leaderboard)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.dispatch import receiver

from grading.signals import reference_changed
from ingestion.signals import outcome_published, resolution_changed

# The evidence access log flushes its buffer when a request finishes; importing the module at
# startup connects that receiver before the first request.
from leaderboard.services import evidence as _evidence_log  # noqa: F401


def _enqueue_regrade(question_id: int) -> None:
    from leaderboard.tasks import regrade_question

    transaction.on_commit(lambda: regrade_question.delay(question_id))


@receiver(resolution_changed, dispatch_uid="leaderboard.regrade_on_resolution")
def regrade_on_resolution(sender: Any, *, question_id: int, **kwargs: Any) -> None:
    """Resolve, amend, annul or un-resolve: the question's grades follow the new resolution."""
    _enqueue_regrade(question_id)


@receiver(reference_changed, dispatch_uid="leaderboard.regrade_on_reference")
def regrade_on_reference(sender: Any, *, question_id: int, **kwargs: Any) -> None:
    """A new hindsight graph or a review decision changes evidence and reasoning grades."""
    _enqueue_regrade(question_id)


@receiver(outcome_published, dispatch_uid="leaderboard.standings_on_publish")
def standings_on_publish(sender: Any, *, question_id: int, **kwargs: Any) -> None:
    """A published replay outcome lets the question's grades into the public standings."""
    from leaderboard.tasks import update_standings_for_questions

    transaction.on_commit(lambda: update_standings_for_questions.delay([question_id]))
