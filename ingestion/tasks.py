"""Celery tasks of the ingestion app: thin wrappers that load ids and call services."""

from __future__ import annotations

from functools import partial

from celery import shared_task
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from ingestion.models import Source
from ingestion.selectors.sources import source_due_list
from ingestion.services.archives import archive_reimport
from ingestion.services.question_generation import questions_generate_from_news
from ingestion.services.questions import questions_close_due
from ingestion.services.sources import source_poll


@shared_task(name="ingestion.tasks.close_due_questions")
def close_due_questions() -> int:
    """Close live questions past their deadline (beat, every minute)."""
    return questions_close_due()


@shared_task(name="ingestion.tasks.poll_due_sources")
def poll_due_sources() -> int:
    """Enqueue one poll task per due source (beat, every minute), so a slow or failing source
    never delays the others. Returns how many were enqueued."""
    source_ids = list(source_due_list(now=timezone.now()).values_list("id", flat=True))
    for source_id in source_ids:
        poll_source.delay(source_id)
    return len(source_ids)


@shared_task(name="ingestion.tasks.poll_source")
def poll_source(source_id: int, force: bool = False) -> dict[str, object]:
    """Poll one source; a duplicate delivery finds it claimed (or not yet due) and does nothing.
    ``force`` (staff's "poll now") polls it whether due or not, enabled or not."""
    report = source_poll(source_id=source_id, due_only=not force, include_disabled=force)
    return {"source_id": source_id, "added": report.added, "skipped": report.skipped, "error": report.error}


def poll_sources_now(sources: QuerySet[Source]) -> list[str]:
    """Queue an immediate poll of each source on the ``ingest`` queue, due or not and enabled or
    not (staff asked for it), once the current transaction commits. Returns the names of the
    sources queued."""
    queued = list(sources.order_by("name", "pk").values_list("pk", "name"))
    for source_id, _ in queued:
        transaction.on_commit(partial(poll_source.delay, source_id, force=True))
    return [name for _, name in queued]


@shared_task(name="ingestion.tasks.import_archive_again")
def import_archive_again(source_id: int) -> dict[str, object]:
    """Import an archive source's file again (staff's admin action); changed items update in place."""
    source = Source.objects.filter(pk=source_id, kind=Source.Kind.ARCHIVE).first()
    if source is None:
        return {"source_id": source_id, "error": "no archive source with this id"}
    try:
        report = archive_reimport(source=source, now=timezone.now())
    except OSError as exc:
        return {"source_id": source_id, "error": str(exc)}
    return {
        "source_id": source_id,
        "summary": report.summary(),
        "problems": report.problems[:20],
        "stopped": report.stopped,
    }


def import_archives_again(sources: QuerySet[Source]) -> list[str]:
    """Queue a re-import of each archive source among ``sources`` once the current transaction
    commits; returns the names of those queued."""
    queued = list(sources.filter(kind=Source.Kind.ARCHIVE).order_by("name", "pk").values_list("pk", "name"))
    for source_id, _ in queued:
        transaction.on_commit(partial(import_archive_again.delay, source_id))
    return [name for _, name in queued]


@shared_task(name="ingestion.tasks.generate_questions_from_news")
def generate_questions_from_news() -> dict[str, object]:
    """Draft forecasting questions from clusters of recent news (beat, hourly); nothing without an LLM."""
    return questions_generate_from_news().as_dict()
