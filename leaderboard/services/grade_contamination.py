"""Contamination flags of an agent's current grades, kept in step with its declared knowledge cutoff."""

from __future__ import annotations

from collections import defaultdict

from django.db import transaction

from leaderboard.models import Agent, Grade


@transaction.atomic
def grades_refresh_contamination(*, agent_id: int) -> list[int]:
    """Recompute the contamination data of an agent's current grades from its declared cutoff (after
    the agent changed it); returns the ids of the questions whose grades changed.

    Only the two flags change, in place: the scores do not depend on the cutoff, so no new grade
    version is written.
    """
    cutoff = Agent.objects.filter(pk=agent_id).values_list("knowledge_cutoff", flat=True).first()
    grades = Grade.objects.filter(forecast__agent_id=agent_id, is_current=True)
    by_flags: dict[tuple[bool, bool], list[int]] = defaultdict(list)
    questions: set[int] = set()
    for grade_id, question_id, open_at, contaminated, declared in grades.values_list(
        "id", "forecast__question_id", "forecast__question__open_at", "contaminated", "cutoff_declared"
    ):
        wanted = (cutoff is not None and open_at.date() < cutoff, cutoff is not None)
        if wanted != (contaminated, declared):
            by_flags[wanted].append(grade_id)
            questions.add(question_id)
    for (contaminated, declared), ids in by_flags.items():
        Grade.objects.filter(pk__in=ids).update(contaminated=contaminated, cutoff_declared=declared)
    return sorted(questions)
