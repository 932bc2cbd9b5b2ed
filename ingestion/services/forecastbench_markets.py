"""ForecastBench market questions' markets and price points (``ingestion.services.imports`` merges
the questions): the market of a question repeated by several rounds keeps the payload of the round
that opened it and the latest close any round gives; each round's freeze value is its own price
point, and an unresolved resolution row's value another; a stored point is never overwritten."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.utils import timezone

from ingestion.forecastbench import ImportReport, Round, midnight, question_title
from ingestion.models import Market, PricePoint, Question
from ingestion.selectors.questions import CHUNK

PRICE_OUTCOME = "Yes"
PRICE_KEPT = "price points that differ from the stored one (kept)"


def merge_markets(round_: Round, *, report: ImportReport) -> dict[str, Market]:
    """The forecastbench markets of this round's market questions, created or merged."""
    by_key = {f"{q.source}:{q.id}": q for q in round_.questions if q.is_market}
    stored: dict[str, Market] = {}
    for start in range(0, len(by_key), CHUNK):
        keys = list(by_key)[start : start + CHUNK]
        for market in Market.objects.filter(platform=Market.Platform.FORECASTBENCH, external_id__in=keys):
            stored[market.external_id] = market
    create: list[Market] = []
    update: list[Market] = []
    for key, question in by_key.items():
        values = {
            "title": question_title(question.item["question"]),
            "outcomes": ["Yes", "No"],
            "url": question.item["url"][:1000],
            "open_at": question.market_open,
            "close_at": question.market_close,
            "raw": dict(question.item),
        }
        found = stored.get(key)
        if found is None:
            new = Market(platform=Market.Platform.FORECASTBENCH, external_id=key, status="open", **values)
            create.append(new)
            stored[key] = new
            continue
        market = found
        merged = dict(values)
        if not _earlier(question.freeze, market.raw):
            # The stored payload comes from an earlier (or the same) round: it stays.
            merged.update(title=market.title, url=market.url, open_at=market.open_at, raw=market.raw)
        merged["close_at"] = latest(market.close_at, question.market_close)
        changes = {k: v for k, v in merged.items() if getattr(market, k) != v}
        if changes:
            for k, v in changes.items():
                setattr(market, k, v)
            update.append(market)
    if create:
        Market.objects.bulk_create(create, batch_size=500)
        if any(m.pk is None for m in create):
            ids = dict(
                Market.objects.filter(
                    platform=Market.Platform.FORECASTBENCH, external_id__in=[m.external_id for m in create]
                ).values_list("external_id", "pk")
            )
            for market in create:
                market.pk = ids[market.external_id]
    if update:
        stamp = timezone.now()
        for market in update:
            market.updated_at = stamp
        Market.objects.bulk_update(update, ["title", "url", "open_at", "close_at", "raw", "updated_at"], batch_size=500)
    report.markets_created += len(create)
    report.markets_updated += len(update)
    return stored


def _earlier(freeze: datetime, raw: Mapping[str, Any]) -> bool:
    """Whether a round frozen at ``freeze`` precedes the one whose payload ``raw`` is stored."""
    stored = raw.get("freeze_datetime") if isinstance(raw, Mapping) else None
    try:
        stored_at = datetime.fromisoformat(str(stored))
    except ValueError:
        return True
    if stored_at.tzinfo is None:
        return True
    return freeze < stored_at


def latest(*values: datetime | None) -> datetime | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def store_prices(round_: Round, *, markets: Mapping[str, Market], report: ImportReport) -> None:
    """Each round's freeze value at its freeze time, and unresolved rows' values at their dates."""
    wanted: dict[tuple[int, datetime], float] = {}
    for question in round_.questions:
        if not question.is_market or question.freeze_value is None:
            continue
        market_id = markets[f"{question.source}:{question.id}"].pk
        wanted.setdefault((market_id, question.freeze), question.freeze_value)
        for row in round_.resolutions.get((question.source, question.id), {}).values():
            if not row.resolved and 0 <= row.value <= 1:
                wanted.setdefault((market_id, midnight(row.resolution_date)), row.value)
    if not wanted:
        return
    ids = sorted({market_id for market_id, _ in wanted})
    stored: dict[tuple[int, datetime], float] = {}
    for start in range(0, len(ids), CHUNK):
        rows = PricePoint.objects.filter(market_id__in=ids[start : start + CHUNK], outcome=PRICE_OUTCOME)
        stored.update(((m, t), p) for m, t, p in rows.values_list("market_id", "time", "probability"))
    new = []
    for key, probability in wanted.items():
        if key not in stored:
            new.append(PricePoint(market_id=key[0], outcome=PRICE_OUTCOME, time=key[1], probability=probability))
        elif abs(stored[key] - probability) > 1e-12:
            report.skipped[PRICE_KEPT] += 1
    PricePoint.objects.bulk_create(new, batch_size=1000)
    report.prices_created += len(new)


def sync_market_status(markets: Mapping[str, Market], *, questions: Mapping[str, Question]) -> None:
    """A forecastbench market reads ``resolved`` once its question is resolved, ``open`` before."""
    resolved: list[int] = []
    for key, market in markets.items():
        question = questions.get(f"forecastbench:{key}")
        if question is not None and question.track == Question.Track.REPLAY and market.status != "resolved":
            resolved.append(market.pk)
    if resolved:
        Market.objects.filter(pk__in=resolved).update(status="resolved", updated_at=timezone.now())
