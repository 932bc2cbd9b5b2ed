"""Celery tasks of the grading app (queue ``grade``, routed by the ``grading.tasks.*`` prefix)."""

from __future__ import annotations

from celery import shared_task

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
