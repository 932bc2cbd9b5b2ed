"""Staff edits to draft questions before they are approved (opened) or rejected."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from ingestion.models import Question

EDITABLE_FIELDS = (
    "title",
    "options",
    "unit",
    "granularity",
    "resolution_criteria",
    "background",
    "domain",
    "open_at",
    "close_at",
    "resolve_by",
)


@transaction.atomic
def question_draft_update(*, question: Question, fields: Mapping[str, Any]) -> Question:
    """Apply validated edits to a draft; a question that has left the queue is not edited here."""
    locked = Question.objects.select_for_update().get(pk=question.pk)
    if locked.status != Question.Status.DRAFT:
        raise ValidationError({"status": f"Only a draft can be edited here; this question is {locked.status}."})
    unknown = sorted(set(fields) - set(EDITABLE_FIELDS))
    if unknown:
        raise ValidationError({unknown[0]: "This field cannot be edited in the curation queue."})
    changed = [name for name, value in fields.items() if getattr(locked, name) != value]
    for name in changed:
        setattr(locked, name, fields[name])
    if changed:
        locked.save(update_fields=[*changed, "updated_at"])
    return locked
