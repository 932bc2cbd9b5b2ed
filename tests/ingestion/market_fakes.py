"""Fake Polymarket, Manifold and Kalshi APIs on the local fake server, serving the recorded
payloads in tests/ingestion/fixtures/markets/ with each platform's real paging scheme.

Each fake keeps its markets in a dict that a test may change between polls (a market resolves,
is amended, un-resolves), so one source is polled against an evolving world.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ingestion.models import Market, PricePoint, Question, Resolution, Source
from ingestion.polls import PollReport
from ingestion.services.sources import source_poll
from tests.factories import SourceFactory
from tests.ingestion.fakeserver import FakeServer, RecordedRequest, Response, fixture_bytes


def load(name: str) -> Any:
    return json.loads(fixture_bytes(f"markets/{name}"))


def _json(data: Any, status: int = 200) -> Response:
    return Response(status=status, body=json.dumps(data).encode(), content_type="application/json")


def _one(request: RecordedRequest, name: str, default: str = "") -> str:
    return request.query.get(name, [default])[0]


def row_counts() -> dict[str, int]:
    return {
        "markets": Market.objects.count(),
        "prices": PricePoint.objects.count(),
        "questions": Question.objects.count(),
        "resolutions": Resolution.objects.count(),
    }


def market_source(server: FakeServer, kind: str, **options: Any) -> Source:
    if kind == Source.Kind.POLYMARKET:
        # The CLOB (price history) lives on another host in reality; here on the same fake.
        options.setdefault("clob_url", server.base_url)
    return SourceFactory(kind=kind, url=server.base_url, options=options, poll_interval=timedelta(minutes=10))


def poll(source: Source, now: datetime) -> PollReport:
    return source_poll(source_id=source.pk, now=now)


@dataclass
class FakePolymarket:
    server: FakeServer
    markets: dict[str, dict[str, Any]] = field(default_factory=dict)
    history: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def install(cls, server: FakeServer, markets: list[dict[str, Any]] | None = None) -> FakePolymarket:
        fake = cls(server=server)
        for market in markets if markets is not None else load("polymarket/markets.json"):
            fake.markets[str(market["id"])] = copy.deepcopy(market)
        server.add("/markets", fake._offset_page)
        server.add("/markets/keyset", fake._keyset_page)
        server.add("/prices-history", fake._history)
        for market_id in list(fake.markets):
            fake._route_market(market_id)
        return fake

    def _route_market(self, market_id: str) -> None:
        self.server.add(f"/markets/{market_id}", lambda request: self._market(market_id))

    def set(self, market_id: str, **changes: Any) -> None:
        self.markets[market_id].update(changes)

    def _listed(self, request: RecordedRequest) -> list[dict[str, Any]] | Response:
        closed = _one(request, "closed")
        if closed not in ("true", "false"):
            return _json({"error": "closed must be given"}, status=400)
        want = closed == "true"
        return [m for m in self.markets.values() if bool(m.get("closed")) == want]

    def _offset_page(self, request: RecordedRequest) -> Response:
        listed = self._listed(request)
        if isinstance(listed, Response):
            return listed
        limit, offset = int(_one(request, "limit", "100")), int(_one(request, "offset", "0"))
        return _json(listed[offset : offset + limit])

    def _keyset_page(self, request: RecordedRequest) -> Response:
        listed = self._listed(request)
        if isinstance(listed, Response):
            return listed
        limit = int(_one(request, "limit", "100"))
        start = int(_one(request, "cursor", "0") or 0)
        body: dict[str, Any] = {"markets": listed[start : start + limit]}
        if start + limit < len(listed):
            body["next_cursor"] = str(start + limit)
        return _json(body)

    def _market(self, market_id: str) -> Response:
        return _json(self.markets[market_id])

    def _history(self, request: RecordedRequest) -> Response:
        token = _one(request, "market")
        return _json(self.history.get(token, {"history": []}))


@dataclass
class FakeManifold:
    server: FakeServer
    markets: dict[str, dict[str, Any]] = field(default_factory=dict)
    full: dict[str, dict[str, Any]] = field(default_factory=dict)
    bets: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def install(cls, server: FakeServer, markets: list[dict[str, Any]] | None = None) -> FakeManifold:
        fake = cls(server=server)
        for market in markets if markets is not None else load("manifold/markets.json"):
            fake.markets[market["id"]] = copy.deepcopy(market)
        nba = load("manifold/market_nba.json")
        fake.full[nba["id"]] = nba
        fake.bets["qZ8rT2mLkP"] = load("manifold/bets_gpt6.json")
        fake.bets["mC4nW9xQe1"] = load("manifold/bets_nba.json")
        server.add("/v0/markets", fake._page)
        server.add("/v0/bets", fake._bets)
        for market_id in list(fake.markets):
            server.add(f"/v0/market/{market_id}", lambda request, m=market_id: fake._market(m))
        return fake

    def set(self, market_id: str, **changes: Any) -> None:
        self.markets[market_id].update(changes)
        if market_id in self.full:
            self.full[market_id].update(changes)

    def _page(self, request: RecordedRequest) -> Response:
        listed = list(self.markets.values())
        limit = int(_one(request, "limit", "500"))
        before = _one(request, "before")
        start = 0
        if before:
            start = next(i for i, m in enumerate(listed) if m["id"] == before) + 1
        return _json(listed[start : start + limit])

    def _market(self, market_id: str) -> Response:
        return _json(self.full.get(market_id, self.markets[market_id]))

    def _bets(self, request: RecordedRequest) -> Response:
        bets = self.bets.get(_one(request, "contractId"), [])
        limit = int(_one(request, "limit", "1000"))
        before = _one(request, "before")
        after_time = _one(request, "afterTime")
        if after_time:
            bets = [b for b in bets if b["createdTime"] > int(after_time)]
        start = 0
        if before:
            start = next(i for i, b in enumerate(bets) if b["id"] == before) + 1
        return _json(bets[start : start + limit])


@dataclass
class FakeKalshi:
    server: FakeServer
    markets: dict[str, dict[str, Any]] = field(default_factory=dict)

    PREFIX = "/trade-api/v2"

    @classmethod
    def install(cls, server: FakeServer, markets: list[dict[str, Any]] | None = None) -> FakeKalshi:
        fake = cls(server=server)
        for market in markets if markets is not None else load("kalshi/markets.json"):
            fake.markets[market["ticker"]] = copy.deepcopy(market)
        server.add(f"{cls.PREFIX}/markets", fake._page)
        for ticker in list(fake.markets):
            server.add(f"{cls.PREFIX}/markets/{ticker}", lambda request, t=ticker: _json({"market": fake.markets[t]}))
        return fake

    def set(self, ticker: str, **changes: Any) -> None:
        self.markets[ticker].update(changes)

    def _page(self, request: RecordedRequest) -> Response:
        status = _one(request, "status")
        groups = {"open": {"active", "open", "initialized"}, "closed": {"closed"}, "settled": {"settled", "finalized"}}
        listed = [m for m in self.markets.values() if not status or m["status"] in groups.get(status, {status})]
        limit = int(_one(request, "limit", "100"))
        start = int(_one(request, "cursor", "0") or 0)
        cursor = str(start + limit) if start + limit < len(listed) else ""
        return _json({"markets": listed[start : start + limit], "cursor": cursor})
