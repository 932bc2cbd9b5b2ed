"""Celery tasks for the standings (kept apart from the grading tasks module)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from leaderboard.services.standings import standings_rebuild, standings_update_for_questions


@shared_task(name="leaderboard.tasks_standings.rebuild_standings", acks_late=True)
def rebuild_standings() -> dict[str, Any]:
    """Full rebuild; idempotent, so a duplicate delivery only recomputes the same rows."""
    result = standings_rebuild()
    return {"views": result.views, "rows": result.rows, "grades": result.grades}


@shared_task(name="leaderboard.tasks_standings.update_standings_for_questions", acks_late=True)
def update_standings_for_questions(question_ids: list[int]) -> dict[str, Any]:
    result = standings_update_for_questions(question_ids=question_ids)
    return {"views": result.views, "rows": result.rows}
