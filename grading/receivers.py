"""Grading's subscriptions to ingestion announcements (connected in GradingConfig.ready)."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.dispatch import receiver

from ingestion.signals import ResolutionChange, resolution_changed, resolutions_changed

BUILD_KINDS = ("resolve", "amend")


@receiver(resolution_changed, dispatch_uid="grading.build_hindsight_on_resolution")
def build_hindsight_on_resolution(
    sender: Any, *, question_id: int, resolution_id: int, version: int, kind: str, **kwargs: Any
) -> None:
    """A resolve or amend rebuilds the hindsight graph; un-resolve and annul leave graphs alone."""
    if kind not in BUILD_KINDS:
        return
    from grading.tasks import build_hindsight

    transaction.on_commit(lambda: build_hindsight.delay(question_id, version))


@receiver(resolutions_changed, dispatch_uid="grading.build_hindsight_on_resolutions")
def build_hindsight_on_resolutions(sender: Any, *, changes: list[ResolutionChange], **kwargs: Any) -> None:
    """Many resolutions at once: one build task per HINDSIGHT_BUILD_QUESTIONS_PER_TASK questions."""
    from grading.tasks import build_hindsight_batch

    items = [[change.question_id, change.version] for change in changes if change.kind in BUILD_KINDS]
    size = max(1, settings.HINDSIGHT_BUILD_QUESTIONS_PER_TASK)
    for start in range(0, len(items), size):
        transaction.on_commit(partial(build_hindsight_batch.delay, items[start : start + size]))
