"""The leaderboard page and its CSV and JSON exports."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from leaderboard import charts
from leaderboard.selectors.leaderboard import leaderboard_all, leaderboard_page
from leaderboard.selectors.standings import (
    COLUMN_ORDER,
    LOWER_IS_BETTER,
    METRIC_FORMAT,
    METRIC_HELP,
    METRIC_LABELS,
    MORE_COLUMNS,
    filter_choices,
    graded_question_counts,
    leaderboard_cache_key,
    normalise_sort,
    parse_view,
)
from leaderboard.selectors.standings_cache import cached_for_version
from leaderboard.stats.metrics import METRICS, STANDINGS_VERSION
from leaderboard.stats.ranking import MIN_SHARING_AGENTS
from leaderboard.stats.views import View

# The question types a reader can switch between above the table (per-type views).
TYPE_TABS = (
    ("", "All types"),
    ("binary", "Binary"),
    ("multiple_choice", "Multiple choice"),
    ("quantity", "Quantity"),
    ("timeframe", "Timeframe"),
    ("relation", "Relation (MIRAI)"),
    ("open_ended", "Open-ended"),
)


def _page_number(request: HttpRequest) -> int:
    try:
        return max(1, int(request.GET.get("page", "1")))
    except ValueError:
        return 1


def _more_columns(request: HttpRequest) -> bool:
    return request.GET.get("columns") == "all"


def _bad_view(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    body = render_to_string(
        "leaderboard/_leaderboard_body.html", {"errors": exc.message_dict, "choices": filter_choices()}
    )
    return render(request, "leaderboard/leaderboard.html", {"body": mark_safe(body)}, status=400)


def leaderboard(request: HttpRequest) -> HttpResponse:
    if request.GET.get("format") == "csv":
        return leaderboard_csv(request)
    if request.GET.get("format") == "json":
        return leaderboard_json(request)
    try:
        view = parse_view(request.GET)
    except ValidationError as exc:
        return _bad_view(request, exc)
    # The table only changes when standings are written (which bumps the version), so it is cached
    # per normalised request and version. A request without cookies is anonymous with no messages:
    # its whole page is the same for everyone and is cached as is.
    sort = normalise_sort(request.GET.get("sort"))
    number = _page_number(request)
    more = _more_columns(request)

    def body() -> str:
        return render_to_string("leaderboard/_leaderboard_body.html", _leaderboard_context(request, view))

    if not request.COOKIES:
        key = leaderboard_cache_key("leaderboard-page", view=view, sort=sort, page=number, more=more)
        html = cached_for_version(
            key, lambda: render_to_string("leaderboard/leaderboard.html", {"body": mark_safe(body())}, request)
        )
        return HttpResponse(html)
    key = leaderboard_cache_key("leaderboard-html", view=view, sort=sort, page=number, more=more)
    return render(request, "leaderboard/leaderboard.html", {"body": mark_safe(cached_for_version(key, body))})


# Which axis of the grading each column belongs to (the group header above the columns).
_AXIS = {
    "source_precision": "Evidence",
    "leaks": "Evidence",
    "key_event_recall": "Reasoning",
}


def _column(metric: str) -> dict[str, Any]:
    return {
        "metric": metric,
        "label": METRIC_LABELS[metric],
        "help": METRIC_HELP[metric],
        "format": METRIC_FORMAT[metric],
        "lower_is_better": metric in LOWER_IS_BETTER,
    }


def _groups(metrics: Sequence[str]) -> list[tuple[str, int]]:
    """(axis, number of consecutive columns) for the group header row."""
    out: list[tuple[str, int]] = []
    for metric in metrics:
        axis = _AXIS.get(metric, "Outcome")
        if out and out[-1][0] == axis:
            out[-1] = (axis, out[-1][1] + 1)
        else:
            out.append((axis, 1))
    return out


def _counted_choices(view: View) -> dict[str, list[tuple[str, str]]]:
    """The filter choices, the domain and horizon options with how many graded questions each holds
    in this view's track and type (an option that would show an empty board says so)."""
    choices = filter_choices()
    counts = graded_question_counts(view)
    for name in ("domain", "horizon"):
        choices[name] = [
            (value, f"{label} ({counts[name][value]})" if counts[name][value] else f"{label} (none graded yet)")
            for value, label in choices[name]
        ]
    return choices


def _leaderboard_context(request: HttpRequest, view: View) -> dict[str, Any]:
    page = leaderboard_page(view=view, sort=request.GET.get("sort", "rank"), page=_page_number(request))
    more = _more_columns(request)
    scale = max([e.brier_hi for e in page.entries if e.brier_hi is not None] or [1.0])
    rows = [
        (e, mark_safe(charts.interval_bar(e.brier_lo, e.values.get("brier"), e.brier_hi, scale_max=scale, width=80)))
        for e in page.entries
    ]
    shown = [m for m in COLUMN_ORDER if m in page.columns and (more or m not in MORE_COLUMNS)]
    # The rank metric leads the table.
    if page.rank_metric in shown:
        shown.remove(page.rank_metric)
        shown.insert(0, page.rank_metric)
    hidden = [METRIC_LABELS[m] for m in MORE_COLUMNS if m in page.columns and not more]
    params = dict(page.params)
    if more:
        params["columns"] = "all"
    toggled = dict(params)
    if view.contamination_filter:
        toggled["contamination"] = "off"
    else:
        toggled.pop("contamination", None)
    return {
        "page": page,
        "rows": rows,
        "columns": [_column(m) for m in shown],
        "groups": _groups(shown),
        "hidden_columns": hidden,
        "more": more,
        "rank_label": METRIC_LABELS.get(page.rank_metric, ""),
        "rank_help": METRIC_HELP.get(page.rank_metric, ""),
        "rank_lower_is_better": page.rank_metric in LOWER_IS_BETTER,
        "min_sharing_agents": MIN_SHARING_AGENTS,
        "type_tabs": TYPE_TABS,
        "choices": _counted_choices(view),
        "params": params,
        "toggle_query": "&".join(f"{k}={v}" for k, v in toggled.items()),
        "base_query": "&".join(f"{k}={v}" for k, v in page.params.items()),
        "min_n": settings.HINDSIGHT_MIN_RANKED_N,
    }


_CSV_HEADER = [
    "rank",
    "place",
    "provisional",
    "baseline",
    "platform_baseline",
    "name",
    "agent",
    "team",
    "model",
    "cutoff",
    "n",
    "rank_n",
    "brier_lo",
    "brier_hi",
    "brier_index",
    "brier_adjusted_index",
    *[c for m in METRICS for c in (m, f"{m}_n")],
    "standings_version",
]


def _export(request: HttpRequest, kind: str) -> tuple[str, str] | HttpResponse:
    """(content type, body) of the whole view as CSV or JSON, cached like the page."""
    try:
        view = parse_view(request.GET)
    except ValidationError as exc:
        return JsonResponse(
            {"code": "invalid", "message": "; ".join(f"{k}: {v[0]}" for k, v in exc.message_dict.items())}, status=400
        )
    sort = normalise_sort(request.GET.get("sort"))

    def build() -> str:
        page = leaderboard_all(view=view, sort=sort)
        rows = [e.as_dict() for e in page.entries]
        if kind == "csv":
            out = io.StringIO()
            writer = csv.DictWriter(out, fieldnames=_CSV_HEADER)
            writer.writeheader()
            for row in rows:
                writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in _CSV_HEADER})
            return out.getvalue()
        payload = {
            "view": page.params,
            "rank_metric": page.rank_metric,
            "standings_version": page.standings_version,
            "methods_version": STANDINGS_VERSION,
            "count": len(rows),
            "results": rows,
        }
        return json.dumps(payload, cls=DjangoJSONEncoder)

    body = cached_for_version(leaderboard_cache_key(f"leaderboard-{kind}", view=view, sort=sort), build)
    return ("text/csv; charset=utf-8" if kind == "csv" else "application/json"), body


def leaderboard_csv(request: HttpRequest) -> HttpResponse:
    result = _export(request, "csv")
    if isinstance(result, HttpResponse):
        return result
    content_type, body = result
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = 'attachment; filename="leaderboard.csv"'
    return response


def leaderboard_json(request: HttpRequest) -> HttpResponse:
    result = _export(request, "json")
    if isinstance(result, HttpResponse):
        return result
    content_type, body = result
    return HttpResponse(body, content_type=content_type)
