"""Polymarket: markets from the Gamma API, price history from the CLOB.

Formats (Polymarket's developer documentation, "Gamma Markets API" and "CLOB Timeseries"):

* ``GET {gamma}/markets?limit=&offset=&closed=true|false`` -> a JSON list of market objects, and
  the keyset variant ``GET {gamma}/markets/keyset?limit=&cursor=&closed=`` ->
  ``{"markets": [...], "next_cursor": "..."}`` (``next_cursor`` absent on the last page; at most
  100 per page). ``closed`` is always sent explicitly: when it is omitted Gamma silently leaves
  resolved markets out.
* ``GET {gamma}/markets/{id}`` -> one market object.
* A market has ``id`` (string), ``question``, ``slug``, ``startDate``/``endDate`` (ISO 8601),
  ``closed``, ``closedTime`` (``2024-11-06 12:00:00+00``), ``liquidity``/``volume`` (decimal strings;
  ``liquidityNum``/``volumeNum`` numbers) and ``outcomes``, ``outcomePrices``, ``clobTokenIds``, each
  a JSON-encoded *string* holding a list, aligned by position.
* ``GET {clob}/prices-history?market=TOKEN_ID&interval=max&fidelity=MINUTES`` (or ``startTs``/
  ``endTs``) -> ``{"history": [{"t": unix_seconds, "p": price}, ...]}``.

A listed market whose fields are missing or mistyped is skipped and counted (the listing mixes
many kinds of market, and one odd entry must not block the rest); a page that is not a list
fails the poll.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar

from ingestion.markets import (
    YES,
    Fields,
    JsonGetter,
    Listing,
    MarketFormatError,
    MarketRecord,
    MarketState,
    PriceRecord,
    is_yes_no,
    normalise_yes_no,
    option_choice,
    option_int,
    probability,
    with_price_path,
)

PLATFORM = "polymarket"
DEFAULT_CLOB_URL = "https://clob.polymarket.com"
WIN_THRESHOLD = 0.99
SPLIT_TOLERANCE = 0.01


def parse_market(payload: Any, *, now: datetime) -> MarketRecord:
    label = "Polymarket market"
    if isinstance(payload, Mapping) and payload.get("id") is not None:
        label += f" {payload.get('id')}"
    f = Fields(payload, label=label)
    raw_id = f.payload.get("id")
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        raw_id = str(raw_id)
    if not isinstance(raw_id, str) or not raw_id:
        raise f.error("id", "is missing" if raw_id is None else f"should be a string, got {raw_id!r}")
    title = f.string("question")
    outcomes_raw = f.json_list("outcomes")
    if len(outcomes_raw) < 2 or not all(isinstance(o, str) and o.strip() for o in outcomes_raw):
        raise f.error("outcomes", f"should list at least two outcome names, got {outcomes_raw!r}")
    if len(set(outcomes_raw)) != len(outcomes_raw):
        raise f.error("outcomes", f"names an outcome twice: {outcomes_raw!r}")
    prices_raw = f.json_list("outcomePrices")
    if len(prices_raw) != len(outcomes_raw):
        raise f.error("outcomePrices", f"has {len(prices_raw)} prices for {len(outcomes_raw)} outcomes")
    prices: list[float] = []
    for value in prices_raw:
        try:
            price = float(value)
        except (TypeError, ValueError):
            raise f.error("outcomePrices", f"holds a non-numeric price {value!r}") from None
        prices.append(probability(price, fields=f, name="outcomePrices"))
    tokens = f.json_list("clobTokenIds", required=False)
    if tokens and (len(tokens) != len(outcomes_raw) or not all(isinstance(t, str) and t for t in tokens)):
        raise f.error("clobTokenIds", f"should hold one token id string per outcome, got {tokens!r}")
    binary = is_yes_no(outcomes_raw)
    outcomes = [normalise_yes_no(o) for o in outcomes_raw] if binary else [o.strip() for o in outcomes_raw]
    closed = f.boolean("closed")
    liquidity = f.number("liquidityNum") if f.payload.get("liquidityNum") is not None else None
    if liquidity is None:
        liquidity = f.number("liquidity", allow_string=True)
    volume = f.number("volumeNum") if f.payload.get("volumeNum") is not None else None
    if volume is None:
        volume = f.number("volume", allow_string=True)
    close_at = f.iso_time("endDate")
    slug = f.string("slug", required=False)
    snapshot_outcomes = [YES] if binary else outcomes
    snapshot = [PriceRecord(outcome=o, time=now, probability=prices[outcomes.index(o)]) for o in snapshot_outcomes]
    return MarketRecord(
        platform=PLATFORM,
        external_id=raw_id,
        title=title.strip(),
        outcomes=outcomes,
        question_type="binary" if binary else "multiple_choice",
        url=f"https://polymarket.com/market/{slug}" if slug else "",
        open_at=f.iso_time("startDate"),
        close_at=close_at,
        status="closed" if closed else ("active" if f.boolean("active", required=False, default=True) else "inactive"),
        liquidity=liquidity,
        volume=volume,
        bettors=None,
        description=f.string("description", required=False),
        state=_state(f, closed=closed, outcomes=outcomes, prices=prices, close_at=close_at),
        raw=dict(f.payload),
        prices=snapshot,
        history_keys=dict(zip(outcomes, tokens, strict=True)) if tokens else {},
        prices_are_snapshot=True,
    )


def _state(
    f: Fields, *, closed: bool, outcomes: list[str], prices: list[float], close_at: datetime | None
) -> MarketState:
    if not closed:
        return MarketState.open()
    resolved_at = f.iso_time("closedTime") or close_at
    winners = [o for o, p in zip(outcomes, prices, strict=True) if p >= WIN_THRESHOLD]
    if len(winners) == 1:
        return MarketState(kind="resolved", outcome=winners[0], resolved_at=resolved_at)
    if all(abs(p - 1.0 / len(prices)) <= SPLIT_TOLERANCE for p in prices):
        split = " / ".join(f"{o} {p:g}" for o, p in zip(outcomes, prices, strict=True))
        return MarketState(
            kind="annulled", resolved_at=resolved_at, reason=f"Polymarket settled the market 50/50 ({split})"
        )
    if not any(prices):
        # Gamma lists some closed markets at ["0", "0"]: no settlement price at all, so no
        # outcome can be read; the question waits, and staff see why.
        listed = ", ".join(f"{o} {p:g}" for o, p in zip(outcomes, prices, strict=True))
        return MarketState.held(f"closed without a settlement price (outcomePrices {listed}); awaiting settlement")
    # Closed but not yet settled by the oracle: prices still float; wait for the settlement.
    return MarketState.held("closed, awaiting settlement")


class PolymarketClient:
    # The source options this client reads (the selection options are the store's).
    OPTIONS: ClassVar[frozenset[str]] = frozenset(
        {"page_size", "max_pages", "paging", "closed", "clob_url", "history_fidelity_minutes"}
    )

    def __init__(self, *, base_url: str, options: Mapping[str, Any], get: JsonGetter) -> None:
        self.base_url = base_url.rstrip("/")
        self.clob_url = str(options.get("clob_url") or DEFAULT_CLOB_URL).rstrip("/")
        self.get = get
        self.page_size = option_int(options, "page_size", 100)
        self.max_pages = option_int(options, "max_pages", 20)
        self.paging = option_choice(options, "paging", ("keyset", "offset"), "keyset")
        closed = option_choice(options, "closed", ("false", "true", "both"), "false")
        self.closed_values = ["false", "true"] if closed == "both" else [closed]
        self.fidelity = option_int(options, "history_fidelity_minutes", 60)

    def list_markets(self, *, now: datetime, listing: Listing) -> None:
        for closed in self.closed_values:
            if self.paging == "keyset":
                self._list_keyset(closed=closed, now=now, listing=listing)
            else:
                self._list_offset(closed=closed, now=now, listing=listing)

    def _list_offset(self, *, closed: str, now: datetime, listing: Listing) -> None:
        url = f"{self.base_url}/markets"
        for page in range(self.max_pages):
            params = {"limit": self.page_size, "offset": page * self.page_size, "closed": closed}
            items = self.get(url, params)
            listing.pages += 1
            if not isinstance(items, list):
                raise MarketFormatError(f"Polymarket /markets page {page + 1}: expected a JSON list of markets")
            self._add(items, now=now, listing=listing)
            if len(items) < self.page_size:
                return

    def _list_keyset(self, *, closed: str, now: datetime, listing: Listing) -> None:
        url = f"{self.base_url}/markets/keyset"
        cursor = ""
        for page in range(self.max_pages):
            params: dict[str, Any] = {"limit": self.page_size, "closed": closed}
            if cursor:
                params["cursor"] = cursor
            body = self.get(url, params)
            listing.pages += 1
            if not isinstance(body, Mapping) or not isinstance(body.get("markets"), list):
                raise MarketFormatError(
                    f"Polymarket /markets/keyset page {page + 1}: expected an object with a 'markets' list"
                )
            self._add(body["markets"], now=now, listing=listing)
            next_cursor = body.get("next_cursor")
            if next_cursor is not None and not isinstance(next_cursor, str):
                raise MarketFormatError(f"Polymarket /markets/keyset page {page + 1}: 'next_cursor' is not a string")
            if not next_cursor or next_cursor == cursor:
                return
            cursor = next_cursor

    def _add(self, items: list[Any], *, now: datetime, listing: Listing) -> None:
        for item in items:
            try:
                listing.records.append(parse_market(item, now=now))
            except MarketFormatError as exc:
                listing.skipped.append(str(exc))

    def market(self, external_id: str, *, now: datetime) -> MarketRecord:
        return parse_market(self.get(f"{self.base_url}/markets/{external_id}", None), now=now)

    def with_history(self, record: MarketRecord, *, since: datetime | None, now: datetime) -> MarketRecord:
        """The record with its price path from the CLOB in place of the listing snapshot."""
        if not record.history_keys:
            return record
        outcomes = [YES] if record.question_type == "binary" else record.outcomes
        points: list[PriceRecord] = []
        empty: set[str] = set()
        for outcome in outcomes:
            token = record.history_keys[outcome]
            params: dict[str, Any] = {"market": token, "fidelity": self.fidelity}
            if since is None:
                params["interval"] = "max"
            else:
                params["startTs"] = int(since.timestamp())
                params["endTs"] = int(now.timestamp()) + 1
            body = self.get(f"{self.clob_url}/prices-history", params)
            history = parse_history(body, outcome=outcome, label=f"Polymarket market {record.external_id}")
            if not history:
                empty.add(outcome)
            points.extend(history)
        return with_price_path(record, points=points, empty=empty, first=since is None)


def parse_history(body: Any, *, outcome: str, label: str) -> list[PriceRecord]:
    if not isinstance(body, Mapping) or not isinstance(body.get("history"), list):
        raise MarketFormatError(f"{label}: prices-history should be an object with a 'history' list")
    points = []
    for index, item in enumerate(body["history"]):
        f = Fields(item, label=f"{label} prices-history point {index}")
        t = f.number("t", required=True)
        p = f.number("p", required=True)
        assert t is not None and p is not None
        points.append(
            PriceRecord(
                outcome=outcome,
                time=datetime.fromtimestamp(t, tz=UTC),
                probability=probability(p, fields=f, name="p"),
            )
        )
    return points
