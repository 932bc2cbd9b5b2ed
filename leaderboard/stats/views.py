"""Leaderboard views: a track, at most a few attribute filters, the contamination filter and a date window.

A *view* (:class:`View`) is a track (live/replay/all), optional question type, domain, origin and
horizon bucket, the contamination filter (on by default) and an optional resolution-date window.
Views with at most one attribute filter and no window are *materialised* (kept as Standing rows);
the others are computed on request with the same maths.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final

import numpy as np
import numpy.typing as npt

TRACKS: Final[tuple[str, ...]] = ("all", "live", "replay")
ALL: Final = ""
# Horizon buckets on the question's horizon in days: (name, inclusive upper bound).
HORIZON_BUCKETS: Final[tuple[tuple[str, int | None], ...]] = (
    ("week", 7),
    ("month", 31),
    ("quarter", 92),
    ("long", None),
)
HORIZON_LABELS: Final[dict[str, str]] = {
    "week": "up to 7 days",
    "month": "8 to 31 days",
    "quarter": "32 to 92 days",
    "long": "more than 92 days",
}


def horizon_bucket(days: int | None) -> str:
    """The horizon bucket name of a question horizon in days."""
    d = 0 if days is None else int(days)
    for name, upper in HORIZON_BUCKETS:
        if upper is None or d <= upper:
            return name
    raise AssertionError("unreachable: the last bucket is open-ended")


def horizon_buckets(days: Any) -> npt.NDArray[np.int32]:
    """Bucket index (into HORIZON_BUCKETS) of each horizon in days (a missing horizon counts as 0)."""
    bounds = np.array([upper for _, upper in HORIZON_BUCKETS if upper is not None], dtype=np.float64)
    values = days if isinstance(days, np.ndarray) else list(days)
    d = np.nan_to_num(np.asarray(values, dtype=np.float64), nan=0.0)
    return np.searchsorted(bounds, d, side="left").astype(np.int32)


@dataclass(frozen=True, slots=True)
class View:
    """A leaderboard view; ``""`` means no filter on that dimension."""

    track: str = "all"
    question_type: str = ALL
    domain: str = ALL
    origin: str = ALL
    horizon: str = ALL
    contamination_filter: bool = True
    resolved_from: float | None = None  # epoch seconds, inclusive
    resolved_to: float | None = None  # epoch seconds, exclusive

    def __post_init__(self) -> None:
        if self.track not in TRACKS:
            raise ValueError(f"track must be one of {TRACKS}, got {self.track!r}")
        if self.horizon and self.horizon not in dict(HORIZON_BUCKETS):
            raise ValueError(f"horizon must be one of {[b for b, _ in HORIZON_BUCKETS]}, got {self.horizon!r}")

    @property
    def dimensions(self) -> int:
        return sum(1 for v in (self.question_type, self.domain, self.origin, self.horizon) if v)

    @property
    def has_window(self) -> bool:
        return self.resolved_from is not None or self.resolved_to is not None

    @property
    def materialised(self) -> bool:
        """Views kept as Standing rows: at most one attribute filter and no date window."""
        return self.dimensions <= 1 and not self.has_window

    def key(self) -> tuple[str, str, str, str, str, bool]:
        return (self.track, self.question_type, self.domain, self.origin, self.horizon, self.contamination_filter)


def views_touching(*, track: str, qtype: str, domain: str, origin: str, horizon_days: int | None) -> list[View]:
    """The materialised views a question with these attributes belongs to."""
    bucket = horizon_bucket(horizon_days)
    out: list[View] = []
    for contamination in (True, False):
        for t in ("all", track):
            base = View(track=t, contamination_filter=contamination)
            out.append(base)
            out.append(replace(base, question_type=qtype))
            if domain:
                out.append(replace(base, domain=domain))
            if origin:
                out.append(replace(base, origin=origin))
            out.append(replace(base, horizon=bucket))
    return out
