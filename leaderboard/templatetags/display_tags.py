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
            '<li title="{}"><span class="k">{}</span> <span class="v"{}>{}</span></li>',
            ((s.hint, s.label, format_html(' data-score="{}"', s.score) if s.score else "", s.value) for s in items),
        ),
    )


@register.simple_tag
def score_legend(grades: Any, question_type: str = "") -> SafeString:
    """What every score label shown for ``grades`` means, once each, for the page's own legend (a
    tooltip is no explanation on a phone). ``question_type``: the grades' type when they share one,
    else each grade's question's type."""
    meanings: dict[str, str] = {}
    for grade in grades or ():
        qtype = question_type or grade.forecast.question.type
        for score in grade_scores(grade, qtype):
            if score.hint and score.label not in meanings:
                meanings[score.label] = score.hint
    if not meanings:
        return mark_safe("")
    return format_html(
        '<p class="muted abbreviations score-legend">What the scores mean: {}</p>',
        format_html_join(" ", "<strong>{}</strong>: {}.", meanings.items()),
    )


@register.simple_tag
def forecast_when(forecast: Any) -> SafeString:
    """When a forecast was made: a replay forecast at its session's simulated date (the server
    received it later, which is no sign of lateness), a live one when the server received it."""
    received = forecast.received_at
    session = forecast.session if forecast.session_id else None
    if session is None:
        return format_html(
            '<time class="nowrap" datetime="{}">{}</time>', received.isoformat(), f"{received:%Y-%m-%d %H:%M}"
        )
    simulated = session.simulated_at
    return format_html(
        '<time class="nowrap" datetime="{}" title="received {} UTC">{}</time> <span class="muted">(simulated date)</span>',
        simulated.isoformat(),
        f"{received:%Y-%m-%d %H:%M}",
        f"{simulated:%Y-%m-%d}",
    )
