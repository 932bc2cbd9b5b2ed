"""Template helpers for the leaderboard pages."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from leaderboard.selectors.standings import LOWER_IS_BETTER, Entry

register = template.Library()


@register.simple_tag
def query_with(params: dict[str, str], **changes: Any) -> str:
    """The query string of ``params`` with some keys changed (empty value: removed)."""
    merged = {k: v for k, v in params.items()}
    for key, value in changes.items():
        if value in ("", None):
            merged.pop(key, None)
        else:
            merged[key] = str(value)
    if merged.get("track") == "all":
        merged.pop("track")
    return urlencode(merged)


@register.simple_tag
def sort_link(field: str, label: str, current: str, params: dict[str, str]) -> str:
    """A column header link: best-first on the first click, reversed on the next."""
    best_first = field if (field in LOWER_IS_BETTER or field == "rank") else f"-{field}"
    target = (
        (best_first[1:] if best_first.startswith("-") else f"-{best_first}") if current == best_first else best_first
    )
    arrow = ""
    if current.lstrip("-") == field:
        arrow = " ▼" if current.startswith("-") else " ▲"
    return format_html('<a href="?{}" class="sort">{}{}</a>', query_with(params, sort=target, page=""), label, arrow)


@register.simple_tag
def metric_cell(entry: Entry, metric: str) -> str:
    value = entry.values.get(metric)
    n = entry.counts.get(metric, 0)
    if value is None:
        return mark_safe('<td class="num muted">—</td>')
    shown = f"{value * 100:.1f}%" if metric == "accuracy" else f"{value:.3f}"
    return format_html('<td class="num">{} <span class="muted" title="questions">n={}</span></td>', shown, n)


@register.inclusion_tag("leaderboard/_own_forecasts.html")
def own_forecasts(user: Any, limit: int = 20) -> dict[str, Any]:
    """The signed-in user's teams' latest forecasts with their grades (replay grades withheld until published)."""
    from leaderboard.models import Forecast
    from leaderboard.selectors.grades import grade_status, grades_for_forecasts

    forecasts = list(
        Forecast.objects.filter(agent__team__members=user)
        .select_related("agent", "question")
        .order_by("-received_at", "-id")[:limit]
    )
    grades = grades_for_forecasts(forecast_ids=[f.pk for f in forecasts])
    rows = []
    for f in forecasts:
        grade = grades.get(f.pk)
        status = grade_status(forecast=f, grade=grade)
        rows.append({"forecast": f, "grade": grade if status in ("graded", "void") else None, "status": status})
    return {"rows": rows}
