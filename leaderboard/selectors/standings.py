"""Reads for the leaderboard: parse a view from request parameters, page through its standings.

Materialised views (one attribute filter at most, no date window) read Standing rows; any other
view (two or more filters, or a resolution-date window) is computed on request from the same
eligible grades with the same maths.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Count, F, Max, Q

from ingestion.models import Question
from leaderboard.models import Agent, Standing
from leaderboard.standings import (
    BASELINE_LABELS,
    HORIZON_BUCKETS,
    HORIZON_LABELS,
    METRICS,
    TRACKS,
    View,
    compute_views,
)

SORTABLE = ("rank", "n", "brier_index", *METRICS)
METRIC_LABELS = {
    "accuracy": "Accuracy",
    "brier": "Brier",
    "log_score": "Log score",
    "market_edge": "Market edge",
    "source_precision": "SrcP",
    "key_event_recall": "KER",
    "ker_coverage": "KER coverage",
    "second_level_f1": "MIRAI F1 (2nd level)",
    "open_f1": "Open-ended F1",
}
LOWER_IS_BETTER = {"brier"}


@dataclass
class Entry:
    """One line of a leaderboard table (an agent or a baseline)."""

    rank: int | None
    provisional: bool
    baseline: str
    agent: Agent | None
    n: int
    values: dict[str, float | None]
    counts: dict[str, int]
    brier_lo: float | None
    brier_hi: float | None
    brier_index: float | None

    @property
    def name(self) -> str:
        if self.agent is not None:
            return self.agent.name
        return BASELINE_LABELS.get(self.baseline, self.baseline)

    @property
    def cutoff_missing(self) -> bool:
        return self.agent is not None and self.agent.knowledge_cutoff is None

    def as_dict(self) -> dict[str, Any]:
        agent = self.agent
        out: dict[str, Any] = {
            "rank": self.rank,
            "provisional": self.provisional,
            "baseline": self.baseline or None,
            "name": self.name,
            "agent": agent.slug if agent else None,
            "team": agent.team.name if agent else None,
            "model": agent.model_name if agent else None,
            "cutoff": agent.knowledge_cutoff.isoformat() if agent and agent.knowledge_cutoff else None,
            "n": self.n,
            "brier_lo": self.brier_lo,
            "brier_hi": self.brier_hi,
            "brier_index": self.brier_index,
        }
        for m in METRICS:
            out[m] = self.values.get(m)
            out[f"{m}_n"] = self.counts.get(m, 0)
        return out


@dataclass
class LeaderboardPage:
    view: View
    entries: list[Entry]
    baselines: list[Entry]
    columns: list[str]
    rank_metric: str
    total: int
    page: int
    pages: int
    sort: str
    materialised: bool
    computed_at: datetime | None = None
    params: dict[str, str] = field(default_factory=dict)


def _day(value: str, name: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise ValidationError({name: f"{value!r} is not a date (YYYY-MM-DD)."}) from exc


def parse_view(params: Mapping[str, Any]) -> View:
    """A view from query parameters; a ValidationError names every bad parameter."""
    errors: dict[str, str] = {}
    track = (params.get("track") or "all").strip()
    if track not in TRACKS:
        errors["track"] = f"{track!r} is not one of {', '.join(TRACKS)}."
    qtype = (params.get("type") or "").strip()
    if qtype and qtype not in Question.Type.values:
        errors["type"] = f"{qtype!r} is not a question type ({', '.join(Question.Type.values)})."
    origin = (params.get("origin") or "").strip()
    if origin and origin not in Question.Origin.values:
        errors["origin"] = f"{origin!r} is not an origin ({', '.join(Question.Origin.values)})."
    horizon = (params.get("horizon") or "").strip()
    buckets = [b for b, _ in HORIZON_BUCKETS]
    if horizon and horizon not in buckets:
        errors["horizon"] = f"{horizon!r} is not a horizon bucket ({', '.join(buckets)})."
    contamination = (params.get("contamination") or "on").strip()
    if contamination not in ("on", "off"):
        errors["contamination"] = "contamination is 'on' (default) or 'off'."
    domain = (params.get("domain") or "").strip()[:100]
    window: dict[str, float | None] = {"from": None, "to": None}
    for name in ("from", "to"):
        raw = (params.get(name) or "").strip()
        if raw:
            try:
                day = _day(raw, name)
            except ValidationError as exc:
                errors[name] = exc.message_dict[name][0]
                continue
            moment = datetime.combine(day, time.min, tzinfo=UTC)
            if name == "to":
                moment += timedelta(days=1)  # inclusive end date
            window[name] = moment.timestamp()
    if errors:
        raise ValidationError(errors)
    return View(
        track=track,
        question_type=qtype,
        domain=domain,
        origin=origin,
        horizon=horizon,
        contamination_filter=contamination == "on",
        resolved_from=window["from"],
        resolved_to=window["to"],
    )


def view_params(view: View) -> dict[str, str]:
    """The query parameters naming a view (only non-defaults)."""
    out: dict[str, str] = {}
    if view.track != "all":
        out["track"] = view.track
    for key, value in (
        ("type", view.question_type),
        ("domain", view.domain),
        ("origin", view.origin),
        ("horizon", view.horizon),
    ):
        if value:
            out[key] = value
    if not view.contamination_filter:
        out["contamination"] = "off"
    if view.resolved_from is not None:
        out["from"] = datetime.fromtimestamp(view.resolved_from, UTC).date().isoformat()
    if view.resolved_to is not None:
        out["to"] = (datetime.fromtimestamp(view.resolved_to, UTC) - timedelta(days=1)).date().isoformat()
    return out


def view_filter(view: View | Any) -> Q:
    """The Standing rows of one view (anything with the view's six fields: a View, a rebuild result's view)."""
    return Q(
        track=view.track,
        question_type=view.question_type,
        domain=view.domain,
        origin=view.origin,
        horizon=view.horizon,
        contamination_filter=view.contamination_filter,
    )


def _entry_from_standing(s: Standing) -> Entry:
    return Entry(
        rank=s.rank,
        provisional=s.provisional,
        baseline=s.baseline,
        agent=s.agent,
        n=s.n,
        values={m: getattr(s, m) for m in METRICS},
        counts={m: getattr(s, f"{m}_n") for m in METRICS},
        brier_lo=s.brier_lo,
        brier_hi=s.brier_hi,
        brier_index=s.brier_index,
    )


def _parse_sort(sort: str) -> tuple[str, bool]:
    """(field, descending); a bad sort falls back to rank."""
    descending = sort.startswith("-")
    name = sort.lstrip("-")
    if name not in SORTABLE:
        return "rank", False
    return name, descending


def normalise_sort(sort: str | None) -> str:
    """The sort a request gets, spelt one way (``-brier``, ``rank``): part of cache keys."""
    name, descending = _parse_sort(sort or "rank")
    return ("-" if descending else "") + name


def leaderboard_cache_key(prefix: str, *, view: View, **extra: Any) -> str:
    """Cache key of a rendered leaderboard table: the normalised request (view parameters in a
    fixed order and the given extras), so equivalent query strings share it."""
    import hashlib

    params = view_params(view)
    text = "&".join(f"{k}={params[k]}" for k in sorted(params))
    text += "|" + "&".join(f"{k}={extra[k]}" for k in sorted(extra))
    return f"{prefix}:{hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()}"


def leaderboard_page(*, view: View, sort: str = "rank", page: int = 1, page_size: int | None = None) -> LeaderboardPage:
    """One page of a view's agents (plus its baselines, shown on every page)."""
    size = page_size or int(settings.HINDSIGHT_LEADERBOARD_PAGE_SIZE)
    name, descending = _parse_sort(sort)
    if view.materialised:
        return _materialised_page(view=view, name=name, descending=descending, page=page, size=size)
    return _computed_page(view=view, name=name, descending=descending, page=page, size=size)


def _materialised_page(*, view: View, name: str, descending: bool, page: int, size: int) -> LeaderboardPage:
    qs = Standing.objects.filter(view_filter(view))
    # One pass over the view's rows for everything but the page itself: agent count, which metric
    # columns have data, when it was computed and the rank metric (every row of a view shares it).
    summary = qs.aggregate(
        total=Count("id", filter=Q(agent__isnull=False)),
        at=Max("computed_at"),
        rank_metric=Max("rank_metric"),
        **{m: Max(f"{m}_n") for m in METRICS},
    )
    total = int(summary["total"] or 0)
    pages = max(1, math.ceil(total / size))
    page = min(max(1, page), pages)
    if name == "rank":
        order: list[Any] = [F("rank").asc(nulls_last=True), F("brier").asc(nulls_last=True), "agent__name"]
        if descending:
            order = [F("rank").desc(nulls_last=True), "agent__name"]
    else:
        expr = F(name).desc(nulls_last=True) if descending else F(name).asc(nulls_last=True)
        order = [expr, "agent__name"]
    rows = (
        qs.filter(agent__isnull=False)
        .select_related("agent", "agent__team")
        .order_by(*order)[(page - 1) * size : page * size]
    )
    baselines = sorted((_entry_from_standing(s) for s in qs.filter(agent__isnull=True)), key=lambda e: e.baseline)
    return LeaderboardPage(
        view=view,
        entries=[_entry_from_standing(s) for s in rows],
        baselines=baselines,
        columns=[m for m in METRICS if summary.get(m)],
        rank_metric=summary.get("rank_metric") or "",
        total=total,
        page=page,
        pages=pages,
        sort=("-" if descending else "") + name,
        materialised=True,
        computed_at=summary.get("at"),
        params=view_params(view),
    )


def _computed_page(*, view: View, name: str, descending: bool, page: int, size: int) -> LeaderboardPage:
    # Imported here: the services module loads grades; selectors stay free of write paths otherwise.
    from leaderboard.services.standings import load_grade_table, load_question_table, resolution_times

    where = Q()
    if view.track != "all":
        where &= Q(forecast__question__track=view.track)
    if view.question_type:
        where &= Q(forecast__question__type=view.question_type)
    if view.domain:
        where &= Q(forecast__question__domain=view.domain)
    if view.origin:
        where &= Q(forecast__question__origin=view.origin)
    resolved = resolution_times()
    table = load_grade_table(where=where, resolved=resolved)
    questions = load_question_table(resolved=resolved)
    result = compute_views(table, questions, [view], min_n=int(settings.HINDSIGHT_MIN_RANKED_N))[0]
    agents = {
        a.pk: a
        for a in Agent.objects.select_related("team").filter(pk__in=[r.agent_id for r in result.rows if r.agent_id])
    }
    entries: list[Entry] = []
    baselines: list[Entry] = []
    for r in result.rows:
        e = Entry(
            rank=r.rank,
            provisional=r.provisional,
            baseline=r.baseline,
            agent=agents.get(r.agent_id) if r.agent_id else None,
            n=r.n,
            values={m: r.metrics[m].mean for m in METRICS},
            counts={m: r.metrics[m].n for m in METRICS},
            brier_lo=r.brier_lo,
            brier_hi=r.brier_hi,
            brier_index=r.brier_index,
        )
        (baselines if r.baseline else entries).append(e)
    if name != "rank" or descending:

        def key(e: Entry) -> tuple[bool, float, str]:
            value = {"rank": e.rank, "n": e.n, "brier_index": e.brier_index}.get(name, e.values.get(name))
            missing = value is None
            v = float(value or 0.0)
            return (missing, -v if descending else v, e.name)

        entries.sort(key=key)
    total = len(entries)
    pages = max(1, math.ceil(total / size))
    page = min(max(1, page), pages)
    columns = [m for m in METRICS if any(e.counts.get(m) for e in entries + baselines)]
    return LeaderboardPage(
        view=view,
        entries=entries[(page - 1) * size : page * size],
        baselines=sorted(baselines, key=lambda e: e.baseline),
        columns=columns,
        rank_metric=result.rank_metric or "",
        total=total,
        page=page,
        pages=pages,
        sort=("-" if descending else "") + name,
        materialised=False,
        params=view_params(view),
    )


def leaderboard_all(*, view: View, sort: str = "rank") -> LeaderboardPage:
    """Every row of a view (exports)."""
    return leaderboard_page(view=view, sort=sort, page=1, page_size=10**9)


def top_agents(*, track: str, limit: int = 5) -> list[Entry]:
    qs = (
        Standing.objects.filter(view_filter(View(track=track)), agent__isnull=False, rank__isnull=False)
        .select_related("agent", "agent__team")
        .order_by("rank", "agent__name")[:limit]
    )
    return [_entry_from_standing(s) for s in qs]


def agent_standings(*, agent: Agent) -> list[Standing]:
    """The agent's rows in the per-track views (no attribute filter), contamination filter on and off."""
    return list(
        Standing.objects.filter(agent=agent, question_type="", domain="", origin="", horizon="").order_by(
            "-contamination_filter", "track"
        )
    )


def filter_choices() -> dict[str, list[tuple[str, str]]]:
    domains = sorted({d for d in Question.objects.exclude(domain="").values_list("domain", flat=True).distinct() if d})
    return {
        "track": [(t, {"all": "All tracks", "live": "Live", "replay": "Replay"}[t]) for t in TRACKS],
        "type": list(Question.Type.choices),
        "domain": [(d, d) for d in domains],
        "origin": list(Question.Origin.choices),
        "horizon": [(b, HORIZON_LABELS[b]) for b, _ in HORIZON_BUCKETS],
    }


__all__ = [
    "METRIC_LABELS",
    "SORTABLE",
    "Entry",
    "LeaderboardPage",
    "agent_standings",
    "filter_choices",
    "leaderboard_all",
    "leaderboard_cache_key",
    "leaderboard_page",
    "normalise_sort",
    "parse_view",
    "top_agents",
    "view_params",
]
