"""Reads for the staff curation queue."""

from __future__ import annotations

from django.db.models import QuerySet

from ingestion.models import Question


def curation_draft_list() -> QuerySet[Question]:
    """Draft questions awaiting curation, newest first, with their provenance loaded."""
    return (
        Question.objects.filter(status=Question.Status.DRAFT)
        .select_related("market")
        .prefetch_related("provenance_articles")
        .order_by("-created_at", "-id")
    )
