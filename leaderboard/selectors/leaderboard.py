"""Reads for the leaderboard: page through a view's standings, with the baselines in their place.

Materialised views (one attribute filter at most, no date window) read Standing rows; any other
view (two or more filters, or a resolution-date window) is computed on request from the same
eligible grades with the same maths, using the difficulties the last rebuild published.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import Count, F, Max, Q

from leaderboard.models import Agent, Standing
from leaderboard.selectors.difficulty import stats_from_stored
from leaderboard.selectors.forecast_timelines import attach_time_averages
from leaderboard.selectors.grade_tables import load_grade_table, resolution_times
from leaderboard.selectors.question_tables import load_question_table
from leaderboard.selectors.standings import Entry, baseline_agent_ids, parse_sort, view_filter, view_params
from leaderboard.stats.columns import StandingRow, compute_views
from leaderboard.stats.difficulty import attach_relative_scores
from leaderboard.stats.metrics import LOWER_IS_BETTER, METRICS, STANDINGS_VERSION
from leaderboard.stats.ranking import places
from leaderboard.stats.views import View


@dataclass
class LeaderboardPage:
    view: View
    # Agents of the page in order, with the platform's baselines where they stand among them.
    entries: list[Entry]
    columns: list[str]
    rank_metric: str
    total: int
    page: int
    pages: int
    sort: str
    materialised: bool
    computed_at: datetime | None = None
    params: dict[str, str] = field(default_factory=dict)
    standings_version: str = STANDINGS_VERSION
    # What the whole view holds (every page): the text above the table is derived from these, so it
    # says what the rows show. ``total`` counts the competing agents, ranked or provisional.
    ranked: int = 0
    provisional: int = 0
    baseline_rows: int = 0

    @property
    def agents(self) -> list[Entry]:
        return [e for e in self.entries if not e.is_baseline]

    @property
    def baselines(self) -> list[Entry]:
        return [e for e in self.entries if e.is_baseline]

    @property
    def all_provisional(self) -> bool:
        """Agents compete in the view but none has enough questions to be ranked."""
        return self.total > 0 and self.ranked == 0

    @property
    def outdated(self) -> bool:
        """Rows computed under an earlier version of the standings' definitions (a rebuild is due)."""
        return self.standings_version != STANDINGS_VERSION


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
        rank_metric=s.rank_metric,
        standings_version=s.standings_version,
    )


def _entry_from_row(r: StandingRow, *, agent: Agent | None, rank_metric: str) -> Entry:
    return Entry(
        rank=r.rank,
        provisional=r.provisional,
        baseline=r.baseline,
        agent=agent,
        n=r.n,
        values={m: r.metrics[m].mean for m in METRICS},
        counts={m: r.metrics[m].n for m in METRICS},
        brier_lo=r.brier_lo,
        brier_hi=r.brier_hi,
        brier_index=r.brier_index,
        rank_metric=rank_metric,
    )


def _sort_value(e: Entry, name: str) -> float | None:
    value = {"rank": e.rank, "n": e.n, "brier_index": e.brier_index}.get(name, e.values.get(name))
    return None if value is None else float(value)


def _key(rank: int | None, value: float | None, *, name: str, descending: bool) -> tuple[float, ...]:
    """Where a row sorts: by rank (ranked first) or by a column (missing values last)."""
    if name == "rank":
        return (0.0, float(rank)) if rank is not None else (1.0, 0.0)
    if value is None:
        return (1.0, 0.0)
    return (0.0, -value if descending else value)


def _baseline_keys(
    baselines: Sequence[Entry], ranked_values: Sequence[float], *, rank_metric: str, name: str, descending: bool
) -> list[tuple[float, ...]]:
    """Each baseline's sort key among the agents: on the rank sort, just ahead of the agents it
    would tie with (its place among the ranked agents), baselines of one place in the order of their
    score; otherwise by its own value."""
    if name != "rank":
        return [_key(None, _sort_value(b, name), name=name, descending=descending) for b in baselines]
    values = np.asarray([math.nan if b.values.get(rank_metric) is None else b.values[rank_metric] for b in baselines])
    spots = places(np.asarray(ranked_values, dtype=np.float64), values, rank_metric=rank_metric or None)
    sign = 1.0 if rank_metric in LOWER_IS_BETTER else -1.0
    for b, spot in zip(baselines, spots.tolist(), strict=True):
        b.place = spot or None
    return [
        (0.0, spot - 0.5, sign * float(v)) if spot else (2.0, 0.0)
        for spot, v in zip(spots.tolist(), values.tolist(), strict=True)
    ]


def _interleave(
    agents: list[Entry],
    start: int,
    *,
    agent_keys: Sequence[tuple[float, ...]],
    baselines: Sequence[Entry],
    baseline_keys: Sequence[tuple[float, ...]],
    last_page: bool,
) -> list[Entry]:
    """The page's agents (positions ``start`` on in the whole ordering given by the sorted
    ``agent_keys``) with each baseline inserted where its key falls; baselines falling beyond the
    last agent go at the end of the last page."""
    placed: list[tuple[int, tuple[float, ...], int, Entry]] = []
    for order, (b, key) in enumerate(zip(baselines, baseline_keys, strict=True)):
        position = bisect_left(list(agent_keys), key)
        if start <= position < start + len(agents) or (last_page and position >= start + len(agents)):
            placed.append((position - start, key, order, b))
    out = list(agents)
    for offset, (at, _, _, b) in enumerate(sorted(placed, key=lambda p: p[:3])):
        out.insert(min(at + offset, len(out)), b)
    return out


def leaderboard_page(*, view: View, sort: str = "rank", page: int = 1, page_size: int | None = None) -> LeaderboardPage:
    """One page of a view's agents, with the platform's baselines where they stand among them."""
    size = page_size or int(settings.HINDSIGHT_LEADERBOARD_PAGE_SIZE)
    name, descending = parse_sort(sort)
    if view.materialised:
        return _materialised_page(view=view, name=name, descending=descending, page=page, size=size)
    return _computed_page(view=view, name=name, descending=descending, page=page, size=size)


# The platform's reference rows: those it computes and those of its baseline agents.
_REFERENCE = Q(agent__isnull=True) | Q(agent__is_baseline=True)


def _baseline_order(e: Entry) -> tuple[str, str]:
    return (e.baseline, e.name)


def _materialised_page(*, view: View, name: str, descending: bool, page: int, size: int) -> LeaderboardPage:
    qs = Standing.objects.filter(view_filter(view))
    # One pass over the view's rows for everything but the page itself: agent counts, which metric
    # columns have data, when it was computed, the rank metric and the version (shared by every row).
    competing = Q(agent__isnull=False, agent__is_baseline=False)
    summary = qs.aggregate(
        total=Count("id", filter=competing),
        ranked=Count("id", filter=competing & Q(rank__isnull=False)),
        provisional=Count("id", filter=competing & Q(provisional=True)),
        reference=Count("id", filter=_REFERENCE),
        at=Max("computed_at"),
        rank_metric=Max("rank_metric"),
        version=Max("standings_version"),
        **{m: Max(f"{m}_n") for m in METRICS},
    )
    rank_metric = summary.get("rank_metric") or ""
    total = int(summary["total"] or 0)
    pages = max(1, math.ceil(total / size))
    page = min(max(1, page), pages)
    metric_field = rank_metric or "brier"
    if name == "rank":
        value = F(metric_field).asc(nulls_last=True)
        if rank_metric and rank_metric not in LOWER_IS_BETTER:
            value = F(metric_field).desc(nulls_last=True)
        order: list[Any] = [F("rank").asc(nulls_last=True), value, "agent__name"]
        if descending:
            order = [F("rank").desc(nulls_last=True), "agent__name"]
    else:
        expr = F(name).desc(nulls_last=True) if descending else F(name).asc(nulls_last=True)
        order = [expr, "agent__name"]
    agent_rows = qs.filter(competing)
    start = (page - 1) * size
    rows = [
        _entry_from_standing(s)
        for s in agent_rows.select_related("agent", "agent__team").order_by(*order)[start : start + size]
    ]
    baselines = sorted(
        (_entry_from_standing(s) for s in qs.filter(_REFERENCE).select_related("agent", "agent__team")),
        key=_baseline_order,
    )
    if baselines and not (name == "rank" and descending):
        pairs = list(agent_rows.values_list("rank", metric_field if name == "rank" else name))
        agent_keys = sorted(_key(r, v, name=name, descending=descending) for r, v in pairs)
        ranked = [v for r, v in pairs if r is not None and v is not None]
        keys = _baseline_keys(baselines, ranked, rank_metric=rank_metric, name=name, descending=descending)
        entries = _interleave(
            rows, start, agent_keys=agent_keys, baselines=baselines, baseline_keys=keys, last_page=page == pages
        )
    else:
        entries = rows + (baselines if page == pages else [])
    return LeaderboardPage(
        view=view,
        entries=entries,
        columns=[m for m in METRICS if summary.get(m)],
        rank_metric=rank_metric,
        total=total,
        page=page,
        pages=pages,
        sort=("-" if descending else "") + name,
        materialised=True,
        computed_at=summary.get("at"),
        params=view_params(view),
        standings_version=summary.get("version") or STANDINGS_VERSION,
        ranked=int(summary["ranked"] or 0),
        provisional=int(summary["provisional"] or 0),
        baseline_rows=int(summary["reference"] or 0),
    )


def _computed_page(*, view: View, name: str, descending: bool, page: int, size: int) -> LeaderboardPage:
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
    # Every agent's grades on the view's questions are in the table: peer totals are exact, and the
    # difficulties are those the last rebuild published.
    stats = stats_from_stored(table)
    attach_time_averages(table, resolved)
    attach_relative_scores(table, stats)
    questions = load_question_table(resolved=resolved, table=table)
    result = compute_views(
        table,
        questions,
        [view],
        min_n=int(settings.HINDSIGHT_MIN_RANKED_N),
        stats=stats,
        baseline_agents=baseline_agent_ids(),
    )[0]
    rank_metric = result.rank_metric or ""
    agents = {
        a.pk: a
        for a in Agent.objects.select_related("team").filter(pk__in=[r.agent_id for r in result.rows if r.agent_id])
    }
    entries: list[Entry] = []
    baselines: list[Entry] = []
    for r in result.rows:
        e = _entry_from_row(r, agent=agents.get(r.agent_id) if r.agent_id else None, rank_metric=rank_metric)
        (baselines if e.is_baseline else entries).append(e)
    if name != "rank" or descending:
        entries.sort(key=lambda e: (*_key(e.rank, _sort_value(e, name), name=name, descending=descending), e.name))
    total = len(entries)
    pages = max(1, math.ceil(total / size))
    page = min(max(1, page), pages)
    start = (page - 1) * size
    baselines.sort(key=_baseline_order)
    if name == "rank" and descending:
        shown = entries[start : start + size] + (baselines if page == pages else [])
    else:
        agent_keys = sorted(_key(e.rank, _sort_value(e, name), name=name, descending=descending) for e in entries)
        ranked = [v for e in entries if e.rank is not None and (v := e.values.get(rank_metric)) is not None]
        keys = _baseline_keys(baselines, ranked, rank_metric=rank_metric, name=name, descending=descending)
        shown = _interleave(
            entries[start : start + size],
            start,
            agent_keys=agent_keys,
            baselines=baselines,
            baseline_keys=keys,
            last_page=page == pages,
        )
    columns = [m for m in METRICS if any(e.counts.get(m) for e in entries + baselines)]
    return LeaderboardPage(
        view=view,
        entries=shown,
        columns=columns,
        rank_metric=rank_metric,
        total=total,
        page=page,
        pages=pages,
        sort=("-" if descending else "") + name,
        materialised=False,
        params=view_params(view),
        ranked=sum(1 for e in entries if e.rank is not None),
        provisional=sum(1 for e in entries if e.provisional),
        baseline_rows=len(baselines),
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


__all__ = [
    "LeaderboardPage",
    "agent_standings",
    "leaderboard_all",
    "leaderboard_page",
    "top_agents",
]
