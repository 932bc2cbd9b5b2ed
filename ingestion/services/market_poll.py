"""The poller of prediction-market sources (Polymarket, Manifold, Kalshi).

A poll has the two halves of a poller (``ingestion.polls``): ``market_fetch`` reads the
platform's API (and the database, to know which markets already carry questions) and validates
everything into typed records; ``market_store`` writes them in the one transaction the poll
framework opens, so a poll that fails stores nothing: the markets and their prices
(``ingestion.services.market_store``), then the questions of selected markets and their
resolutions (``ingestion.services.market_questions``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

from django.db import transaction

from ingestion.fetching import HTTPStatusError
from ingestion.markets import (
    JsonClient,
    JsonGetter,
    Listing,
    MarketFormatError,
    MarketRecord,
    kalshi,
    manifold,
    polymarket,
)
from ingestion.markets.selection import Selection
from ingestion.models import SAMPLE_WORLD_OPTION, Market, Source
from ingestion.polls import PollReport
from ingestion.selectors.markets import market_latest_price_times, market_tracked_external_ids
from ingestion.services.market_questions import market_questions_sync
from ingestion.services.market_store import market_upsert_many


class MarketClient(Protocol):
    def list_markets(self, *, now: datetime, listing: Listing) -> None: ...

    def market(self, external_id: str, *, now: datetime) -> MarketRecord: ...

    def with_history(self, record: MarketRecord, *, since: datetime | None, now: datetime) -> MarketRecord: ...


def market_client(*, source: Source, get: JsonGetter) -> MarketClient:
    options = source.options or {}
    if source.kind == Source.Kind.POLYMARKET:
        return polymarket.PolymarketClient(base_url=source.url, options=options, get=get)
    if source.kind == Source.Kind.MANIFOLD:
        return manifold.ManifoldClient(base_url=source.url, options=options, get=get)
    if source.kind == Source.Kind.KALSHI:
        return kalshi.KalshiClient(base_url=source.url, options=options, get=get)
    raise ValueError(f"source {source.pk} of kind {source.kind!r} is not a market source")


@dataclass
class MarketPayload:
    platform: str
    selection: Selection
    records: list[MarketRecord] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    pages: int = 0
    requests: int = 0

    @property
    def item_count(self) -> int:
        return len(self.records)


def market_fetch(*, source: Source, now: datetime, get: JsonGetter | None = None) -> MarketPayload:
    """Fetch and validate a market source's listing, the markets its questions follow, and
    price paths for the markets that carry (or will carry) questions. Writes nothing."""
    selection = Selection.from_options(source.options or {})
    platform = str(source.kind)
    payload = MarketPayload(platform=platform, selection=selection)
    with JsonClient() as http:
        client = market_client(source=source, get=get or http.get)
        listing = Listing()
        client.list_markets(now=now, listing=listing)
        payload.skipped.extend(listing.skipped)
        payload.pages = listing.pages
        records: dict[str, MarketRecord] = {}
        for record in listing.records:
            records[record.external_id] = record
        tracked = set(market_tracked_external_ids(platform=platform, now=now, track_days=selection.track_days))
        # Markets followed by a question but no longer in the listing (closed, settled): ask
        # for each directly, so their resolution is seen whatever the listing filters show.
        for external_id in sorted(tracked - set(records)):
            try:
                records[external_id] = client.market(external_id, now=now)
            except MarketFormatError as exc:
                payload.skipped.append(str(exc))
            except HTTPStatusError as exc:
                if exc.status_code != 404:
                    raise
                payload.skipped.append(
                    f"{Market.Platform(platform).label} market {external_id}: no longer exists (404)"
                )
        # The markets that carry, or will carry, a question: only they need a detail request
        # (Manifold) or a price history, so a poll asking for neither skips the selection here.
        wanted: set[str] = set()
        if selection.price_history or platform == Market.Platform.MANIFOLD:
            wanted = {
                key
                for key, record in records.items()
                if key in tracked or selection.accepts(record, now=now, check_outcomes=False)
            }
        if platform == Market.Platform.MANIFOLD:
            for key in sorted(wanted):
                if manifold.needs_detail(records[key]):
                    try:
                        records[key] = client.market(key, now=now)
                    except MarketFormatError as exc:
                        payload.skipped.append(str(exc))
                        del records[key]
        if selection.price_history:
            since_by_id = market_latest_price_times(platform=platform, external_ids=wanted & set(records))
            for key in sorted(wanted & set(records)):
                try:
                    records[key] = client.with_history(records[key], since=since_by_id.get(key), now=now)
                except MarketFormatError as exc:
                    payload.skipped.append(str(exc))
                    del records[key]
        if SAMPLE_WORLD_OPTION in (source.options or {}):
            # A fictional world's markets have no page on the real platform: the URL the adapter
            # builds from a slug would send a reader to a real prediction-market site.
            records = {key: replace(record, url="") for key, record in records.items()}
        payload.records = list(records.values())
        payload.requests = getattr(http, "requests", 0) if get is None else 0
    return payload


def market_store(*, source: Source, payload: MarketPayload, now: datetime) -> PollReport:
    """Store one fetched market poll (the poll framework wraps this in a transaction)."""
    stored = market_upsert_many(source=source, records=payload.records, now=now)
    synced = market_questions_sync(
        records=payload.records, market_ids=stored.market_ids, selection=payload.selection, now=now
    )
    report = PollReport(source_id=source.pk)
    report.added = stored.created + stored.prices_added + synced.questions_created + synced.resolutions_added
    report.skipped = stored.unchanged + len(payload.skipped) + len(synced.problems)
    reasons = {
        "unchanged market": stored.unchanged,
        "invalid market": len(payload.skipped),
        "question or resolution refused": len(synced.problems),
    }
    report.skip_reasons = {k: v for k, v in reasons.items() if v}
    report.problems = [*payload.skipped, *synced.problems]
    report.warnings = _hold_warnings(payload.records)
    return report


def _hold_warnings(records: Iterable[MarketRecord], *, limit: int = 10) -> list[str]:
    """One line per market on hold (the first ``limit``), with the reason, for the source's page."""
    held = [r for r in records if r.state.kind == "held"]
    lines = [
        f"{Market.Platform(r.platform).label} market {r.external_id} on hold: {r.state.reason}" for r in held[:limit]
    ]
    if len(held) > limit:
        lines.append(f"... and {len(held) - limit} more markets on hold")
    return lines


def market_poll_records(
    *, source: Source, records: list[MarketRecord], now: datetime, skipped: list[str] | None = None
) -> PollReport:
    """Store already-parsed records as one poll would (benchmarks and tests of the store half)."""
    payload = MarketPayload(
        platform=str(source.kind), selection=Selection.from_options(source.options or {}), records=records
    )
    payload.skipped = list(skipped or [])
    with transaction.atomic():
        return market_store(source=source, payload=payload, now=now)


def market_options_problem(kind: str, url: str, options: Mapping[str, Any]) -> str:
    """What a market poll would refuse in a source's options ("" when nothing), found without
    fetching anything."""
    try:
        Selection.from_options(options)
        market_client(source=Source(kind=kind, url=url, options=dict(options)), get=_never_called)
    except MarketFormatError as exc:
        return str(exc)
    return ""


def _never_called(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("checking options must not fetch anything")
