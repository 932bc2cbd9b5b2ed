"""Public pages: home, agent and question pages, questions list, methods (the leaderboard: views.leaderboard)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.safestring import mark_safe

from grading.selectors import market_prices
from ingestion.models import Question
from ingestion.selectors.archives import question_archives
from ingestion.services.questions import default_window_end
from leaderboard import charts
from leaderboard.methods import methods_html
from leaderboard.models import Agent, Grade
from leaderboard.selectors.calibration import pair_of, with_outcome
from leaderboard.selectors.leaderboard import agent_standings, top_agents
from leaderboard.selectors.market_prices import MarketSeries
from leaderboard.selectors.monthly import agent_monthly_scores
from leaderboard.selectors.pairwise import pairwise_confidence
from leaderboard.selectors.questions import (
    SAMPLE_WORLD,
    listed_status_q,
    outcome_texts_for_grades,
    question_forecast_rows,
    question_hindsight_state,
    question_resolutions_visible,
    question_reveal,
    question_search,
    revealed_q,
    sample_first,
)
from leaderboard.selectors.standings import filter_choices
from leaderboard.selectors.standings_cache import cached_for_version
from leaderboard.stats.pairwise import PAIRWISE_RESAMPLES


def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers and feed readers that ask for /favicon.ico get the site's icon."""
    return redirect(static("hindsight/favicon.svg"), permanent=True)


def home(request: HttpRequest) -> HttpResponse:
    open_questions = Question.objects.filter(status=Question.Status.OPEN).order_by("close_at")[:10]
    recent = Question.objects.filter(revealed_q()).order_by("-updated_at")[:10]
    tops = [(label, track, top_agents(track=track)) for track, label in filter_choices()["track"]]
    return render(
        request,
        "leaderboard/home.html",
        {"open_questions": open_questions, "recent_resolutions": recent, "tops": tops},
    )


# ------------------------------------------------------------------------------------ agent page


def agent_page(request: HttpRequest, slug: str) -> HttpResponse:
    agent = get_object_or_404(Agent.objects.select_related("team"), slug=slug)
    grades = list(
        with_outcome(Grade.objects.all())
        .filter(forecast__agent=agent, is_current=True, counts=True)
        .filter(revealed_q("forecast__question__"))
        .select_related("forecast", "forecast__question", "forecast__session")
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
            # Pairwise resampling is the page's heaviest part and changes only with the standings.
            "pairs": cached_for_version(f"agent-pairs:{agent.pk}", lambda: pairwise_confidence(agent=agent)),
            "resamples": f"{PAIRWISE_RESAMPLES:,}",
            "bins": bins,
            "reliability_svg": mark_safe(reliability),
            "sharpness": charts.sharpness(pairs),
            "n_pairs": len(pairs),
            "history": agent_monthly_scores(agent=agent),
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
    # When a search finds nothing only because of the status filter, the page says so.
    elsewhere: list[tuple[str, int]] = []
    if status in Question.Status.values:
        unfiltered, qs = qs, qs.filter(listed_status_q(status))
        if search and not qs.exists():
            elsewhere = _status_counts(unfiltered)
    # Open: live questions first, soonest deadline first (a replay question's real-world
    # deadline has passed; it stays open for replay forecasts).
    order = ("track", "close_at") if status == Question.Status.OPEN else ("-close_at",)
    page = Paginator(sample_first(qs, *order, "-id"), 50).get_page(request.GET.get("page"))
    open_now = Question.objects.filter(listed_status_q(Question.Status.OPEN))
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
            "elsewhere": elsewhere,
            "any_status_query": urlencode({**filters, "status": "any"}),
            "open_by_origin": [
                (v, label, open_by_origin.get(v, 0)) for v, label in Question.Origin.choices if v != "sample"
            ],
        },
    )


def _status_counts(qs: Any) -> list[tuple[str, int]]:
    """How many of ``qs`` each status the pages show holds, in the filter's order."""
    counts = []
    for value, label in Question.Status.choices:
        if value == Question.Status.DRAFT:
            continue
        n = qs.filter(listed_status_q(value)).count()
        if n:
            counts.append((label.lower(), n))
    return counts


def _probability_of_yes(prediction: Any) -> float | None:
    try:
        p = float(prediction.get("probability"))
    except (AttributeError, TypeError, ValueError):
        return None
    return p if 0.0 <= p <= 1.0 else None


def _option_prices(question: Question, rows: int = 20) -> dict[str, Any]:
    """A multiple-choice market's price per option: the lines to draw (in the question's option
    order) and a table of the latest ``rows`` times with every option's price then."""
    series = MarketSeries(question)
    if not series.series:
        return {}
    by_name = {name.strip().lower(): name for name in series.series}
    ordered = [by_name[o.strip().lower()] for o in question.options or [] if o.strip().lower() in by_name]
    ordered += sorted(name for name in series.series if name not in ordered)
    lines = [(name, list(zip(*series.series[name], strict=True))) for name in ordered]
    times = sorted({t for name in ordered for t in series.series[name][0]})[-rows:]
    table = [(t, [series.price(name, t) for name in ordered]) for t in times]
    return {"labels": ordered, "lines": lines, "table": table}


def question_page(request: HttpRequest, question_id: int) -> HttpResponse:
    question = get_object_or_404(Question.objects.exclude(status=Question.Status.DRAFT), pk=question_id)
    reveal = question_reveal(question=question, user=request.user)
    resolutions = question_resolutions_visible(question=question, user=request.user)
    price_svg = ""
    prices: list[tuple[Any, float]] = []
    option_prices: dict[str, Any] = {}
    if reveal.activity and question.type == Question.Type.MULTIPLE_CHOICE:
        option_prices = _option_prices(question)
        if option_prices:
            price_svg = charts.lines_svg(
                option_prices["lines"], title=f"Market price of each option over time for: {question.title}"
            )
    elif reveal.activity:
        main_outcome, prices = market_prices(question)
        if prices:
            price_svg = charts.line_svg(
                prices, title=f"Market price of '{main_outcome}' over time for: {question.title}"
            )
    closed = question.status != Question.Status.OPEN
    forecasts: list[dict[str, Any]] = []
    histogram_svg = ""
    histogram: list[tuple[str, int]] = []
    if closed and reveal.activity:
        forecasts = question_forecast_rows(question=question, with_grades=reveal.outcome)
        if question.type == Question.Type.BINARY:
            counts = [0] * 10
            for item in forecasts:
                p = _probability_of_yes(item["forecast"].prediction)
                if p is not None:
                    counts[min(9, int(p * 10))] += 1
            labels = [f"{b / 10:.1f}-{(b + 1) / 10:.1f}" for b in range(10)]
            # Sized to the data: the bars as tall as the largest count needs, the table only the
            # bins some agent forecast in.
            histogram = [(label, c) for label, c in zip(labels, counts, strict=True) if c]
            if histogram:
                histogram_svg = charts.histogram_svg(
                    counts,
                    title=f"Distribution of {sum(counts)} agents' probabilities of yes",
                    labels=labels,
                    height=min(140, 44 + 16 * max(counts)),
                )
    # What the grades are computed against, once the outcome (and so any graph) may be shown.
    hindsight = (
        question_hindsight_state(question=question)
        if reveal.outcome and question.status == Question.Status.RESOLVED
        else None
    )
    evidence_graded = (hindsight is not None and hindsight.passes) or any(
        row["grade"] is not None
        and (row["grade"].source_precision is not None or row["grade"].key_event_recall is not None)
        for row in forecasts
    )
    return render(
        request,
        "leaderboard/question.html",
        {
            "question": question,
            "revealed": reveal.outcome,
            "resolutions": resolutions,
            "current_resolution": resolutions[-1] if resolutions else None,
            "annulled": question.status == Question.Status.ANNULLED and reveal.outcome,
            "price_svg": mark_safe(price_svg),
            "prices": prices[-20:],
            "option_prices": option_prices,
            "closed": closed,
            "forecasts_hidden": not reveal.activity,
            "forecasts": forecasts,
            "histogram_svg": mark_safe(histogram_svg),
            "histogram": histogram,
            "hindsight": hindsight,
            "has_archive": bool(question_archives(question, window_end=default_window_end(question))),
            "evidence_graded": evidence_graded,
            "grades": [row["grade"] for row in forecasts if row["grade"] is not None],
            "hindsight_url": reverse("grading:hindsight", args=[question.pk]) if hindsight and hindsight.exists else "",
        },
    )


# ------------------------------------------------------------------------------------ methods


def methods(request: HttpRequest) -> HttpResponse:
    """Every metric's definition from the one Markdown source docs/methods.md is generated from."""
    return render(request, "leaderboard/methods.html", {"body": mark_safe(methods_html())})
