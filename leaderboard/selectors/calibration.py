"""Binary forecasts paired with what happened, for reliability diagrams (agent page, leaderboard)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import JSONField, OuterRef, QuerySet, Subquery

from ingestion.models import Question, Resolution
from leaderboard.models import Grade
from leaderboard.selectors.questions import revealed_q


def with_outcome(grades: QuerySet[Grade]) -> QuerySet[Grade]:
    """The grades with ``resolved_outcome``: the outcome of the resolution version each was graded
    against (True/False on a binary question). A forecast at 50% makes no call, so its correctness
    says nothing of what happened: the reliability diagram reads the outcome itself."""
    outcome = Resolution.objects.filter(
        question_id=OuterRef("forecast__question_id"), version=OuterRef("resolution_version")
    ).values("outcome")[:1]
    return grades.annotate(resolved_outcome=Subquery(outcome, output_field=JSONField()))


def pair_of(grade: Grade) -> tuple[float, int] | None:
    """(P(yes), outcome 0/1) of a graded binary forecast read :func:`with_outcome`."""
    outcome = getattr(grade, "resolved_outcome", None)
    if grade.correct is None or grade.void or not isinstance(outcome, bool):
        return None
    try:
        p = float(grade.forecast.prediction.get("probability"))
    except (AttributeError, TypeError, ValueError):
        return None
    return p, int(outcome)


def binary_pairs(*, agent_ids: Iterable[int], track: str = "all") -> dict[int, list[tuple[float, int]]]:
    """agent id -> (P(yes), outcome) of its counted, current grades on revealed binary questions."""
    grades = (
        with_outcome(Grade.objects.all())
        .filter(
            revealed_q("forecast__question__"),
            forecast__agent_id__in=list(agent_ids),
            forecast__question__type=Question.Type.BINARY,
            is_current=True,
            counts=True,
            void=False,
        )
        .select_related("forecast")
    )
    if track in (Question.Track.LIVE, Question.Track.REPLAY):
        grades = grades.filter(forecast__question__track=track)
    pairs: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for grade in grades.only("correct", "void", "forecast__prediction", "forecast__agent_id"):
        pair = pair_of(grade)
        if pair is not None:
            pairs[grade.forecast.agent_id].append(pair)
    return pairs
