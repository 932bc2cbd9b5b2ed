"""Grading's subscriptions to ingestion announcements (connected in GradingConfig.ready)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.dispatch import receiver

from ingestion.signals import resolution_changed

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
