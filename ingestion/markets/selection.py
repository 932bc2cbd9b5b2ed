"""Which markets of a source become questions: the source options of a market poll's store
(each platform's client reads its own options as well)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any

from ingestion.markets import MarketFormatError, MarketRecord, option_bool, option_float, option_int


@dataclass(frozen=True)
class Selection:
    """Which markets of a source become questions (source options of the same names)."""

    open_questions: bool = False
    min_liquidity: float | None = None
    min_volume: float | None = None
    min_bettors: float | None = None
    horizon_days: int = 90
    price_history: bool = True
    track_days: int = 30

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Selection:
        if not isinstance(options, Mapping):
            raise MarketFormatError("source options must be a JSON object")
        return cls(
            open_questions=option_bool(options, "open_questions", False),
            min_liquidity=option_float(options, "min_liquidity"),
            min_volume=option_float(options, "min_volume"),
            min_bettors=option_float(options, "min_bettors"),
            horizon_days=option_int(options, "horizon_days", 90),
            price_history=option_bool(options, "price_history", True),
            track_days=option_int(options, "track_days", 30, minimum=0),
        )

    def accepts(self, record: MarketRecord, *, now: datetime, check_outcomes: bool = True) -> bool:
        """A binary or multiple-choice market, still open, closing within the horizon and past
        every threshold the platform reports (a figure the platform does not publish, such as
        Polymarket's bettor count, does not exclude a market)."""
        if record.question_type not in ("binary", "multiple_choice") or record.state.kind != "open":
            return False
        if check_outcomes and len(record.outcomes) < 2:
            return False
        if record.close_at is None or not now < record.close_at <= now + timedelta(days=self.horizon_days):
            return False
        for threshold, value in (
            (self.min_liquidity, record.liquidity),
            (self.min_volume, record.volume),
            (self.min_bettors, record.bettors),
        ):
            if threshold is not None and value is not None and value < threshold:
                return False
        return True


# The source options a selection reads.
SELECTION_OPTIONS = frozenset(f.name for f in fields(Selection))
