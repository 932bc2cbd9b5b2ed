"""A local HTTP server that publishes the sample world as the outside world would.

Routes (everything is filtered by the fictional clock: nothing dated after its present is served):

* ``/feeds/{outlet}.rss`` (RSS 2.0 with ``content:encoded``) and ``/feeds/{outlet}.atom`` (Atom 1.0)
  for every outlet, newest first, with ETag / If-None-Match so an unchanged feed costs a 304.
* Polymarket (Gamma + CLOB) under ``/polymarket``: ``/markets?closed=&limit=&offset=``,
  ``/markets/keyset?closed=&limit=&cursor=``, ``/markets/{id}``, ``/prices-history?market=TOKEN``.
* Manifold (API v0) under ``/manifold``: ``/v0/markets?limit=&before=``, ``/v0/market/{id}``,
  ``/v0/bets?contractId=&limit=&before=&afterTime=``.
* Kalshi (trade API v2) under ``/kalshi``: ``/trade-api/v2/markets?status=&limit=&cursor=``,
  ``/trade-api/v2/markets/{ticker}``.
* ``/events.csv``: MIRAI-style structured events for ``manage.py import_events``.

Formats follow the parsers in ``ingestion/markets`` (and the recorded payloads their tests use).
Bound to 127.0.0.1 on a free port, one thread per request.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

from sampleworld.clock import FictionalClock
from sampleworld.world import ArticleItem, World

FEED_LIMIT = 1000
Reply = tuple[int, str, bytes]


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


def _json(data: Any, status: int = 200) -> Reply:
    return status, "application/json", json.dumps(data).encode()


def _not_found(what: str) -> Reply:
    return _json({"error": f"{what} not found"}, status=404)


def _html(text: str) -> str:
    return "".join(f"<p>{escape(p)}</p>" for p in text.split("\n") if p)


class WorldPublisher:
    """Renders the world as of the clock. Pure functions of (world, clock); the HTTP layer is thin."""

    def __init__(self, world: World, clock: FictionalClock) -> None:
        self.world = world
        self.clock = clock
        self.outlets = {o.slug: o for o in world.outlets}
        self.markets = {(m["platform"], m["external_id"]): m for m in world.markets}
        # Feeds carry recent items only, as real ones do; the window outlasts the longest gap
        # between the clock's stops, so a poller at every stop misses nothing.
        stops = [world.start, *world.checkpoints, world.end]
        self.feed_window = max(b - a for a, b in itertools.pairwise(stops)) + timedelta(days=2)

    # -- news
    def _entries(self, slug: str, now: datetime) -> list[ArticleItem]:
        oldest = now - self.feed_window
        items = [a for a in self.world.articles if a.outlet == slug and oldest <= a.released_at <= now]
        items.sort(key=lambda a: (a.released_at, a.guid), reverse=True)
        return items[:FEED_LIMIT]

    def rss(self, slug: str) -> Reply:
        outlet = self.outlets.get(slug)
        if outlet is None:
            return _not_found(f"outlet {slug}")
        parts = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/">',
            "<channel>",
            f"<title>{escape(outlet.name)}</title>",
            f"<link>https://{outlet.host}/</link>",
            f"<description>{escape(outlet.name)}: an invented outlet of Hindsight's sample world.</description>",
            "<language>en</language>",
        ]
        for a in self._entries(slug, self.clock.now()):
            parts.append("<item>")
            parts.append(f"<title>{escape(a.title)}</title>")
            parts.append(f"<link>{escape(a.url)}</link>")
            parts.append(f'<guid isPermaLink="false">{escape(a.guid)}</guid>')
            if a.published_at is not None:
                parts.append(f"<pubDate>{format_datetime(a.published_at, usegmt=True)}</pubDate>")
            parts.append(f"<dc:creator>{escape(a.author)}</dc:creator>")
            parts.append(f"<description>{escape(a.summary)}</description>")
            parts.append(f"<content:encoded>{escape(_html(a.body))}</content:encoded>")
            parts.append("</item>")
        parts.append("</channel></rss>")
        return 200, "application/rss+xml; charset=utf-8", "\n".join(parts).encode()

    def atom(self, slug: str) -> Reply:
        outlet = self.outlets.get(slug)
        if outlet is None:
            return _not_found(f"outlet {slug}")
        now = self.clock.now()
        parts = [
            '<?xml version="1.0" encoding="utf-8"?>',
            '<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en">',
            f"<title>{escape(outlet.name)}</title>",
            f"<id>https://{outlet.host}/</id>",
            f'<link href="https://{outlet.host}/"/>',
            f"<updated>{_iso(now)}</updated>",
        ]
        for a in self._entries(slug, now):
            parts.append("<entry>")
            parts.append(f"<title>{escape(a.title)}</title>")
            parts.append(f'<link rel="alternate" href="{escape(a.url)}"/>')
            parts.append(f"<id>{escape(a.guid)}</id>")
            if a.published_at is not None:
                parts.append(f"<published>{_iso(a.published_at)}</published>")
                parts.append(f"<updated>{_iso(a.published_at)}</updated>")
            parts.append(f"<author><name>{escape(a.author)}</name></author>")
            parts.append(f"<summary>{escape(a.summary)}</summary>")
            parts.append(f'<content type="html">{escape(_html(a.body))}</content>')
            parts.append("</entry>")
        parts.append("</feed>")
        return 200, "application/atom+xml; charset=utf-8", "\n".join(parts).encode()

    # -- markets, common
    def _listed(self, platform: str, now: datetime) -> list[dict[str, Any]]:
        return [m for m in self.world.markets if m["platform"] == platform and m["open_at"] <= now]

    @staticmethod
    def _settled(market: dict[str, Any], now: datetime) -> bool:
        return market["settle_at"] is not None and market["settle_at"] <= now

    @staticmethod
    def _path(market: dict[str, Any], now: datetime) -> list[tuple[datetime, dict[str, float]]]:
        return [(t, p) for t, p in market["path"] if t <= now]

    def _prices(self, market: dict[str, Any], now: datetime) -> dict[str, float]:
        if self._settled(market, now):
            return {o: (1.0 if o == market["winner"] else 0.0) for o in market["outcomes"]}
        path = self._path(market, now)
        if not path:
            n = len(market["outcomes"])
            return {o: round(1.0 / n, 3) for o in market["outcomes"]}
        return path[-1][1]

    # -- Polymarket
    def _poly(self, m: dict[str, Any], now: datetime) -> dict[str, Any]:
        prices = self._prices(m, now)
        closed = self._settled(m, now)
        body: dict[str, Any] = {
            "id": m["external_id"],
            "question": m["title"],
            "slug": f"sample-{m['external_id']}",
            "description": m["description"],
            "startDate": _iso(m["open_at"]),
            "endDate": _iso(m["close_at"]),
            "active": not closed,
            "closed": closed,
            "liquidity": f"{m['liquidity']:.2f}",
            "liquidityNum": m["liquidity"],
            "volume": f"{m['volume']:.2f}",
            "volumeNum": m["volume"],
            "outcomes": json.dumps(m["outcomes"]),
            "outcomePrices": json.dumps([f"{prices[o]:g}" for o in m["outcomes"]]),
            "clobTokenIds": json.dumps([f"{m['external_id']}{i}" for i in range(len(m["outcomes"]))]),
        }
        if closed:
            body["closedTime"] = m["settle_at"].astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S+00")
        return body

    def poly_list(self, query: dict[str, str], keyset: bool) -> Reply:
        now = self.clock.now()
        closed = query.get("closed")
        if closed not in ("true", "false"):
            return _json({"error": "closed must be true or false"}, status=400)
        items = [
            self._poly(m, now) for m in self._listed("polymarket", now) if self._settled(m, now) == (closed == "true")
        ]
        limit = int(query.get("limit") or 100)
        if keyset:
            start = int(query.get("cursor") or 0)
            body: dict[str, Any] = {"markets": items[start : start + limit]}
            if start + limit < len(items):
                body["next_cursor"] = str(start + limit)
            return _json(body)
        offset = int(query.get("offset") or 0)
        return _json(items[offset : offset + limit])

    def poly_market(self, market_id: str) -> Reply:
        now = self.clock.now()
        m = self.markets.get(("polymarket", market_id))
        if m is None or m["open_at"] > now:
            return _not_found(f"market {market_id}")
        return _json(self._poly(m, now))

    def poly_history(self, query: dict[str, str]) -> Reply:
        now = self.clock.now()
        token = query.get("market", "")
        for m in self.world.markets:
            if m["platform"] != "polymarket" or not token.startswith(m["external_id"]):
                continue
            index = token[len(m["external_id"]) :]
            if not index.isdigit() or int(index) >= len(m["outcomes"]):
                continue
            outcome = m["outcomes"][int(index)]
            start = int(query["startTs"]) if query.get("startTs") else None
            end = int(query["endTs"]) if query.get("endTs") else None
            points = []
            for t, prices in self._path(m, now):
                ts = int(t.timestamp())
                if (start is None or ts >= start) and (end is None or ts <= end):
                    points.append({"t": ts, "p": prices[outcome]})
            return _json({"history": points})
        return _json({"history": []})

    # -- Manifold
    def _mani(self, m: dict[str, Any], now: datetime, full: bool) -> dict[str, Any]:
        prices = self._prices(m, now)
        settled = self._settled(m, now)
        binary = m["outcomes"] == ["Yes", "No"]
        body: dict[str, Any] = {
            "id": m["external_id"],
            "creatorUsername": "sampleworld",
            "question": m["title"],
            "url": f"https://manifold.example/sampleworld/{m['external_id']}",
            "outcomeType": "BINARY" if binary else "MULTIPLE_CHOICE",
            "mechanism": "cpmm-1" if binary else "cpmm-multi-1",
            "createdTime": _ms(m["open_at"]),
            "closeTime": _ms(m["close_at"]),
            "totalLiquidity": m["liquidity"],
            "volume": m["volume"],
            "uniqueBettorCount": m["bettors"],
            "isResolved": settled,
            "textDescription": m["description"],
        }
        if binary:
            body["probability"] = prices["Yes"]
        else:
            body["shouldAnswersSumToOne"] = True
            if full:
                body["answers"] = [
                    {"id": self._answer_id(m, o), "text": o, "probability": prices[o]} for o in m["outcomes"]
                ]
        if settled:
            body["resolutionTime"] = _ms(m["settle_at"])
            body["resolution"] = (
                ("YES" if m["winner"] == "Yes" else "NO") if binary else self._answer_id(m, m["winner"])
            )
        return body

    @staticmethod
    def _answer_id(m: dict[str, Any], outcome: str) -> str:
        return f"{m['external_id']}a{m['outcomes'].index(outcome)}"

    def mani_list(self, query: dict[str, str]) -> Reply:
        now = self.clock.now()
        items = [self._mani(m, now, full=False) for m in reversed(self._listed("manifold", now))]
        limit = int(query.get("limit") or 500)
        start = 0
        before = query.get("before")
        if before:
            ids = [i["id"] for i in items]
            if before not in ids:
                return _json({"error": f"unknown market {before}"}, status=400)
            start = ids.index(before) + 1
        return _json(items[start : start + limit])

    def mani_market(self, market_id: str) -> Reply:
        now = self.clock.now()
        m = self.markets.get(("manifold", market_id))
        if m is None or m["open_at"] > now:
            return _not_found(f"market {market_id}")
        return _json(self._mani(m, now, full=True))

    def mani_bets(self, query: dict[str, str]) -> Reply:
        now = self.clock.now()
        m = self.markets.get(("manifold", query.get("contractId", "")))
        if m is None:
            return _json([])
        binary = m["outcomes"] == ["Yes", "No"]
        bets: list[dict[str, Any]] = []
        for n, (t, prices) in enumerate(self._path(m, now)):
            for i, outcome in enumerate(["Yes"] if binary else m["outcomes"]):
                bet = {
                    "id": f"{m['external_id']}b{n:04d}{i}",
                    "contractId": m["external_id"],
                    "createdTime": _ms(t) + i,
                    "probAfter": prices[outcome],
                    "outcome": "YES",
                }
                if not binary:
                    bet["answerId"] = self._answer_id(m, outcome)
                bets.append(bet)
        after = query.get("afterTime")
        if after:
            bets = [b for b in bets if b["createdTime"] > int(after)]
        bets.reverse()  # newest first, as Manifold pages them
        start = 0
        before = query.get("before")
        if before:
            ids = [b["id"] for b in bets]
            start = ids.index(before) + 1 if before in ids else len(bets)
        limit = int(query.get("limit") or 1000)
        return _json(bets[start : start + limit])

    # -- Kalshi
    def _kalshi(self, m: dict[str, Any], now: datetime) -> dict[str, Any]:
        prices = self._prices(m, now)
        settled = self._settled(m, now)
        cents = round(prices["Yes"] * 100)
        body: dict[str, Any] = {
            "ticker": m["external_id"],
            "event_ticker": m["external_id"].rsplit("-", 1)[0],
            "title": m["title"],
            "status": "settled" if settled else "active",
            "open_time": _iso(m["open_at"]),
            "close_time": _iso(m["close_at"]),
            "expiration_time": _iso(m["close_at"]),
            "result": (m["winner"] or "").lower() if settled else "",
            "last_price": cents,
            "yes_bid": max(cents - 1, 0),
            "yes_ask": min(cents + 1, 100),
            "volume": int(m["volume"]),
            "liquidity": int(m["liquidity"] * 100),
            "rules_primary": m["description"],
        }
        if settled:
            body["settlement_ts"] = _iso(m["settle_at"])
        return body

    def kalshi_list(self, query: dict[str, str]) -> Reply:
        now = self.clock.now()
        status = query.get("status", "")
        groups = {"open": {"active"}, "settled": {"settled"}, "closed": set(), "unopened": set()}
        items = [self._kalshi(m, now) for m in self._listed("kalshi", now)]
        if status:
            items = [i for i in items if i["status"] in groups.get(status, {status})]
        limit = int(query.get("limit") or 100)
        start = int(query.get("cursor") or 0)
        cursor = str(start + limit) if start + limit < len(items) else ""
        return _json({"markets": items[start : start + limit], "cursor": cursor})

    def kalshi_market(self, ticker: str) -> Reply:
        now = self.clock.now()
        m = self.markets.get(("kalshi", ticker))
        if m is None or m["open_at"] > now:
            return _not_found(f"market {ticker}")
        return _json({"market": self._kalshi(m, now)})

    # -- structured events
    def events_csv(self) -> Reply:
        today = self.clock.now().date()
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["date", "subject", "object", "relation", "articles", "mentions"])
        for row in self.world.structured_events:
            if row.day <= today:
                writer.writerow(
                    [
                        row.day.isoformat(),
                        row.subject,
                        row.object,
                        row.relation,
                        "|".join(row.article_urls),
                        row.mentions,
                    ]
                )
        return 200, "text/csv; charset=utf-8", out.getvalue().encode()

    def index(self) -> Reply:
        return _json(
            {
                "world": "Hindsight sample world (fictional)",
                "seed": self.world.seed,
                "size": self.world.size,
                "clock": _iso(self.clock.now()),
                "feeds": [f"/feeds/{o.slug}.rss" for o in self.world.outlets]
                + [f"/feeds/{o.slug}.atom" for o in self.world.outlets],
                "markets": ["/polymarket", "/manifold/v0", "/kalshi/trade-api/v2"],
                "events": "/events.csv",
            }
        )

    def route(self, path: str, query: dict[str, str]) -> Reply:
        parts = [p for p in path.split("/") if p]
        routes: list[tuple[Callable[[list[str]], bool], Callable[[list[str]], Reply]]] = [
            (lambda p: p == [], lambda p: self.index()),
            (lambda p: len(p) == 2 and p[0] == "feeds" and p[1].endswith(".rss"), lambda p: self.rss(p[1][:-4])),
            (lambda p: len(p) == 2 and p[0] == "feeds" and p[1].endswith(".atom"), lambda p: self.atom(p[1][:-5])),
            (lambda p: p == ["polymarket", "markets"], lambda p: self.poly_list(query, keyset=False)),
            (lambda p: p == ["polymarket", "markets", "keyset"], lambda p: self.poly_list(query, keyset=True)),
            (lambda p: len(p) == 3 and p[:2] == ["polymarket", "markets"], lambda p: self.poly_market(p[2])),
            (lambda p: p == ["polymarket", "prices-history"], lambda p: self.poly_history(query)),
            (lambda p: p == ["manifold", "v0", "markets"], lambda p: self.mani_list(query)),
            (lambda p: len(p) == 4 and p[:3] == ["manifold", "v0", "market"], lambda p: self.mani_market(p[3])),
            (lambda p: p == ["manifold", "v0", "bets"], lambda p: self.mani_bets(query)),
            (lambda p: p == ["kalshi", "trade-api", "v2", "markets"], lambda p: self.kalshi_list(query)),
            (
                lambda p: len(p) == 5 and p[:4] == ["kalshi", "trade-api", "v2", "markets"],
                lambda p: self.kalshi_market(p[4]),
            ),
            (lambda p: p == ["events.csv"], lambda p: self.events_csv()),
        ]
        for matches, handler in routes:
            if matches(parts):
                return handler(parts)
        return _not_found(path)


class _Handler(BaseHTTPRequestHandler):
    publisher: WorldPublisher
    server_version = "HindsightSampleWorld/1.0"

    def do_GET(self) -> None:
        split = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(split.query).items()}
        try:
            status, content_type, body = self.publisher.route(split.path, query)
        except (ValueError, KeyError) as exc:
            status, content_type, body = _json({"error": f"bad request: {exc}"}, status=400)
        etag = '"' + hashlib.sha1(body).hexdigest() + '"'
        if status == 200 and self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if status == 200:
            self.send_header("ETag", etag)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


class SampleWorldServer:
    """The world on 127.0.0.1:<free port>; use as a context manager or start()/stop()."""

    def __init__(self, world: World, clock: FictionalClock) -> None:
        self.publisher = WorldPublisher(world, clock)
        handler = type("SampleWorldHandler", (_Handler,), {"publisher": self.publisher})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="sample-world-server", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> SampleWorldServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def __enter__(self) -> SampleWorldServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
