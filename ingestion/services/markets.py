"""Prediction markets: polling Polymarket, Manifold and Kalshi sources into Market and PricePoint
rows, turning selected markets into questions, and following their resolutions.

A poll has the two halves of a poller (``ingestion.polls``): ``market_fetch`` reads the
platform's API (and the database, to know which markets already carry questions) and validates
everything into typed records; ``market_store`` writes them in the one transaction the poll
framework opens, so a poll that fails stores nothing.

Resolutions follow the market but never overwrite: every change goes through the versioned
question services (resolve, amend, un-resolve, annul), which announce it for regrading.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from typing import Any, Protocol

import orjson
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from common.bulk import copy_row_builder, copy_rows_skipping_clashes, copy_rows_upserting
from ingestion.fetching import HTTPStatusError
from ingestion.markets import (
    YES,
    JsonClient,
    JsonGetter,
    Listing,
    MarketFormatError,
    MarketRecord,
    kalshi,
    manifold,
    option_bool,
    option_float,
    option_int,
    polymarket,
)
from ingestion.models import Market, PricePoint, Question, Resolution, Source
from ingestion.polls import PollReport
from ingestion.question_data import question_data_clean
from ingestion.selectors.markets import market_latest_price_times, market_tracked_external_ids
from ingestion.selectors.questions import question_current_resolutions
from ingestion.services.questions import question_annul, question_resolve, question_unresolve

PLATFORM_LABELS: dict[str, str] = {
    Market.Platform.POLYMARKET.value: "Polymarket",
    Market.Platform.MANIFOLD.value: "Manifold",
    Market.Platform.KALSHI.value: "Kalshi",
}


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
                payload.skipped.append(f"{PLATFORM_LABELS[platform]} market {external_id}: no longer exists (404)")
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
        payload.records = list(records.values())
        payload.requests = getattr(http, "requests", 0) if get is None else 0
    return payload


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
            rows=(_market_copy_row({**r.values, "raw": r.content.raw_json, "updated_at": stamp}) for r in rows),
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


def question_external_id(*, platform: str, external_id: str) -> str:
    return f"{platform}:{external_id}"[:300]


def _question_data(*, record: MarketRecord, selection: Selection, now: datetime) -> dict[str, Any]:
    label = PLATFORM_LABELS.get(record.platform, record.platform)
    assert record.close_at is not None
    criteria = (
        f"Resolves as the {label} market resolves"
        + (f" ({record.url})" if record.url else f" (id {record.external_id})")
        + ". A market that is cancelled, resolved to MKT or settled 50/50 annuls the question."
    )
    data: dict[str, Any] = {
        "external_id": question_external_id(platform=record.platform, external_id=record.external_id),
        "title": record.title[:1000],
        "type": record.question_type,
        "track": Question.Track.LIVE,
        "open_at": now,
        "close_at": record.close_at,
        "resolution_criteria": criteria,
        "background": record.description[:20000],
        "origin": Question.Origin.MARKET,
        "attribution": {"source": label, "market_id": record.external_id, "url": record.url},
    }
    if record.url:
        data["provenance_url"] = record.url
    if record.question_type == "multiple_choice":
        data["options"] = list(record.outcomes)
    if not selection.open_questions:
        data["status"] = Question.Status.DRAFT
    return data


@dataclass
class QuestionSyncResult:
    questions_created: int = 0
    resolutions_added: int = 0
    problems: list[str] = field(default_factory=list)


def _author_label(platform: str) -> str:
    return f"market:{platform}"


def _new_question_values(
    *, record: MarketRecord, market_id: int, selection: Selection, now: datetime
) -> dict[str, Any]:
    """The field values of a question for a selected market, validated exactly as
    ``question_upsert`` validates (a ValidationError names the refused field), so that it can
    be inserted in bulk."""
    values, _, _ = question_data_clean(_question_data(record=record, selection=selection, now=now))
    values.setdefault("origin", Question.Origin.MARKET)
    if "status" not in values:
        # question_upsert's rule for a live question without an explicit status.
        values["status"] = Question.Status.OPEN if values["close_at"] > now else Question.Status.CLOSED
    values["market_id"] = market_id
    return values


# What the resolution pre-check reads; the few questions that need a change are loaded whole.
_SYNC_FIELDS = ("id", "external_id", "status", "type", "rejection_reason", "market_id")


def market_questions_sync(
    *, records: Iterable[MarketRecord], market_ids: Mapping[str, int], selection: Selection, now: datetime
) -> QuestionSyncResult:
    """Create questions for newly selected markets and bring every market question's
    resolution in line with its market. Call inside the poll's transaction."""
    result = QuestionSyncResult()
    qids = {question_external_id(platform=r.platform, external_id=r.external_id): r for r in records}
    questions = {q.external_id: q for q in Question.objects.filter(external_id__in=list(qids)).only(*_SYNC_FIELDS)}
    currents = question_current_resolutions(q.pk for q in questions.values())
    new_questions: list[dict[str, Any]] = []
    relink: list[tuple[int, int]] = []
    to_sync: list[tuple[int, MarketRecord]] = []
    for qid, record in qids.items():
        market_id = market_ids[record.external_id]
        question = questions.get(qid)
        if question is None:
            if not selection.accepts(record, now=now):
                continue
            try:
                new_questions.append(
                    _new_question_values(record=record, market_id=market_id, selection=selection, now=now)
                )
            except ValidationError as exc:
                # A market whose question data is refused is reported, not fatal.
                result.problems.append(f"{record.platform} market {record.external_id}: question refused: {exc}")
            continue
        if question.market_id != market_id:
            relink.append((question.pk, market_id))
        if _needs_change(question=question, record=record, current=currents.get(question.pk)):
            to_sync.append((question.pk, record))
    if new_questions:
        # A question created meanwhile by someone else fails the poll on the unique external id.
        Question.objects.bulk_create([Question(**values) for values in new_questions], batch_size=500)
        result.questions_created = len(new_questions)
    for question_id, market_id in relink:
        Question.objects.filter(pk=question_id).update(market_id=market_id, updated_at=timezone.now())
    if to_sync:
        full = Question.objects.in_bulk([question_id for question_id, _ in to_sync])
        for question_id, record in to_sync:
            try:
                with transaction.atomic():
                    if _sync_resolution(question=full[question_id], record=record, now=now):
                        result.resolutions_added += 1
            except ValidationError as exc:
                result.problems.append(f"{record.platform} market {record.external_id}: resolution refused: {exc}")
    return result


def _needs_change(*, question: Question, record: MarketRecord, current: Resolution | None) -> bool:
    """Whether the market's state could add a version (a cheap pre-check; the services decide)."""
    if question.status == Question.Status.DRAFT or question.rejection_reason:
        return False
    state = record.state
    if state.kind == "held":
        return False
    if state.kind == "open":
        return current is not None and current.kind != Resolution.Kind.UNRESOLVE
    if state.kind == "annulled":
        return current is None or current.kind != Resolution.Kind.ANNUL
    return not (
        current is not None
        and current.kind in (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND)
        and current.provisional == state.provisional
        and current.outcome == (state.outcome == YES if question.type == Question.Type.BINARY else state.outcome)
    )


def _sync_resolution(*, question: Question, record: MarketRecord, now: datetime) -> bool:
    """Apply the market's state to its question; True when a resolution version was added."""
    # Drafts await curation and rejected drafts are a closed decision: neither follows the market.
    if question.status == Question.Status.DRAFT or question.rejection_reason:
        return False
    state = record.state
    label = _author_label(record.platform)
    evidence = {
        "platform": record.platform,
        "market_id": record.external_id,
        "status": record.status,
        "url": record.url,
    }
    platform_name = PLATFORM_LABELS.get(record.platform, record.platform)
    if state.kind == "held":
        return False
    if state.kind == "open":
        current = question.current_resolution
        # Only withdraw what a market put there: a staff decision stands until staff change it.
        if current is None or current.kind == Resolution.Kind.UNRESOLVE or current.author_label != label:
            return False
        note = f"The {platform_name} market is no longer resolved (status {record.status or 'open'})."
        return question_unresolve(question=question, note=note, author_label=label, now=now) is not None
    if state.kind == "annulled":
        return (
            question_annul(question=question, reason=state.reason, author_label=label, evidence=evidence, now=now)
            is not None
        )
    outcome: Any = state.outcome
    if question.type == Question.Type.BINARY:
        outcome = state.outcome == YES
    stage = "provisional" if state.provisional else "final"
    note = f"{platform_name} market {record.status}: {state.outcome} ({stage})."
    resolution = question_resolve(
        question=question,
        outcome=outcome,
        resolved_at=state.resolved_at,
        provisional=state.provisional,
        note=note,
        evidence=evidence,
        author_label=label,
        now=now,
    )
    return resolution is not None


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
        f"{PLATFORM_LABELS.get(r.platform, r.platform)} market {r.external_id} on hold: {r.state.reason}"
        for r in held[:limit]
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


# The source options the store reads (each platform's client reads its own as well).
SELECTION_OPTIONS = frozenset(f.name for f in fields(Selection))


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
