"""Reads of questions as the public API and pages show them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import django_filters
from django.core.exceptions import ValidationError
from django.db.models import Case, Q, QuerySet, Value, When

from ingestion.models import Question, Resolution
from ingestion.services.sources import SAMPLE_WORLD_OPTION
from leaderboard.models import Forecast, Grade


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
    """The resolution history ``user`` may see, oldest first; empty while the outcome is hidden.

    A live question that was un-resolved keeps its history public (the earlier outcomes were shown
    already); a replay question's only once staff published its outcome."""
    public_history = question.track == Question.Track.LIVE or question.outcome_published_at is not None
    if not (question_outcome_visible(question=question, user=user) or public_history):
        return []
    return list(question.resolutions.select_related("author").order_by("version"))


def question_forecast_rows(*, question: Question, with_grades: bool) -> list[dict[str, Any]]:
    """One row per agent on a closed question: the forecast that counts for it (its latest when none
    is graded yet) and, ``with_grades``, its current grade; ordered by agent name."""
    latest: dict[int, Any] = {}
    for f in (
        Forecast.objects.filter(question=question).select_related("agent", "agent__team").order_by("received_at", "id")
    ):
        latest[f.agent_id] = f
    counted: dict[int, tuple[Any, Grade]] = {}
    for g in Grade.objects.filter(forecast__question=question, is_current=True, counts=True).select_related(
        "forecast", "forecast__agent", "forecast__agent__team"
    ):
        counted[g.forecast.agent_id] = (g.forecast, g)
    rows = []
    for agent_id, forecast in latest.items():
        chosen, grade = counted.get(agent_id, (forecast, None))
        rows.append({"agent": chosen.agent, "forecast": chosen, "grade": grade if with_grades else None})
    return sorted(rows, key=lambda r: (r["agent"].name, r["agent"].pk))


def outcome_texts_for_grades(grades: list[Grade]) -> dict[int, str]:
    """grade id -> the outcome in words of the resolution version the grade was computed from."""
    wanted = {(g.forecast.question_id, g.resolution_version) for g in grades}
    if not wanted:
        return {}
    resolutions = {
        (r.question_id, r.version): r
        for r in Resolution.objects.filter(question_id__in={q for q, _ in wanted}).select_related("question")
        if (r.question_id, r.version) in wanted
    }
    return {
        g.pk: resolutions[key].outcome_display
        if (key := (g.forecast.question_id, g.resolution_version)) in resolutions
        else "—"
        for g in grades
    }


# The fictional sample world's questions: its storylines' own, and those its markets' pollers created.
SAMPLE_WORLD = Q(origin=Question.Origin.SAMPLE) | Q(market__source__options__has_key=SAMPLE_WORLD_OPTION)
SAMPLE_FIRST = Case(When(SAMPLE_WORLD, then=Value(0)), default=Value(1))


def sample_first(qs: QuerySet[Question], *then: str) -> QuerySet[Question]:
    """``qs`` with ``sample_rank`` (0 for the sample world's questions) ordered by it, then ``then``."""
    return qs.annotate(sample_rank=SAMPLE_FIRST).order_by("sample_rank", *then)


def question_search(qs: QuerySet[Question], text: str) -> QuerySet[Question]:
    """Questions whose title holds every word of ``text`` (``#12`` or ``12`` also finds question 12)."""
    text = text.strip()
    if not text:
        return qs
    number = text.lstrip("#")
    by_id = Q(pk=int(number)) if number.isdigit() and len(number) <= 18 else Q(pk__in=[])
    words = Q()
    for word in text.split():
        words &= Q(title__icontains=word)
    return qs.filter(by_id | words)


def forecastable_questions(*, replay_statuses: Sequence[str], search: str = "", qtype: str = "") -> QuerySet[Question]:
    """Questions a forecast can be submitted on now (live and open, replay in ``replay_statuses``),
    the fictional sample world's first, then by deadline."""
    qs = Question.objects.filter(
        Q(track=Question.Track.LIVE, status=Question.Status.OPEN)
        | Q(track=Question.Track.REPLAY, status__in=list(replay_statuses))
    )
    if qtype in Question.Type.values:
        qs = qs.filter(type=qtype)
    return sample_first(question_search(qs, search), "track", "close_at", "id")
