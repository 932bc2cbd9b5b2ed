"""Small server-rendered SVG charts (pure; every text escaped; each chart carries an aria-label).

Callers pair every chart with a text alternative (a caption and a table of the same numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape

INK = "#1f5fbf"
MUTED = "#8a94a0"
GRID = "#d8dde3"


def interval_bar(
    lo: float | None, point: float | None, hi: float | None, *, scale_max: float = 1.0, width: int = 120
) -> str:
    """A Brier interval as a horizontal bar with a tick at the point estimate (0 .. scale_max)."""
    if point is None or lo is None or hi is None or scale_max <= 0:
        return ""

    def x(v: float) -> float:
        return 4 + max(0.0, min(1.0, v / scale_max)) * (width - 8)

    label = f"Brier {point:.3f}, 95% interval {lo:.3f} to {hi:.3f}"
    return (
        f'<svg class="ibar" width="{width}" height="14" viewBox="0 0 {width} 14" role="img" aria-label="{escape(label)}">'
        f'<line x1="4" y1="7" x2="{width - 4}" y2="7" stroke="{GRID}"/>'
        f'<rect x="{x(lo):.1f}" y="3" width="{max(1.0, x(hi) - x(lo)):.1f}" height="8" fill="{INK}" opacity="0.35"/>'
        f'<line x1="{x(point):.1f}" y1="1" x2="{x(point):.1f}" y2="13" stroke="{INK}" stroke-width="2"/>'
        "</svg>"
    )


@dataclass(frozen=True)
class CalibrationBin:
    lo: float
    hi: float
    count: int
    mean_forecast: float | None
    observed: float | None


def calibration_bins(pairs: Sequence[tuple[float, int]], bins: int = 10) -> list[CalibrationBin]:
    """Reliability-diagram bins of (forecast probability of YES, outcome 0/1) pairs."""
    out: list[CalibrationBin] = []
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        members = [(p, y) for p, y in pairs if (lo <= p < hi) or (b == bins - 1 and p == 1.0)]
        if members:
            mean_p = sum(p for p, _ in members) / len(members)
            observed = sum(y for _, y in members) / len(members)
            out.append(CalibrationBin(lo, hi, len(members), mean_p, observed))
        else:
            out.append(CalibrationBin(lo, hi, 0, None, None))
    return out


def sharpness(pairs: Sequence[tuple[float, int]]) -> float | None:
    """Mean distance of the forecasts from 0.5 (0 = always 0.5, 0.5 = always certain)."""
    if not pairs:
        return None
    return sum(abs(p - 0.5) for p, _ in pairs) / len(pairs)


SERIES_COLOURS = ("#1f5fbf", "#c25e00", "#1e7d34", "#7b3fb5", "#b3261e", "#00838f", "#8a6100", "#d0457a")


@dataclass(frozen=True)
class ReliabilitySeries:
    label: str
    bins: Sequence[CalibrationBin]
    colour: str = INK


def reliability_svg(
    bins: Sequence[CalibrationBin] | None = None,
    *,
    title: str,
    series: Sequence[ReliabilitySeries] = (),
    size: int = 340,
    empty_text: str = "No graded binary forecast yet",
    empty_hint: str = "Dots appear as binary forecasts resolve.",
) -> str:
    """Reliability diagram: forecast probability (x) against observed frequency (y), with ticks at
    every 0.2, the diagonal of perfect calibration, one dot per non-empty bin (area grows with the
    bin's count, the count written beside it) and, under the plot, the forecasts per bin.

    One series (an agent's page) or several (the leaderboard's calibration view, dots joined by
    lines and a legend). With no forecast at all the axes stay and the plot says what will appear.
    """
    if bins is not None:
        series = [ReliabilitySeries(label="", bins=bins), *series]
    left, right, top, plot = 46, 14, 14, size - 60
    strip = 34 if len(series) <= 1 else 0  # the per-bin counts strip of a single series
    height = top + plot + 40 + strip
    width = left + plot + right

    def px(v: float) -> float:
        # A 3% margin inside the axes, so dots at 0 or 1 never sit on an axis line.
        return left + (0.03 + 0.94 * v) * plot

    def py(v: float) -> float:
        return top + plot - (0.03 + 0.94 * v) * plot

    parts = [
        f'<svg class="reliability" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}">',
        f'<rect x="{left}" y="{top}" width="{plot}" height="{plot}" fill="#fff" stroke="{MUTED}"/>',
    ]
    for i in range(6):
        v = i / 5
        parts.append(f'<line x1="{px(v):.1f}" y1="{top}" x2="{px(v):.1f}" y2="{top + plot}" stroke="{GRID}"/>')
        parts.append(f'<line x1="{left}" y1="{py(v):.1f}" x2="{left + plot}" y2="{py(v):.1f}" stroke="{GRID}"/>')
        parts.append(
            f'<line x1="{px(v):.1f}" y1="{top + plot}" x2="{px(v):.1f}" y2="{top + plot + 4}" stroke="{MUTED}"/>'
            f'<text class="tick" x="{px(v):.1f}" y="{top + plot + 15}" font-size="10" text-anchor="middle">{v:.1f}</text>'
        )
        parts.append(
            f'<line x1="{left - 4}" y1="{py(v):.1f}" x2="{left}" y2="{py(v):.1f}" stroke="{MUTED}"/>'
            f'<text class="tick" x="{left - 7}" y="{py(v) + 3:.1f}" font-size="10" text-anchor="end">{v:.1f}</text>'
        )
    parts.append(
        f'<line class="diagonal" x1="{px(0):.1f}" y1="{py(0):.1f}" x2="{px(1):.1f}" y2="{py(1):.1f}" '
        f'stroke="{MUTED}" stroke-dasharray="5 4"><title>perfect calibration</title></line>'
        f'<text x="{left + plot / 2}" y="{top + plot + 31}" font-size="11" text-anchor="middle">'
        "forecast probability of yes</text>"
        f'<text x="12" y="{top + plot / 2}" font-size="11" transform="rotate(-90 12 {top + plot / 2})" '
        'text-anchor="middle">observed frequency of yes</text>'
    )
    total = max((b.count for s in series for b in s.bins), default=0)
    if total == 0:
        parts.append(
            f'<text class="empty" x="{left + plot / 2}" y="{top + plot / 2 - 8}" font-size="13" '
            f'text-anchor="middle" fill="{MUTED}">{escape(empty_text)}</text>'
            f'<text class="empty" x="{left + plot / 2}" y="{top + plot / 2 + 10}" font-size="10" '
            f'text-anchor="middle" fill="{MUTED}">{escape(empty_hint)}</text>'
        )
    for s in series:
        dots = [b for b in s.bins if b.count and b.mean_forecast is not None and b.observed is not None]
        if len(series) > 1 and len(dots) > 1:
            points = " ".join(f"{px(b.mean_forecast or 0):.1f},{py(b.observed or 0):.1f}" for b in dots)
            parts.append(f'<polyline points="{points}" fill="none" stroke="{s.colour}" stroke-width="1.5"/>')
        for b in dots:
            assert b.mean_forecast is not None and b.observed is not None
            r = 3 + 5 * (b.count / total) ** 0.5
            who = f"{s.label}: " if s.label else ""
            parts.append(
                f'<circle class="bin" cx="{px(b.mean_forecast):.1f}" cy="{py(b.observed):.1f}" r="{r:.1f}" '
                f'fill="{s.colour}" fill-opacity="0.75" stroke="#fff">'
                f"<title>{escape(who)}{b.lo:.1f}-{b.hi:.1f}: {b.count} forecasts, mean {b.mean_forecast:.2f}, "
                f"observed {b.observed:.2f}</title></circle>"
            )
            if len(series) == 1:
                parts.append(
                    f'<text class="count" x="{px(b.mean_forecast) + r + 2:.1f}" y="{py(b.observed) - r:.1f}" '
                    f'font-size="9" fill="{MUTED}">{b.count}</text>'
                )
    if strip and series:
        base = top + plot + 40 + strip - 4
        parts.append(f'<text x="{left - 7}" y="{base - 8}" font-size="9" text-anchor="end" fill="{MUTED}">n</text>')
        for b in series[0].bins:
            x0, x1 = px(b.lo), px(b.hi)
            h = 0 if total == 0 else (strip - 14) * b.count / total
            parts.append(
                f'<rect class="bin-count" x="{x0 + 1:.1f}" y="{base - h:.1f}" width="{x1 - x0 - 2:.1f}" '
                f'height="{h:.1f}" fill="{INK}" opacity="0.3"><title>{b.lo:.1f}-{b.hi:.1f}: {b.count}</title></rect>'
            )
    parts.append("</svg>")
    return "".join(parts)


def line_svg(
    series: Sequence[tuple[datetime, float]],
    *,
    title: str,
    y_min: float = 0.0,
    y_max: float = 1.0,
    width: int = 520,
    height: int = 160,
) -> str:
    """A time series as a polyline (market prices, scores per month)."""
    pad = 28
    if not series:
        return ""
    t0 = series[0][0].timestamp()
    t1 = series[-1][0].timestamp()
    span = (t1 - t0) or 1.0
    rng = (y_max - y_min) or 1.0

    def px(t: datetime) -> float:
        return pad + (t.timestamp() - t0) / span * (width - 2 * pad)

    def py(v: float) -> float:
        return height - pad - (max(y_min, min(y_max, v)) - y_min) / rng * (height - 2 * pad)

    points = " ".join(f"{px(t):.1f},{py(v):.1f}" for t, v in series)
    return (
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
        f'<rect x="{pad}" y="{pad}" width="{width - 2 * pad}" height="{height - 2 * pad}" fill="none" stroke="{GRID}"/>'
        f'<text x="4" y="{pad + 4}" font-size="10">{y_max:g}</text><text x="4" y="{height - pad}" font-size="10">{y_min:g}</text>'
        f'<text x="{pad}" y="{height - 8}" font-size="10">{escape(series[0][0].date().isoformat())}</text>'
        f'<text x="{width - pad}" y="{height - 8}" font-size="10" text-anchor="end">{escape(series[-1][0].date().isoformat())}</text>'
        f'<polyline points="{points}" fill="none" stroke="{INK}" stroke-width="1.5"/>'
        "</svg>"
    )


def lines_svg(
    series: Sequence[tuple[str, Sequence[tuple[datetime, float]]]],
    *,
    title: str,
    width: int = 520,
    height: int = 160,
) -> str:
    """Several labelled probability series on one time axis (a multiple-choice market: one line per
    option), each in its own colour, with a legend under the plot naming every line."""
    drawn = [(label, points) for label, points in series if points][: len(SERIES_COLOURS)]
    if not drawn:
        return ""
    pad = 28
    legend_rows = -(-len(drawn) // 3)
    total = height + 16 * legend_rows
    t0 = min(points[0][0] for _, points in drawn).timestamp()
    t1 = max(points[-1][0] for _, points in drawn).timestamp()
    span = (t1 - t0) or 1.0

    def px(t: datetime) -> float:
        return pad + (t.timestamp() - t0) / span * (width - 2 * pad)

    def py(v: float) -> float:
        return height - pad - max(0.0, min(1.0, v)) * (height - 2 * pad)

    first = datetime.fromtimestamp(t0, UTC).date().isoformat()
    last = datetime.fromtimestamp(t1, UTC).date().isoformat()
    parts = [
        f'<svg width="{width}" height="{total}" viewBox="0 0 {width} {total}" role="img" aria-label="{escape(title)}">',
        f'<rect x="{pad}" y="{pad}" width="{width - 2 * pad}" height="{height - 2 * pad}" fill="none" stroke="{GRID}"/>',
        f'<text x="4" y="{pad + 4}" font-size="10">1</text><text x="4" y="{height - pad}" font-size="10">0</text>',
        f'<text x="{pad}" y="{height - 8}" font-size="10">{escape(first)}</text>',
        f'<text x="{width - pad}" y="{height - 8}" font-size="10" text-anchor="end">{escape(last)}</text>',
    ]
    column = (width - 2 * pad) / 3
    for i, ((label, points), colour) in enumerate(zip(drawn, SERIES_COLOURS, strict=False)):
        line = " ".join(f"{px(t):.1f},{py(v):.1f}" for t, v in points)
        parts.append(
            f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="1.5"><title>{escape(label)}</title></polyline>'
        )
        x = pad + (i % 3) * column
        y = height + 12 + 16 * (i // 3)
        parts.append(
            f'<rect x="{x:.1f}" y="{y - 8}" width="12" height="3" fill="{colour}"/>'
            f'<text x="{x + 16:.1f}" y="{y - 4}" font-size="11">{escape(label[:28])}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def histogram_svg(
    counts: Sequence[int], *, title: str, labels: Sequence[str], width: int = 520, height: int = 140
) -> str:
    """Bars of counts (distribution of agents' forecasts)."""
    if not counts:
        return ""
    pad = 20
    top = max(counts) or 1
    bw = (width - 2 * pad) / len(counts)
    parts = [
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
    ]
    for i, c in enumerate(counts):
        h = (height - 2 * pad) * c / top
        x = pad + i * bw
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{height - pad - h:.1f}" width="{bw - 2:.1f}" height="{h:.1f}" fill="{INK}" opacity="0.6">'
            f"<title>{escape(labels[i])}: {c}</title></rect>"
        )
    parts.append(f'<text x="{pad}" y="{height - 4}" font-size="10">{escape(labels[0])}</text>')
    parts.append(
        f'<text x="{width - pad}" y="{height - 4}" font-size="10" text-anchor="end">{escape(labels[-1])}</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


def calibration_error(bins: Sequence[CalibrationBin]) -> float | None:
    """Expected calibration error: the count-weighted mean of |mean forecast - observed| over bins."""
    total = sum(b.count for b in bins)
    if total == 0:
        return None
    return sum(b.count * abs((b.mean_forecast or 0.0) - (b.observed or 0.0)) for b in bins if b.count) / total
