"""Binary forecasts paired with what happened, for reliability diagrams (agent page, leaderboard)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from ingestion.models import Question
from leaderboard.models import Grade
from leaderboard.selectors.questions import revealed_q


def pair_of(grade: Grade) -> tuple[float, int] | None:
    """(P(yes), outcome 0/1) of a graded binary forecast; the outcome follows from its correctness
    under the 50% rule (a forecast of p >= 0.5 is correct exactly when the answer was yes)."""
    if grade.correct is None or grade.void:
        return None
    try:
        p = float(grade.forecast.prediction.get("probability"))
    except (AttributeError, TypeError, ValueError):
        return None
    return p, int((p >= 0.5) == bool(grade.correct))


def binary_pairs(*, agent_ids: Iterable[int], track: str = "all") -> dict[int, list[tuple[float, int]]]:
    """agent id -> (P(yes), outcome) of its counted, current grades on revealed binary questions."""
    grades = Grade.objects.filter(
        revealed_q("forecast__question__"),
        forecast__agent_id__in=list(agent_ids),
        forecast__question__type=Question.Type.BINARY,
        is_current=True,
        counts=True,
        void=False,
    ).select_related("forecast")
    if track in (Question.Track.LIVE, Question.Track.REPLAY):
        grades = grades.filter(forecast__question__track=track)
    pairs: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for grade in grades.only("correct", "void", "forecast__prediction", "forecast__agent_id"):
        pair = pair_of(grade)
        if pair is not None:
            pairs[grade.forecast.agent_id].append(pair)
    return pairs
