"""Template helpers for the leaderboard pages."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import template
from django.utils.html import format_html

from leaderboard.selectors.standings import LOWER_IS_BETTER, METRIC_FORMAT, METRIC_HELP, METRIC_LABELS, Entry

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


def metric_text(value: float | None, metric: str) -> str:
    """A metric's value as the pages show it: shares as percentages, scores with three decimals,
    peer scores signed with one, counts whole."""
    if value is None:
        return "—"
    kind = METRIC_FORMAT.get(metric, "score")
    if kind == "share":
        return f"{value * 100:.1f}%"
    if kind == "peer":
        return f"{value:+.1f}"
    if kind == "count":
        return f"{value:.0f}"
    return f"{value:.3f}"


@register.simple_tag
def metric_value(entry: Any, metric: str) -> str:
    """A value of an Entry or a Standing row, formatted (no cell)."""
    values = getattr(entry, "values", None)
    value = values.get(metric) if isinstance(values, dict) else getattr(entry, metric, None)
    return metric_text(value, metric)


@register.filter
def as_metric(value: Any, metric: str) -> str:
    """A grade's or a mean's value formatted as the standings show that metric (``|as_metric:"source_precision"``);
    ``—`` for a missing one (a template hands a missing attribute over as "")."""
    return metric_text(float(value) if isinstance(value, int | float) else None, metric)


@register.simple_tag
def rank_n(standing: Any) -> int:
    """A stored row's questions behind its ranking score (the n the provisional rule uses)."""
    metric = getattr(standing, "rank_metric", "")
    return int(getattr(standing, f"{metric}_n") if metric else standing.n)


@register.filter
def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric or "Score")


# Shown inside another metric's cell, in brackets.
_COMPANIONS = {"key_event_recall": "ker_coverage", "time_brier": "time_coverage"}


@register.simple_tag
def metric_cell(entry: Entry, metric: str) -> str:
    """One table cell: the value and its n when that differs from the row's ranking n; under it, for
    the adjusted Brier its Brier Index, for KER and the time-averaged Brier their coverage."""
    value = entry.values.get(metric)
    n = entry.counts.get(metric, 0)
    sub = ""
    companion = _COMPANIONS.get(metric)
    if companion and entry.values.get(companion) is not None:
        sub = format_html(
            '<small class="sub"><abbr title="{}: {}">cov</abbr> {}</small>',
            METRIC_LABELS[companion],
            METRIC_HELP[companion],
            metric_text(entry.values.get(companion), companion),
        )
    if value is None:
        return format_html('<td class="num muted">—{}</td>', sub)
    if metric == "brier_adjusted" and entry.brier_adjusted_index is not None:
        sub = format_html(
            '<small class="sub"><abbr title="Brier Index of the adjusted Brier: 100 x (1 - its square root)">BI</abbr> {}</small>',
            f"{entry.brier_adjusted_index:.1f}",
        )
    counted = "" if n == entry.rank_n else format_html(' <span class="muted" title="questions">n={}</span>', n)
    return format_html(
        '<td class="num" title="{}: n={}"><span data-metric="{}">{}</span>{}{}</td>',
        METRIC_LABELS[metric],
        n,
        metric,
        metric_text(value, metric),
        counted,
        sub,
    )


@register.inclusion_tag("leaderboard/_own_forecasts.html")
def own_forecasts(user: Any, limit: int = 20) -> dict[str, Any]:
    """The signed-in user's teams' latest forecasts with their grades (replay grades withheld until published)."""
    from leaderboard.models import Forecast
    from leaderboard.selectors.grades import grade_status, grades_for_forecasts

    forecasts = list(
        Forecast.objects.filter(agent__team__members=user)
        .select_related("agent", "question", "session")
        .order_by("-received_at", "-id")[:limit]
    )
    grades = grades_for_forecasts(forecast_ids=[f.pk for f in forecasts])
    rows = []
    for f in forecasts:
        grade = grades.get(f.pk)
        status = grade_status(forecast=f, grade=grade)
        rows.append({"forecast": f, "grade": grade if status in ("graded", "void") else None, "status": status})
    return {"rows": rows, "grades": [r["grade"] for r in rows if r["grade"] is not None]}
