"""Celery tasks of the ingestion app: thin wrappers that load ids and call services."""

from __future__ import annotations

from celery import shared_task

from ingestion.services.questions import questions_close_due


@shared_task(name="ingestion.tasks.close_due_questions")
def close_due_questions() -> int:
    """Close live questions past their deadline (beat, every minute)."""
    return questions_close_due()
