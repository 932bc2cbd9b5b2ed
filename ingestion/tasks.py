"""Celery tasks of the ingestion app: thin wrappers that load ids and call services."""

from __future__ import annotations

from celery import shared_task

from ingestion.services.questions import questions_close_due


@shared_task(name="ingestion.tasks.close_due_questions")
def close_due_questions() -> int:
    """Close live questions past their deadline (beat, every minute)."""
    return questions_close_due()


@shared_task(name="ingestion.tasks.poll_due_sources")
def poll_due_sources() -> int:
    """Enqueue one poll task per due source (beat, every minute), so a slow or failing source
    never delays the others. Returns how many were enqueued."""
    from django.utils import timezone

    from ingestion.selectors.sources import source_due_list

    source_ids = list(source_due_list(now=timezone.now()).values_list("id", flat=True))
    for source_id in source_ids:
        poll_source.delay(source_id)
    return len(source_ids)


@shared_task(name="ingestion.tasks.poll_source")
def poll_source(source_id: int, force: bool = False) -> dict[str, object]:
    """Poll one source; a duplicate delivery finds it claimed (or not yet due) and does nothing.
    ``force`` (staff's "poll now") polls it whether due or not, enabled or not."""
    from ingestion.services.sources import source_poll

    report = source_poll(source_id=source_id, due_only=not force, include_disabled=force)
    return {"source_id": source_id, "added": report.added, "skipped": report.skipped, "error": report.error}


@shared_task(name="ingestion.tasks.generate_questions_from_news")
def generate_questions_from_news() -> dict[str, object]:
    """Draft forecasting questions from clusters of recent news (beat, hourly); nothing without an LLM."""
    from ingestion.services.question_generation import questions_generate_from_news

    return questions_generate_from_news().as_dict()
