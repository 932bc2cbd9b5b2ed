"""Reads of questions as the public API and pages show them."""

from __future__ import annotations

from typing import Any

import django_filters
from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from ingestion.models import Question, Resolution


class QuestionFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=Question.Status.choices)
    track = django_filters.ChoiceFilter(choices=Question.Track.choices)
    type = django_filters.ChoiceFilter(choices=Question.Type.choices)
    domain = django_filters.CharFilter(lookup_expr="iexact")
    # Repeatable (origin=sample&origin=admin): e.g. the questions that have an evidence corpus.
    origin = django_filters.MultipleChoiceFilter(choices=Question.Origin.choices)

    class Meta:
        model = Question
        fields = ["status", "track", "type", "domain", "origin"]


def _can_see_hidden(user: Any) -> bool:
    return bool(getattr(user, "is_staff", False))


def question_list(*, filters: Any = None, user: Any = None) -> QuerySet[Question]:
    """Questions visible to ``user``: drafts only for staff. ``filters``: status, track, type, domain, origin."""
    qs = Question.objects.all()
    if not _can_see_hidden(user):
        qs = qs.exclude(status=Question.Status.DRAFT)
    filterset = QuestionFilter(filters or {}, queryset=qs)
    if not filterset.is_valid():
        raise ValidationError({k: [str(m) for m in v] for k, v in filterset.errors.items()})
    return filterset.qs.order_by("close_at", "id")


def question_get(*, question_id: int, user: Any = None) -> Question | None:
    return question_list(user=user).filter(pk=question_id).first()


def question_outcome_visible(*, question: Question, user: Any = None) -> bool:
    """Staff always; everyone else once revealed (live: resolved; replay: outcome published)."""
    return _can_see_hidden(user) or question.is_revealed


def question_resolutions_visible(*, question: Question, user: Any = None) -> list[Resolution]:
    """The resolution history ``user`` may see, oldest first; empty while the outcome is hidden."""
    if not question_outcome_visible(question=question, user=user):
        return []
    return list(question.resolutions.select_related("author").order_by("version"))
