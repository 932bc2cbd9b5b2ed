"""Reads of questions as the public API and pages show them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

import django_filters
from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet

from ingestion.models import Question, Resolution

# A replay question opens sessions and takes forecasts while its status is one of these and its
# outcome is unpublished: resolved, closed while staff have un-resolved it for review, or annulled
# (an annulled question looks like any other until its outcome is published).
REPLAY_OFFERED_STATUSES: Final = (Question.Status.RESOLVED, Question.Status.CLOSED, Question.Status.ANNULLED)


def replay_offered_q(prefix: str = "") -> Q:
    """Replay questions that open sessions and take forecasts (``prefix``: a path to the question)."""
    return Q(
        **{
            f"{prefix}track": Question.Track.REPLAY,
            f"{prefix}status__in": REPLAY_OFFERED_STATUSES,
            f"{prefix}outcome_published_at__isnull": True,
        }
    )


def live_open_q(*, now: datetime, prefix: str = "") -> Q:
    """Live questions taking forecasts at ``now``."""
    return Q(
        **{
            f"{prefix}track": Question.Track.LIVE,
            f"{prefix}status": Question.Status.OPEN,
            f"{prefix}open_at__lte": now,
            f"{prefix}close_at__gt": now,
        }
    )


def public_status_q(status: str) -> Q:
    """Questions whose public status (``Question.public_status``) is ``status``: an annulled replay
    question counts as resolved until its outcome is published."""
    hidden_annulment = Q(
        status=Question.Status.ANNULLED, track=Question.Track.REPLAY, outcome_published_at__isnull=True
    )
    if status == Question.Status.RESOLVED:
        return Q(status=status) | hidden_annulment
    if status == Question.Status.ANNULLED:
        return Q(status=status) & ~hidden_annulment
    return Q(status=status)


class QuestionFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=Question.Status.choices, method="filter_public_status")
    track = django_filters.ChoiceFilter(choices=Question.Track.choices)
    type = django_filters.ChoiceFilter(choices=Question.Type.choices)
    domain = django_filters.CharFilter(lookup_expr="iexact")

    class Meta:
        model = Question
        fields = ["status", "track", "type", "domain"]

    def filter_public_status(self, queryset: QuerySet[Question], name: str, value: str) -> QuerySet[Question]:
        return queryset.filter(public_status_q(value))


def _can_see_hidden(user: Any) -> bool:
    return bool(getattr(user, "is_staff", False))


def question_list(*, filters: Any = None, user: Any = None) -> QuerySet[Question]:
    """Questions visible to ``user``: drafts only for staff. ``filters``: status, track, type, domain."""
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
