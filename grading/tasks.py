"""Celery tasks of the grading app (queue ``grade``, routed by the ``grading.tasks.*`` prefix)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from grading.batch_builds import hindsight_build_batch
from grading.services import hindsight_build, hindsight_build_claim, hindsight_build_release


@shared_task(name="grading.tasks.build_hindsight", acks_late=True)
def build_hindsight(question_id: int, resolution_version: int | None = None) -> int | None:
    """Build the hindsight graph of a resolved question; returns the graph id or None.

    With a resolution version (sent by the resolution announcement) a duplicate delivery finds the
    build already claimed and does nothing; without one (operator request) it always builds.
    """
    if resolution_version is not None and not hindsight_build_claim(
        question_id=question_id, resolution_version=resolution_version
    ):
        return None
    try:
        graph = hindsight_build(question_id=question_id)
    except BaseException:
        if resolution_version is not None:
            hindsight_build_release(question_id=question_id, resolution_version=resolution_version, finished=False)
        raise
    if resolution_version is not None:
        hindsight_build_release(question_id=question_id, resolution_version=resolution_version, finished=True)
    return graph.pk if graph is not None else None


@shared_task(name="grading.tasks.build_hindsight_batch", acks_late=True)
def build_hindsight_batch(items: list[list[int]]) -> dict[str, Any]:
    """``build_hindsight`` for a batch of [question id, resolution version] pairs (sent when many
    questions resolve at once); one question's failure is recorded on it and the others go on."""
    report = hindsight_build_batch(items=[(question_id, version) for question_id, version in items])
    return report.as_dict()
