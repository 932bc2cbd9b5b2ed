"""Reads about questions that writes in several services share."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import F, Window
from django.db.models.functions import RowNumber

from ingestion.models import Resolution

# Ids per query: well under SQLite's limit on query parameters.
CHUNK = 500


def question_current_resolutions(question_ids: Iterable[int]) -> dict[int, Resolution]:
    """Each question's current (latest) resolution, in one query per ``CHUNK`` questions."""
    ids = list(question_ids)
    found: dict[int, Resolution] = {}
    for start in range(0, len(ids), CHUNK):
        latest = (
            Resolution.objects.filter(question_id__in=ids[start : start + CHUNK])
            .annotate(rank=Window(RowNumber(), partition_by=[F("question_id")], order_by=F("version").desc()))
            .filter(rank=1)
        )
        found.update((r.question_id, r) for r in latest)
    return found
