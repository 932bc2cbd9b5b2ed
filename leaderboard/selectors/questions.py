"""Reads of questions as the public API and pages show them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import django_filters
from django.core.exceptions import ValidationError
from django.db.models import Case, Q, QuerySet, Value, When

from grading.models import GraphBuildAttempt, HindsightGraph
from ingestion.models import REPLAY_OFFERED_STATUSES, SAMPLE_WORLD_OPTION, Question, Resolution
from leaderboard.models import Forecast, Grade


def replay_not_offered(question: Question, *, what: str) -> str | None:
    """Why a replay question opens no new session or takes no forecast (``what``), or None."""
    if question.outcome_published_at is not None:
        return (
            f"replay question {question.pk}'s outcome was published at "
            f"{question.outcome_published_at.isoformat()}; it takes no more {what}"
        )
    if question.status == Question.Status.ANNULLED:
        return f"replay question {question.pk} was withdrawn from the replay track; it takes no more {what}"
    if question.status not in REPLAY_OFFERED_STATUSES:
        return f"replay question {question.pk} is {question.public_status} and not offered on the replay track"
    return None


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


def listed_status_q(status: str) -> Q:
    """Questions the site's pages list under ``status`` (``Question.get_public_status_display``):
    "open" holds the replay questions still on offer, which no other status then holds."""
    offered = replay_offered_q()
    if status == Question.Status.OPEN:
        return Q(status=status) | offered
    return public_status_q(status) & ~offered


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
    # Repeatable (origin=sample&origin=admin): e.g. the questions that have an evidence corpus.
    origin = django_filters.MultipleChoiceFilter(choices=Question.Origin.choices)

    class Meta:
        model = Question
        fields = ["status", "track", "type", "domain", "origin"]

    def filter_public_status(self, queryset: QuerySet[Question], name: str, value: str) -> QuerySet[Question]:
        return queryset.filter(public_status_q(value))


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


# What a question reveals, and to whom: the one rule. A live question's outcome is public once it
# is resolved or annulled; a replay question's only once staff published it (until then its
# resolution history, later market prices and other agents' forecasts would give it away). Staff
# see everything. ``Question.is_revealed`` is the rule for one question; the Q objects below are
# the same rule for querysets.


def public_history_q(prefix: str = "") -> Q:
    """Questions whose resolution history is public (``prefix``: a path to the question): live
    ones, and replay ones once staff published the outcome."""
    return Q(**{f"{prefix}track": Question.Track.LIVE}) | Q(**{f"{prefix}outcome_published_at__isnull": False})


def revealed_q(prefix: str = "") -> Q:
    """Questions whose outcome is public (``Question.is_revealed``)."""
    return Q(**{f"{prefix}status__in": [Question.Status.RESOLVED, Question.Status.ANNULLED]}) & public_history_q(prefix)


@dataclass(frozen=True)
class QuestionReveal:
    """What of a question ``user`` may see."""

    outcome: bool  # the outcome, grades and the hindsight graph
    history: bool  # the resolution history
    # The market's price history and, once the question closed, every agent's forecast (a team
    # sees its own forecasts anyway).
    activity: bool


def question_reveal(*, question: Question, user: Any = None) -> QuestionReveal:
    outcome = _can_see_hidden(user) or question.is_revealed
    live = question.track == Question.Track.LIVE
    return QuestionReveal(
        outcome=outcome,
        # A live question that was un-resolved keeps its history public (the earlier outcomes were
        # shown already).
        history=outcome or live or question.outcome_published_at is not None,
        activity=live or outcome,
    )


def question_resolutions_visible(*, question: Question, user: Any = None) -> list[Resolution]:
    """The resolution history ``user`` may see, oldest first; empty while it is hidden."""
    if not question_reveal(question=question, user=user).history:
        return []
    return list(question.resolutions.select_related("author").order_by("version"))


def question_has_hindsight_graph(*, question: Question) -> bool:
    return HindsightGraph.objects.filter(question=question, is_current=True).exists()


@dataclass(frozen=True)
class HindsightState:
    """A question's current hindsight graph as its grades use it: evidence (SrcP, source recall)
    and reasoning (KER, event F1) are graded only against a graph that ``passes`` the quality
    thresholds; without one, forecasts get outcome grades only."""

    exists: bool
    passes: bool
    # Why the latest build produced no graph (its reason in words), when there is none.
    no_graph_reason: str = ""


def question_hindsight_state(*, question: Question) -> HindsightState:
    graph = HindsightGraph.objects.filter(question=question, is_current=True).only("graph_built").first()
    if graph is not None:
        return HindsightState(exists=True, passes=graph.graph_built)
    attempt = GraphBuildAttempt.objects.filter(question=question).order_by("-started_at", "-id").first()
    reason = attempt.get_reason_display() if attempt is not None and attempt.reason else ""
    return HindsightState(exists=False, passes=False, no_graph_reason=str(reason))


def question_forecast_rows(*, question: Question, with_grades: bool) -> list[dict[str, Any]]:
    """One row per agent on a closed question: the forecast that counts for it (its latest when none
    is graded yet) and, ``with_grades``, its current grade; ordered by agent name."""
    latest: dict[int, Any] = {}
    for f in (
        Forecast.objects.filter(question=question)
        .select_related("agent", "agent__team", "session")
        .order_by("received_at", "id")
    ):
        latest[f.agent_id] = f
    counted: dict[int, tuple[Any, Grade]] = {}
    for g in Grade.objects.filter(forecast__question=question, is_current=True, counts=True).select_related(
        "forecast", "forecast__agent", "forecast__agent__team", "forecast__session"
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


def forecastable_questions(*, search: str = "", qtype: str = "") -> QuerySet[Question]:
    """Questions offered for a forecast now (live and open, replay on offer), the fictional sample
    world's first, then by deadline. Any other question can still be targeted by id; the service
    then says why it refuses."""
    qs = Question.objects.filter(Q(track=Question.Track.LIVE, status=Question.Status.OPEN) | replay_offered_q())
    if qtype in Question.Type.values:
        qs = qs.filter(type=qtype)
    return sample_first(question_search(qs, search), "track", "close_at", "id")
