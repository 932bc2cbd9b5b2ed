"""Storing prediction markets and their price points, de-duplicated, in bulk: binary COPY on
PostgreSQL (``common.bulk``), Django's bulk upsert elsewhere."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
from django.db import connection, transaction
from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from common.bulk import copy_row_builder, copy_rows_skipping_clashes, copy_rows_upserting
from ingestion.markets import MarketRecord
from ingestion.models import Market, PricePoint, Source


@dataclass
class MarketStoreResult:
    # External id -> primary key of every market of the call, written or not.
    market_ids: dict[str, int]
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    prices_added: int = 0
    # External ids of the markets created or updated by the call.
    changed: set[str] = field(default_factory=set)
    created_ids: set[str] = field(default_factory=set)


_MARKET_FIELDS = ("title", "outcomes", "url", "open_at", "close_at", "status", "liquidity", "volume", "bettors", "raw")


# The columns the PostgreSQL COPY path writes (every Market column but the key).
_COPY_MARKET_COLUMNS = (
    "platform",
    "external_id",
    "source_id",
    *_MARKET_FIELDS,
    "hold_reason",
    "content_hash",
    "updated_at",
)


_COPY_PRICE_COLUMNS = ("market_id", "outcome", "time", "probability")


_market_copy_row = copy_row_builder(Market, _COPY_MARKET_COLUMNS)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def canonical_json(value: Any) -> bytes:
    """Compact JSON with sorted keys (key order does not count), as UTF-8; datetimes in ISO 8601."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        # orjson refuses what json.loads can still produce: integers beyond 64 bits and lone
        # surrogates (kept as \u escapes here, as Django's JSONField would send them).
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default).encode()


class _MarketContent:
    """A market's stored values (``_MARKET_FIELDS`` but raw, in that order), its raw payload as
    canonical JSON, and a digest of both, so that a change in either rewrites the row."""

    __slots__ = ("digest", "fields", "hold_reason", "raw", "raw_json")

    def __init__(self, record: MarketRecord) -> None:
        self.fields = (
            record.title[:1000],
            list(record.outcomes),
            record.url[:1000],
            record.open_at,
            record.close_at,
            record.status[:30],
            record.liquidity,
            record.volume,
            record.bettors,
        )
        self.raw = record.raw
        self.raw_json = canonical_json(record.raw)
        # Why the market's answer is on hold (shown to staff), empty otherwise.
        self.hold_reason = record.state.reason[:300] if record.state.kind == "held" else ""
        # The recipe stored hashes were made with: changing it would make every stored market
        # look changed once. A hold reason joins only when there is one, so that the markets
        # stored before reasons were kept are rewritten only if they are on hold.
        hold = b"\n" + self.hold_reason.encode() if self.hold_reason else b""
        self.digest = hashlib.blake2b(
            canonical_json(self.fields) + b"\n" + self.raw_json + hold, digest_size=20
        ).hexdigest()

    @property
    def values(self) -> dict[str, Any]:
        return {**dict(zip(_MARKET_FIELDS, (*self.fields, self.raw), strict=True)), "hold_reason": self.hold_reason}


@dataclass
class _MarketWrite:
    platform: str
    external_id: str
    source_id: int | None
    content: _MarketContent

    @property
    def values(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "external_id": self.external_id,
            "source_id": self.source_id,
            "content_hash": self.content.digest,
            **self.content.values,
        }


def _stored_markets(keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, str, int | None]]:
    """(platform, external id) -> (pk, content hash, owning source) of the stored ones, in one
    query. Only keys and hashes: loading the stored raw payloads would cost as much as writing them."""
    wanted = set(keys)
    rows = Market.objects.filter(
        platform__in={p for p, _ in wanted}, external_id__in={e for _, e in wanted}
    ).values_list("platform", "external_id", "pk", "content_hash", "source_id")
    return {(p, e): (pk, digest, owner) for p, e, pk, digest, owner in rows if (p, e) in wanted}


@transaction.atomic
def market_upsert_many(*, source: Source | None, records: Iterable[MarketRecord], now: datetime) -> MarketStoreResult:
    """Store markets and their prices, de-duplicated on (platform, external id) and on
    (market, outcome, time). A market whose content hash is unchanged is not written and its
    listing snapshot price is not re-examined; a snapshot price of a changed market is stored
    only when it differs from the latest stored price of that outcome."""
    by_key: dict[tuple[str, str], MarketRecord] = {}
    for record in records:
        by_key[(record.platform, record.external_id[:300])] = record
    result = MarketStoreResult(market_ids={})
    if not by_key:
        return result
    stored = _stored_markets(by_key)
    source_id = source.pk if source is not None else None
    to_write: list[_MarketWrite] = []
    for key, record in by_key.items():
        found = stored.get(key)
        owner: int | None = None
        content = _MarketContent(record)
        if found is not None:
            pk, old_digest, owner = found
            result.market_ids[key[1]] = pk
            if old_digest == content.digest and (owner is not None or source_id is None):
                result.unchanged += 1
                continue
            result.updated += 1
        else:
            result.created += 1
            result.created_ids.add(key[1])
        result.changed.add(key[1])
        # The first source to list a market keeps it; two overlapping sources must not flip it
        # back and forth on every poll.
        to_write.append(
            _MarketWrite(
                platform=key[0],
                external_id=key[1],
                source_id=owner if owner is not None else source_id,
                content=content,
            )
        )
    if to_write:
        if connection.vendor == "postgresql":
            result.market_ids.update(_copy_upsert_markets(to_write))
        else:
            result.market_ids.update(_orm_upsert_markets(to_write))
    if len(result.market_ids) < len(by_key):
        missing = [key for key in by_key if key[1] not in result.market_ids]
        for platform in {p for p, _ in missing}:
            # Backends that do not return keys from an upsert (SQLite before 3.35): look them up.
            ids = [e for p, e in missing if p == platform]
            result.market_ids.update(
                Market.objects.filter(platform=platform, external_id__in=ids).values_list("external_id", "pk")
            )
    result.prices_added = _store_prices(records=[(e, r) for (_, e), r in by_key.items()], result=result)
    return result


def _orm_upsert_markets(rows: list[_MarketWrite]) -> dict[str, int]:
    """The portable path (SQLite): one bulk upsert per batch, so a market created by another
    source meanwhile is updated, not duplicated."""
    written = Market.objects.bulk_create(
        [Market(**row.values) for row in rows],
        update_conflicts=True,
        unique_fields=["platform", "external_id"],
        update_fields=[*_MARKET_FIELDS, "hold_reason", "content_hash", "source", "updated_at"],
        batch_size=1000,
    )
    return {market.external_id: market.pk for market in written if market.pk is not None}


def _copy_values(row: _MarketWrite, *, stamp: datetime) -> dict[str, Any]:
    """A market's values for COPY: the raw payload as the JSON text its digest was made from."""
    values = row.values
    values["raw"] = row.content.raw_json
    values["updated_at"] = stamp
    return values


def _copy_upsert_markets(rows: list[_MarketWrite]) -> dict[str, int]:
    """PostgreSQL: write markets with binary COPY into a staging table and one INSERT ... ON
    CONFLICT DO UPDATE, which keeps bulk_create's upsert semantics (a market another source
    stored meanwhile is updated, not duplicated). Returns external id -> key of every row.

    Django's bulk_create spends most of a large poll preparing values field by field in Python;
    binary COPY packs them as they are, the raw payload serialised once for both its digest and
    its row."""
    # Market.updated_at is auto_now: the wall clock, as bulk_create would set it.
    stamp = timezone.now()
    with connection.cursor() as cursor:
        written = copy_rows_upserting(
            cursor,
            model=Market,
            columns=_COPY_MARKET_COLUMNS,
            rows=(_market_copy_row(_copy_values(row, stamp=stamp)) for row in rows),
            unique=("platform", "external_id"),
            returning=("external_id", "id"),
        )
    return dict(written)


# (market id, outcome, time) -> probability of the price points to store.
_Points = dict[tuple[int, str, datetime], float]


def _add_points(
    points: _Points, *, record: MarketRecord, market_id: int, latest: Mapping[tuple[int, str], tuple[datetime, float]]
) -> None:
    """Add a market's valid price points; the first of a duplicated key wins. A snapshot price
    that is not newer than, or equal to, the latest stored one of its outcome is left out."""
    snapshot = record.prices_are_snapshot
    for price in record.prices:
        probability = price.probability
        if not (0.0 <= probability <= 1.0) or not math.isfinite(probability):
            continue
        outcome = price.outcome[:300]
        if snapshot and latest:
            last = latest.get((market_id, outcome))
            if last is not None and (price.time <= last[0] or abs(last[1] - probability) < 1e-9):
                continue
        points.setdefault((market_id, outcome, price.time), probability)


def _store_prices(*, records: list[tuple[str, MarketRecord]], result: MarketStoreResult) -> int:
    """Store the price points of the call's markets (external id, record) and return how many
    were new."""
    market_ids = result.market_ids
    # A snapshot repeats the listing, so an unchanged market has no new snapshot price, and a
    # market created just now has no stored price to compare with.
    compare_ids = [
        market_ids[e]
        for e, r in records
        if r.prices_are_snapshot and r.prices and e in result.changed and e not in result.created_ids
    ]
    latest: dict[tuple[int, str], tuple[datetime, float]] = {}
    if compare_ids:
        rows = (
            PricePoint.objects.filter(market_id__in=compare_ids)
            .annotate(rank=Window(RowNumber(), partition_by=[F("market_id"), F("outcome")], order_by=F("time").desc()))
            .filter(rank=1)
            .values_list("market_id", "outcome", "time", "probability")
        )
        latest = {(m, o): (t, p) for m, o, t, p in rows}
    points: _Points = {}
    for external_id, record in records:
        if record.prices_are_snapshot and external_id not in result.changed:
            continue
        _add_points(points, record=record, market_id=market_ids[external_id], latest=latest)
    if not points:
        return 0
    if connection.vendor == "postgresql":
        # Binary COPY leaving out the points already stored, counted exactly.
        with connection.cursor() as cursor:
            return copy_rows_skipping_clashes(
                cursor, model=PricePoint, columns=_COPY_PRICE_COLUMNS, rows=[(*key, p) for key, p in points.items()]
            )
    # SQLite writes one transaction at a time: a market this call created has no prices yet.
    return _orm_insert_prices(points, fresh={market_ids[e] for e in result.created_ids})


def _orm_insert_prices(points: Mapping[tuple[int, str, datetime], float], *, fresh: set[int]) -> int:
    """The portable path (SQLite): an ignore_conflicts bulk insert, which does not say how many
    rows were new. A market inserted by this call had no prices, so its points are all new; for
    the others, counting before and after within the batch's time range tells, without scanning
    each market's whole history."""
    known = [key for key in points if key[0] not in fresh]
    around = None
    if known:
        around = PricePoint.objects.filter(
            market_id__in={m for m, _, _ in known}, time__gte=min(t for _, _, t in known)
        )
    before = around.count() if around is not None else 0
    PricePoint.objects.bulk_create(
        [PricePoint(market_id=m, outcome=o, time=t, probability=p) for (m, o, t), p in points.items()],
        ignore_conflicts=True,
        batch_size=2000,
    )
    return len(points) - len(known) + (around.count() - before if around is not None else 0)
