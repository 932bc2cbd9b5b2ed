"""Small server-rendered SVG charts (pure; every text escaped; each chart carries an aria-label).

Callers pair every chart with a text alternative (a caption and a table of the same numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
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


def reliability_svg(bins: Sequence[CalibrationBin], *, title: str, size: int = 260) -> str:
    pad = 30
    inner = size - 2 * pad

    def px(v: float) -> float:
        return pad + v * inner

    def py(v: float) -> float:
        return size - pad - v * inner

    parts = [
        f'<svg width="{size}" height="{size}" viewBox="0 0 {size} {size}" role="img" aria-label="{escape(title)}">',
        f'<rect x="{pad}" y="{pad}" width="{inner}" height="{inner}" fill="none" stroke="{GRID}"/>',
        f'<line x1="{px(0)}" y1="{py(0)}" x2="{px(1)}" y2="{py(1)}" stroke="{MUTED}" stroke-dasharray="4 3"/>',
        f'<text x="{size / 2}" y="{size - 6}" text-anchor="middle" font-size="11">forecast probability</text>',
        f'<text x="10" y="{size / 2}" font-size="11" transform="rotate(-90 10 {size / 2})" text-anchor="middle">observed frequency</text>',
    ]
    total = max((b.count for b in bins), default=0) or 1
    for b in bins:
        if b.count and b.mean_forecast is not None and b.observed is not None:
            r = 3 + 6 * (b.count / total)
            parts.append(
                f'<circle cx="{px(b.mean_forecast):.1f}" cy="{py(b.observed):.1f}" r="{r:.1f}" fill="{INK}" opacity="0.7">'
                f"<title>{b.lo:.1f}-{b.hi:.1f}: {b.count} forecasts, observed {b.observed:.2f}</title></circle>"
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
