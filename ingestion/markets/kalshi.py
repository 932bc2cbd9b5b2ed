"""Kalshi: markets from the trade API v2.

Format (Kalshi API reference, "Get Markets" / "Get Market", docs.kalshi.com):

* ``GET {base}/trade-api/v2/markets?limit=N&cursor=C&status=open`` ->
  ``{"markets": [...], "cursor": "..."}``; an empty cursor ends the listing.
  (``status`` filters on ``unopened``, ``open``, ``closed`` or ``settled``.)
* ``GET {base}/trade-api/v2/markets/{ticker}`` -> ``{"market": {...}}``.
* A market has ``ticker``, ``event_ticker``, ``title``, ``status`` (lifecycle ``initialized`` ->
  ``active`` -> ``closed`` -> ``determined`` -> (``disputed`` -> ``amended``) -> ``settled``;
  newer documents also say ``unopened``, ``open``, ``paused`` and ``finalized``), ``open_time``,
  ``close_time``, ``expiration_time`` (ISO 8601) and ``result`` (``yes``/``no``, empty while
  undetermined; settlements also know ``scalar`` and ``void``).
* Prices and sizes: older documents send prices in cents (``yes_bid``, ``yes_ask``,
  ``last_price``), ``volume`` as a whole number of contracts and ``liquidity`` in cents; current
  ones send fixed-point strings: prices in dollars (``yes_bid_dollars``, ``last_price_dollars``,
  ..., e.g. ``"0.5600"``), contract counts with two decimals (``volume_fp``, ``"10.00"``) and
  ``liquidity_dollars``, the integer fields retired. Both are read; the string wins when a
  market sends both.

A market Hindsight cannot read (a missing or mistyped field, an unknown ``status`` or
``result``) is skipped with a message naming it and the field; the rest of the poll goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

from ingestion.markets import (
    NO,
    YES,
    Fields,
    JsonGetter,
    Listing,
    MarketFormatError,
    MarketRecord,
    MarketState,
    PriceRecord,
    option_choice,
    option_int,
)

PLATFORM = "kalshi"
API_PREFIX = "/trade-api/v2"

OPEN_STATUSES = frozenset({"initialized", "unopened", "inactive", "active", "open", "paused", "closed"})
PROVISIONAL_STATUSES = frozenset({"determined", "amended"})
FINAL_STATUSES = frozenset({"settled", "finalized"})
HELD_STATUSES = frozenset({"disputed"})


def _price(f: Fields, name: str) -> float | None:
    """A price as 0..1: the ``*_dollars`` fixed-point string, else the older field in cents."""
    dollars = f.number(f"{name}_dollars", allow_string=True)
    if dollars is not None:
        if not 0 <= dollars <= 1:
            raise f.error(f"{name}_dollars", f"should be a price between 0 and 1, got {dollars!r}")
        return dollars
    cents = f.number(name)
    if cents is None:
        return None
    if not 0 <= cents <= 100:
        raise f.error(name, f"should be a price in cents between 0 and 100, got {cents!r}")
    return cents / 100.0


def _count(f: Fields, name: str) -> float | None:
    """A number of contracts: the ``*_fp`` fixed-point string, else the older whole number."""
    count = f.number(f"{name}_fp", allow_string=True)
    return count if count is not None else f.number(name)


def _dollars(f: Fields, name: str) -> float | None:
    """An amount in dollars: the ``*_dollars`` string, else the older field in cents."""
    dollars = f.number(f"{name}_dollars", allow_string=True)
    if dollars is not None:
        return dollars
    cents = f.number(name)
    return cents / 100.0 if cents is not None else None


def parse_market(payload: Any, *, now: datetime) -> MarketRecord:
    label = "Kalshi market"
    if isinstance(payload, Mapping) and isinstance(payload.get("ticker"), str):
        label += f" {payload['ticker']}"
    f = Fields(payload, label=label)
    ticker = f.string("ticker")
    status = f.string("status").strip().lower()
    known = OPEN_STATUSES | PROVISIONAL_STATUSES | FINAL_STATUSES | HELD_STATUSES
    if status not in known:
        raise f.error("status", f"has an unknown value {status!r}")
    result = f.string("result", required=False).strip().lower()
    close_at = f.iso_time("close_time", required=True)
    resolved_at = f.iso_time("settlement_ts") or f.iso_time("expiration_time") or close_at
    last = _price(f, "last_price")
    bid = _price(f, "yes_bid")
    ask = _price(f, "yes_ask")
    # The last trade is the market's price; before any trade, the middle of a two-sided book.
    price = last if last else ((bid + ask) / 2 if bid and ask else None)
    event = f.string("event_ticker", required=False)
    return MarketRecord(
        platform=PLATFORM,
        external_id=ticker,
        title=f.string("title").strip(),
        outcomes=[YES, NO],
        question_type="binary",
        url=f"https://kalshi.com/markets/{(event or ticker).lower()}",
        open_at=f.iso_time("open_time"),
        close_at=close_at,
        status=status,
        liquidity=_dollars(f, "liquidity"),
        volume=_count(f, "volume"),
        bettors=None,
        description=f.string("rules_primary", required=False),
        state=_state(f, status=status, result=result, resolved_at=resolved_at),
        raw=dict(f.payload),
        prices=[PriceRecord(outcome=YES, time=now, probability=price)] if price is not None else [],
        prices_are_snapshot=True,
    )


def _state(f: Fields, *, status: str, result: str, resolved_at: datetime | None) -> MarketState:
    if status in OPEN_STATUSES:
        return MarketState.open()
    if status in HELD_STATUSES:
        return MarketState.held("outcome disputed on Kalshi")
    final = status in FINAL_STATUSES
    if result in ("yes", "no"):
        return MarketState(
            kind="resolved", outcome=YES if result == "yes" else NO, provisional=not final, resolved_at=resolved_at
        )
    if result in ("void", "") and final:
        return MarketState(
            kind="annulled", resolved_at=resolved_at, reason=f"Kalshi {status} the market with no yes/no result"
        )
    if result == "":
        raise f.error("result", f"is empty on a {status} market")
    raise f.error(
        "result", f"has a value Hindsight cannot map to Yes or No: {result!r} (expected 'yes', 'no' or 'void')"
    )


class KalshiClient:
    # The source options this client reads (the selection options are the store's).
    OPTIONS: ClassVar[frozenset[str]] = frozenset({"page_size", "max_pages", "status"})

    def __init__(self, *, base_url: str, options: Mapping[str, Any], get: JsonGetter) -> None:
        base = base_url.rstrip("/")
        # Staff may paste the API root with or without the version prefix.
        self.api_url = base if base.endswith(API_PREFIX) else base + API_PREFIX
        self.get = get
        self.page_size = option_int(options, "page_size", 200)
        self.max_pages = option_int(options, "max_pages", 20)
        self.status = option_choice(options, "status", ("open", "closed", "settled", "unopened", "all"), "open")

    def list_markets(self, *, now: datetime, listing: Listing) -> None:
        cursor = ""
        for page in range(self.max_pages):
            params: dict[str, Any] = {"limit": self.page_size}
            if self.status != "all":
                params["status"] = self.status
            if cursor:
                params["cursor"] = cursor
            body = self.get(f"{self.api_url}/markets", params)
            listing.pages += 1
            if not isinstance(body, Mapping) or not isinstance(body.get("markets"), list):
                raise MarketFormatError(f"Kalshi /markets page {page + 1}: expected an object with a 'markets' list")
            for item in body["markets"]:
                try:
                    listing.records.append(parse_market(item, now=now))
                except MarketFormatError as exc:
                    listing.skipped.append(str(exc))
            next_cursor = body.get("cursor")
            if next_cursor is not None and not isinstance(next_cursor, str):
                raise MarketFormatError(f"Kalshi /markets page {page + 1}: 'cursor' is not a string")
            if not next_cursor or next_cursor == cursor:
                return
            cursor = next_cursor

    def market(self, external_id: str, *, now: datetime) -> MarketRecord:
        body = self.get(f"{self.api_url}/markets/{external_id}", None)
        if not isinstance(body, Mapping) or "market" not in body:
            raise MarketFormatError(f"Kalshi /markets/{external_id}: expected an object with a 'market'")
        return parse_market(body["market"], now=now)

    def with_history(self, record: MarketRecord, *, since: datetime | None, now: datetime) -> MarketRecord:
        # The listing's price is the observation; storing it only on change builds the path.
        return record
