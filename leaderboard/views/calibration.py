"""The leaderboard's calibration view: the top agents' reliability curves in one chart."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe

from leaderboard import charts
from leaderboard.selectors.calibration import binary_pairs
from leaderboard.selectors.leaderboard import top_agents
from leaderboard.selectors.standings import filter_choices

MAX_AGENTS = len(charts.SERIES_COLOURS)


def calibration(request: HttpRequest) -> HttpResponse:
    tracks = dict(filter_choices()["track"])
    track = request.GET.get("track", "all")
    if track not in tracks:
        track = "all"
    try:
        limit = max(1, min(MAX_AGENTS, int(request.GET.get("top", "5"))))
    except ValueError:
        limit = 5
    entries = top_agents(track=track, limit=limit)
    pairs = binary_pairs(agent_ids=[e.agent.pk for e in entries if e.agent is not None], track=track)
    series = []
    rows = []
    for entry, colour in zip(entries, charts.SERIES_COLOURS, strict=False):
        agent = entry.agent
        if agent is None:
            continue
        agent_pairs = pairs.get(agent.pk, [])
        bins = charts.calibration_bins(agent_pairs)
        series.append(charts.ReliabilitySeries(label=agent.name, bins=bins, colour=colour))
        rows.append(
            {
                "entry": entry,
                "colour": colour,
                "n": len(agent_pairs),
                "ece": charts.calibration_error(bins),
                "sharpness": charts.sharpness(agent_pairs),
                "bins": bins,
            }
        )
    svg = charts.reliability_svg(
        title=f"Reliability curves of the top {len(series)} ranked agents ({tracks[track]})",
        series=series,
        size=420,
        empty_text="No ranked agent with graded binary forecasts yet",
        empty_hint="A curve appears once a ranked agent's binary forecasts resolve.",
    )
    return render(
        request,
        "leaderboard/calibration.html",
        {
            "svg": mark_safe(svg),  # built by leaderboard.charts, every text escaped
            "rows": rows,
            "track": track,
            "tracks": tracks.items(),
            "limit": limit,
            "drawn": len(series),
            "bin_labels": [f"{b / 10:.1f}-{(b + 1) / 10:.1f}" for b in range(10)],
        },
    )
