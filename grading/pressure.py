"""Cumulative causal pressure charts of WorldReasoner, Appendix D (pure; no Django).

P_k = sum_{i<=k} d_i m_i c_i over the graph's dated events in date order, where d_i is +1 for a
Positive impact (toward a "Yes" / the resolved outcome), -1 for Negative and 0 for Neutral and
Mixed (Appendix D's d_i in {+1, 0, -1}: a Mixed impact pushes both ways, so it carries no net sign),
m_i the impact magnitude and c_i its confidence. Only events with an outcome impact that a reviewer
has not rejected take part. The chart is a server-rendered SVG: a step curve of P_k, a dot per
event coloured by sign, and the market price (0-1, right axis) where the question has a market.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from html import escape

DIRECTION_SIGN = {"Positive": 1, "Negative": -1, "Neutral": 0, "Mixed": 0}
COLOURS = {1: "#1e7d34", -1: "#b3261e", 0: "#6b7480"}


@dataclass(frozen=True)
class PressureInput:
    key: str
    title: str
    day: date
    direction: str
    magnitude: float
    confidence: float


@dataclass(frozen=True)
class PressurePoint:
    key: str
    title: str
    day: date
    sign: int
    contribution: float
    cumulative: float


def pressure_points(events: list[PressureInput]) -> list[PressurePoint]:
    points: list[PressurePoint] = []
    total = 0.0
    for event in sorted(events, key=lambda e: (e.day, e.key)):
        sign = DIRECTION_SIGN.get(event.direction, 0)
        contribution = sign * event.magnitude * event.confidence
        total += contribution
        points.append(
            PressurePoint(
                key=event.key,
                title=event.title,
                day=event.day,
                sign=sign,
                contribution=round(contribution, 4),
                cumulative=round(total, 4),
            )
        )
    return points


def _ts(day: date | datetime) -> float:
    if isinstance(day, datetime):
        return day.timestamp()
    return datetime.combine(day, time(12), tzinfo=UTC).timestamp()


def render_svg(
    points: list[PressurePoint],
    prices: list[tuple[datetime, float]],
    *,
    start: date,
    end: date,
    width: int = 760,
    height: int = 320,
    title: str = "Cumulative causal pressure",
    describedby: str = "",
) -> str:
    """A self-contained SVG element (text escaped) for the chart."""
    left, right, top, bottom = 56, 56 if prices else 20, 20, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    t_min = min([_ts(start)] + [_ts(p.day) for p in points] + [_ts(t) for t, _ in prices])
    t_max = max([_ts(end)] + [_ts(p.day) for p in points] + [_ts(t) for t, _ in prices])
    span = (t_max - t_min) or 1.0
    extent = max([0.5] + [abs(p.cumulative) for p in points])

    def x(t: float) -> float:
        return round(left + (t - t_min) / span * plot_w, 1)

    def y(v: float) -> float:
        return round(top + (extent - v) / (2 * extent) * plot_h, 1)

    def y_price(p: float) -> float:
        return round(top + (1 - p) * plot_h, 1)

    aria = f' aria-describedby="{escape(describedby)}"' if describedby else ""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="pressure-chart" role="img" viewBox="0 0 {width} {height}" '
        f'width="100%" preserveAspectRatio="xMidYMid meet"{aria}>',
        f"<title>{escape(title)}</title>",
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fff" stroke="#d8dde3"/>',
        f'<line class="zero" x1="{left}" y1="{y(0)}" x2="{left + plot_w}" y2="{y(0)}" stroke="#9aa4ae" '
        'stroke-dasharray="4 3"/>',
    ]
    for value in (extent, 0.0, -extent):
        parts.append(
            f'<text x="{left - 6}" y="{y(value) + 4}" text-anchor="end" font-size="11" fill="#5b6470">'
            f"{value:+.2f}</text>"
        )
    parts.append(
        f'<text x="14" y="{top + plot_h / 2}" font-size="11" fill="#5b6470" '
        f'transform="rotate(-90 14 {top + plot_h / 2})" text-anchor="middle">pressure P_k</text>'
    )
    parts.append(
        f'<text x="{left}" y="{height - 14}" font-size="11" fill="#5b6470">'
        f"{escape(datetime.fromtimestamp(t_min, UTC).date().isoformat())}</text>"
    )
    parts.append(
        f'<text x="{left + plot_w}" y="{height - 14}" font-size="11" fill="#5b6470" text-anchor="end">'
        f"{escape(datetime.fromtimestamp(t_max, UTC).date().isoformat())}</text>"
    )
    if prices:
        coords = " ".join(f"{x(_ts(t))},{y_price(p)}" for t, p in sorted(prices))
        parts.append(
            f'<polyline class="price-line" points="{coords}" fill="none" stroke="#1f5fbf" stroke-width="1.5"/>'
        )
        for value in (1.0, 0.5, 0.0):
            parts.append(
                f'<text x="{left + plot_w + 6}" y="{y_price(value) + 4}" font-size="11" fill="#1f5fbf">'
                f"{value:.1f}</text>"
            )
        parts.append(
            f'<text x="{width - 8}" y="{top + plot_h / 2}" font-size="11" fill="#1f5fbf" '
            f'transform="rotate(90 {width - 8} {top + plot_h / 2})" text-anchor="middle">market price</text>'
        )
    path = [f"M{x(t_min)},{y(0)}"]
    for point in points:
        path.append(f"H{x(_ts(point.day))}V{y(point.cumulative)}")
    path.append(f"H{x(t_max)}")
    parts.append(f'<path class="pressure-step" d="{"".join(path)}" fill="none" stroke="#12263f" stroke-width="2"/>')
    for point in points:
        parts.append(
            f'<circle class="event-dot" cx="{x(_ts(point.day))}" cy="{y(point.cumulative)}" r="4.5" '
            f'fill="{COLOURS[point.sign]}"><title>{escape(point.day.isoformat())}: {escape(point.title)} '
            f"({point.contribution:+.3f})</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)
