"""Public pages: home, leaderboard (+ CSV), agent and question pages, questions list, methods."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe

from grading.models import HindsightGraph
from ingestion.models import PricePoint, Question
from leaderboard import charts
from leaderboard import standings as maths
from leaderboard.methods import methods_html
from leaderboard.models import Agent, Grade
from leaderboard.selectors.calibration import REVEALED, pair_of
from leaderboard.selectors.questions import (
    SAMPLE_WORLD,
    outcome_texts_for_grades,
    question_forecast_rows,
    question_resolutions_visible,
    question_search,
    sample_first,
)
from leaderboard.selectors.standings import (
    METRIC_LABELS,
    agent_standings,
    filter_choices,
    leaderboard_all,
    leaderboard_cache_key,
    leaderboard_page,
    normalise_sort,
    parse_view,
    top_agents,
)
from leaderboard.services.standings import cached_for_version


def _page_number(request: HttpRequest) -> int:
    try:
        return max(1, int(request.GET.get("page", "1")))
    except ValueError:
        return 1


def home(request: HttpRequest) -> HttpResponse:
    open_questions = Question.objects.filter(status=Question.Status.OPEN).order_by("close_at")[:10]
    recent = (
        Question.objects.filter(status__in=[Question.Status.RESOLVED, Question.Status.ANNULLED])
        .filter(Q(track=Question.Track.LIVE) | Q(outcome_published_at__isnull=False))
        .order_by("-updated_at")[:10]
    )
    tops = [(label, track, top_agents(track=track)) for track, label in filter_choices()["track"]]
    return render(
        request,
        "leaderboard/home.html",
        {"open_questions": open_questions, "recent_resolutions": recent, "tops": tops},
    )


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

    def body() -> str:
        return render_to_string("leaderboard/_leaderboard_body.html", _leaderboard_context(request, view))

    if not request.COOKIES:
        key = leaderboard_cache_key("leaderboard-page", view=view, sort=sort, page=number)
        html = cached_for_version(
            key, lambda: render_to_string("leaderboard/leaderboard.html", {"body": mark_safe(body())}, request)
        )
        return HttpResponse(html)
    key = leaderboard_cache_key("leaderboard-html", view=view, sort=sort, page=number)
    return render(request, "leaderboard/leaderboard.html", {"body": mark_safe(cached_for_version(key, body))})


def _leaderboard_context(request: HttpRequest, view: maths.View) -> dict[str, Any]:
    page = leaderboard_page(view=view, sort=request.GET.get("sort", "rank"), page=_page_number(request))
    scale = max([e.brier_hi for e in page.entries + page.baselines if e.brier_hi is not None] or [1.0])
    rows = [
        (e, mark_safe(charts.interval_bar(e.brier_lo, e.values.get("brier"), e.brier_hi, scale_max=scale)))
        for e in page.entries
    ]
    base_rows = [
        (e, mark_safe(charts.interval_bar(e.brier_lo, e.values.get("brier"), e.brier_hi, scale_max=scale)))
        for e in page.baselines
    ]
    params = page.params
    toggled = dict(params)
    if view.contamination_filter:
        toggled["contamination"] = "off"
    else:
        toggled.pop("contamination", None)
    return {
        "page": page,
        "rows": rows,
        "base_rows": base_rows,
        "columns": [(m, METRIC_LABELS[m]) for m in page.columns],
        "choices": filter_choices(),
        "params": params,
        "toggle_query": "&".join(f"{k}={v}" for k, v in toggled.items()),
        "base_query": "&".join(f"{k}={v}" for k, v in params.items()),
        "min_n": settings.HINDSIGHT_MIN_RANKED_N,
    }


_CSV_HEADER = [
    "rank",
    "provisional",
    "baseline",
    "name",
    "agent",
    "team",
    "model",
    "cutoff",
    "n",
    "brier_lo",
    "brier_hi",
    "brier_index",
    *[c for m in maths.METRICS for c in (m, f"{m}_n")],
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
        rows = [e.as_dict() for e in page.entries + page.baselines]
        if kind == "csv":
            out = io.StringIO()
            writer = csv.DictWriter(out, fieldnames=_CSV_HEADER)
            writer.writeheader()
            for row in rows:
                writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in _CSV_HEADER})
            return out.getvalue()
        payload = {"view": page.params, "rank_metric": page.rank_metric, "count": len(rows), "results": rows}
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


# ------------------------------------------------------------------------------------ agent page


def agent_page(request: HttpRequest, slug: str) -> HttpResponse:
    agent = get_object_or_404(Agent.objects.select_related("team"), slug=slug)
    grades = list(
        Grade.objects.filter(forecast__agent=agent, is_current=True, counts=True)
        .filter(REVEALED)
        .select_related("forecast", "forecast__question")
        .order_by("-forecast__received_at")
    )
    scored = [g for g in grades if not g.void]
    pairs = [
        pair for g in scored if g.forecast.question.type == Question.Type.BINARY and (pair := pair_of(g)) is not None
    ]
    bins = charts.calibration_bins(pairs)
    reliability = charts.reliability_svg(
        bins,
        title=f"Reliability diagram of {agent.name}: forecast probability against observed frequency",
        empty_hint="Dots appear as binary forecasts resolve.",
    )
    # Scores per axis over time: monthly means of the question's resolution month (forecast month as fallback).
    monthly: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for g in scored:
        month = g.forecast.received_at.strftime("%Y-%m")
        for axis, value in (
            ("brier", g.brier),
            ("source_precision", g.source_precision),
            ("key_event_recall", g.key_event_recall),
        ):
            if value is not None:
                monthly[month][axis].append(value)
    history = [
        (month, {axis: (sum(v) / len(v), len(v)) for axis, v in axes.items()})
        for month, axes in sorted(monthly.items())
    ]
    paginator = Paginator(grades, 50)
    page = paginator.get_page(request.GET.get("page"))
    outcomes = outcome_texts_for_grades(list(page.object_list))
    for g in page.object_list:
        g.outcome_text = outcomes.get(g.pk, "—")  # type: ignore[attr-defined]
    return render(
        request,
        "leaderboard/agent_public.html",
        {
            "agent": agent,
            "standings": agent_standings(agent=agent),
            "bins": bins,
            "reliability_svg": mark_safe(reliability),
            "sharpness": charts.sharpness(pairs),
            "n_pairs": len(pairs),
            "history": history,
            "grades_page": page,
        },
    )


# ------------------------------------------------------------------------------------ questions


def questions_list(request: HttpRequest) -> HttpResponse:
    """Filterable list of questions. With no filter it opens on the questions open for forecasts,
    the fictional sample world's first (they resolve within minutes on the demo), soonest deadline
    first; ``status=any`` lists every status."""
    qs = Question.objects.exclude(status=Question.Status.DRAFT)
    filters: dict[str, str] = {}
    defaulted = not any(k in request.GET for k in ("status", "track", "type", "origin", "domain", "q", "world"))
    status = "open" if defaulted else request.GET.get("status", "")
    if status in Question.Status.values:
        qs = qs.filter(status=status)
        filters["status"] = status
    elif status == "any":
        filters["status"] = "any"
    for param, allowed in (
        ("track", Question.Track.values),
        ("type", Question.Type.values),
        ("origin", Question.Origin.values),
    ):
        value = request.GET.get(param, "")
        if value in allowed:
            qs = qs.filter(**{param: value})
            filters[param] = value
    domain = request.GET.get("domain", "").strip()
    if domain:
        qs = qs.filter(domain=domain)
        filters["domain"] = domain
    if request.GET.get("world") == "sample":
        qs = qs.filter(SAMPLE_WORLD)
        filters["world"] = "sample"
    search = request.GET.get("q", "").strip()
    if search:
        qs = question_search(qs, search)
        filters["q"] = search
    deadline = "close_at" if status == Question.Status.OPEN else "-close_at"
    page = Paginator(sample_first(qs, deadline, "-id"), 50).get_page(request.GET.get("page"))
    open_now = Question.objects.filter(status=Question.Status.OPEN)
    open_by_origin = dict(
        open_now.exclude(SAMPLE_WORLD).values_list("origin").annotate(n=Count("id")).values_list("origin", "n")
    )
    return render(
        request,
        "leaderboard/questions.html",
        {
            "page": page,
            "filters": filters,
            "defaulted": defaulted,
            "query": urlencode(filters),
            "choices": filter_choices(),
            "statuses": [c for c in Question.Status.choices if c[0] != Question.Status.DRAFT],
            "open_sample": open_now.filter(SAMPLE_WORLD).count(),
            "open_by_origin": [
                (v, label, open_by_origin.get(v, 0)) for v, label in Question.Origin.choices if v != "sample"
            ],
        },
    )


def _probability_of_yes(prediction: Any) -> float | None:
    try:
        p = float(prediction.get("probability"))
    except (AttributeError, TypeError, ValueError):
        return None
    return p if 0.0 <= p <= 1.0 else None


def question_page(request: HttpRequest, question_id: int) -> HttpResponse:
    question = get_object_or_404(Question.objects.exclude(status=Question.Status.DRAFT), pk=question_id)
    staff = bool(getattr(request.user, "is_staff", False))
    revealed = question.is_revealed or staff
    resolutions = question_resolutions_visible(question=question, user=request.user)
    current = resolutions[-1] if resolutions else None
    price_svg = ""
    prices: list[tuple[Any, float]] = []
    # A replay question's later prices would give its outcome away: shown only once revealed.
    if question.market_id and (question.track == Question.Track.LIVE or revealed):
        points = list(
            PricePoint.objects.filter(market_id=question.market_id)
            .order_by("time")
            .values_list("outcome", "time", "probability")
        )
        if points:
            main_outcome = "Yes" if any(p[0] == "Yes" for p in points) else points[0][0]
            prices = [(t, p) for o, t, p in points if o == main_outcome]
            price_svg = charts.line_svg(
                prices, title=f"Market price of '{main_outcome}' over time for: {question.title}"
            )
    closed = question.status != Question.Status.OPEN
    # Other agents' answers to a replay question still on offer stay private until it is revealed.
    forecasts_hidden = question.track == Question.Track.REPLAY and not revealed
    forecasts: list[dict[str, Any]] = []
    histogram_svg = ""
    histogram: list[tuple[str, int]] = []
    if closed and not forecasts_hidden:
        forecasts = question_forecast_rows(question=question, with_grades=revealed)
        if question.type == Question.Type.BINARY:
            counts = [0] * 10
            for item in forecasts:
                p = _probability_of_yes(item["forecast"].prediction)
                if p is not None:
                    counts[min(9, int(p * 10))] += 1
            labels = [f"{b / 10:.1f}-{(b + 1) / 10:.1f}" for b in range(10)]
            histogram = list(zip(labels, counts, strict=True))
            histogram_svg = charts.histogram_svg(
                counts, title=f"Distribution of {len(forecasts)} agents' probabilities of yes", labels=labels
            )
    has_graph = (question.is_revealed or staff) and HindsightGraph.objects.filter(
        question=question, is_current=True
    ).exists()
    hindsight_url = reverse("grading:hindsight", args=[question.pk]) if has_graph else ""
    return render(
        request,
        "leaderboard/question.html",
        {
            "question": question,
            "revealed": revealed,
            "resolutions": resolutions,
            "current_resolution": current,
            "annulled": question.status == Question.Status.ANNULLED and revealed,
            "price_svg": mark_safe(price_svg),
            "prices": prices[-20:],
            "closed": closed,
            "forecasts_hidden": forecasts_hidden,
            "forecasts": forecasts,
            "histogram_svg": mark_safe(histogram_svg),
            "histogram": histogram,
            "hindsight_url": hindsight_url,
        },
    )


# ------------------------------------------------------------------------------------ methods


def methods(request: HttpRequest) -> HttpResponse:
    """Every metric's definition from the one Markdown source docs/methods.md is generated from."""
    return render(request, "leaderboard/methods.html", {"body": mark_safe(methods_html())})
