"""Shared argument handling of the resolution commands."""

from __future__ import annotations

from django.core.management.base import CommandError

from ingestion.models import Question, Resolution
from ingestion.services.questions import question_lookup


def lookup_or_fail(identifier: str) -> Question:
    try:
        return question_lookup(identifier)
    except Question.DoesNotExist as exc:
        raise CommandError(str(exc)) from exc


def describe(question: Question, resolution: Resolution | None, unchanged: str) -> str:
    if resolution is None:
        return f"Question {question.pk} ({question.external_id or question.title}): {unchanged}"
    return (
        f"Question {question.pk} ({question.external_id or question.title}): "
        f"resolution v{resolution.version} {resolution.kind}"
        + (f", outcome {resolution.outcome!r}" if resolution.outcome is not None else "")
        + f"; status {question.status}"
    )
