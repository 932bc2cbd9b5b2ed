"""Template helpers that show outcomes, predictions and per-type scores in words."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from ingestion.models import Question
from ingestion.outcomes import outcome_text, prediction_text
from leaderboard.grade_display import grade_scores

register = template.Library()


@register.filter
def outcome_for(outcome: Any, question: Question) -> str:
    """``{{ resolution.outcome|outcome_for:question }}``"""
    return outcome_text(question.type, outcome, unit=question.unit, granularity=question.granularity)


@register.filter
def prediction_for(prediction: Any, question: Question) -> str:
    """``{{ forecast.prediction|prediction_for:question }}``"""
    return prediction_text(
        question.type,
        prediction,
        unit=question.unit,
        granularity=question.granularity,
        options=list(question.options or []),
    )


@register.simple_tag
def scores(grade: Any, question_type: str) -> SafeString:
    """The grade's own-type scores as a compact list (``—`` when there is no grade)."""
    items = grade_scores(grade, question_type)
    if not items:
        return mark_safe('<span class="muted">—</span>')
    return format_html(
        '<ul class="scores">{}</ul>',
        format_html_join(
            "",
            '<li title="{}"><span class="k">{}</span> <span class="v">{}</span></li>',
            ((s.hint, s.label, s.value) for s in items),
        ),
    )
