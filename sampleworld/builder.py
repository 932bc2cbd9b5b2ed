"""The machinery a sample world is built with: timelines and hidden events, question data, the
markets that move with a storyline, and the news that reports it (``sampleworld.stories`` adds the
storylines themselves)."""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sampleworld.beats import Beat
from sampleworld.vocabulary import FIRST_NAMES, HEADLINE_STYLES, LAST_NAMES, OUTLETS, Names
from sampleworld.world import (
    REPLAY_KINDS,
    SAMPLE_ATTRIBUTION,
    SIZES,
    ArticleItem,
    Direction,
    HiddenEvent,
    HiddenLink,
    Outlet,
    Storyline,
    StructuredEventRow,
    midnight,
    noon,
    sigmoid,
    slug,
)


class WorldBuilder:
    """The state of a world being built (one seeded random generator drives every choice, so the
    order of the calls is part of the world) and the steps every storyline shares."""

    def __init__(self, *, size: str, seed: int, end: datetime) -> None:
        if size not in SIZES:
            raise ValueError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
        if end.tzinfo is None:
            raise ValueError("end must be an aware datetime")
        self.size = size
        self.seed = seed
        self.params = SIZES[size]
        self.rng = random.Random(f"hindsight-sample-world:{seed}")
        self.names = Names(self.rng)
        self.end = end.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        self.end_day = self.end.date() - timedelta(days=1)
        self.live_days = 34
        self.present_day = self.end_day - timedelta(days=self.live_days // 2)
        rounds = self.params["replay_rounds"]
        self.replay_span = 46
        self.start_day = self.present_day - timedelta(days=self.live_days // 2 + 2 + self.replay_span * rounds)
        self.outlets = [Outlet(slug=s, name=n, feed_format=f) for s, n, f in OUTLETS]
        self.storylines: list[Storyline] = []
        self.articles: list[ArticleItem] = []
        self.structured: list[StructuredEventRow] = []
        self.markets: list[dict[str, Any]] = []
        self.counter = 0

    # -- timelines
    def _days(self, first: date, n: int, span: int) -> list[date]:
        """n increasing days from ``first`` spread over about ``span`` days."""
        picks = sorted(self.rng.sample(range(1, span), n - 1))
        return [first, *(first + timedelta(days=p) for p in picks)]

    def _qid(self, key: str) -> str:
        return f"sample:{self.seed}:{key}"

    def _mag(self) -> float:
        return round(self.rng.uniform(0.3, 0.9), 2)

    def _conf(self) -> float:
        return round(self.rng.uniform(0.6, 0.95), 2)

    def _binary_events(self, key: str, beats: list[Beat], days: list[date], bias: float) -> list[HiddenEvent]:
        events = []
        for i, (beat, day) in enumerate(zip(beats, days, strict=False)):
            if beat.neutral:
                direction: Direction = "Neutral"
                title = beat.positive
                magnitude = round(self.rng.uniform(0.1, 0.3), 2)
            elif not beat.negative:
                direction, title, magnitude = "Positive", beat.positive, self._mag()
            else:
                positive = self.rng.random() < bias
                direction = "Positive" if positive else "Negative"
                title = beat.positive if positive else beat.negative
                magnitude = self._mag()
            events.append(
                HiddenEvent(
                    key=f"{key}-e{i + 1:02d}",
                    title=title,
                    description=f"{title}. {beat.description}",
                    day=day,
                    event_type=beat.event_type,
                    direction=direction,
                    magnitude=magnitude,
                    confidence=self._conf(),
                )
            )
        return events

    def _links(self, events: list[HiddenEvent]) -> list[HiddenLink]:
        outcome = next(e for e in events if e.is_outcome)
        links = []
        ordered = [e for e in events if not e.is_outcome]
        for prev, nxt in itertools.pairwise(ordered):
            if prev.direction != "Neutral" and nxt.direction != "Neutral":
                links.append(HiddenLink(prev.key, nxt.key, "Enables", 0.3 + prev.magnitude * 0.5, prev.confidence))
        for e in ordered:
            if e.direction == "Neutral":
                continue
            relation = "Causes" if e.sign > 0 else "Inhibits"
            links.append(HiddenLink(e.key, outcome.key, relation, e.sign * e.magnitude, e.confidence))
        return links

    def _window(self, track: str, index: int) -> tuple[date, int]:
        """First day and span of a storyline's events."""
        if track == "live":
            return self.present_day - timedelta(days=self.live_days // 2), self.live_days
        # Storylines of one round start three days apart, so their news does not all land at once.
        slot = (self.counter - 1) % len(REPLAY_KINDS)
        return self.start_day + timedelta(days=index * self.replay_span + slot * 3), 26

    def _common(
        self,
        key: str,
        track: str,
        title: str,
        qtype: str,
        domain: str,
        criteria: str,
        background: str,
        open_at: datetime,
        resolved_at: datetime,
    ) -> dict[str, Any]:
        data: dict[str, Any] = {
            "external_id": self._qid(key),
            "title": f"{title} (fictional)",
            "type": qtype,
            "track": track,
            "open_at": open_at.isoformat(),
            "close_at": ((self.end + timedelta(days=7)).isoformat() if track == "live" else resolved_at.isoformat()),
            "resolve_by": (self.end + timedelta(days=7)).isoformat() if track == "live" else resolved_at.isoformat(),
            "resolution_criteria": criteria,
            "background": f"{background} This question belongs to Hindsight's fictional sample world: "
            "every name, outlet and event in it is invented.",
            "domain": domain,
            "origin": "sample",
            "attribution": {"source": SAMPLE_ATTRIBUTION, "seed": self.seed, "storyline": key},
        }
        return data

    # -- markets
    def _market(
        self, story: Storyline, title: str, outcomes: list[str], support_events: list[HiddenEvent] | None = None
    ) -> dict[str, Any]:
        """A market on the storyline: daily prices from the pressure so far, settling on the outcome."""
        n = len(self.markets) + 1
        platform = story.platform
        ext = {
            "polymarket": f"{700000 + self.seed * 100 + n}",
            "manifold": f"sw{self.seed}m{n:03d}",
            "kalshi": f"SW{self.seed}-{story.key.upper()}",
        }[platform]
        opened = midnight(story.events[0].day)
        settle = story.resolved_at
        path: list[tuple[datetime, dict[str, float]]] = []
        day = story.events[0].day
        while noon(day) < settle:
            seen = [e for e in (support_events or story.events) if e.day <= day and not e.is_outcome]
            if len(outcomes) == 2 and outcomes == ["Yes", "No"]:
                pressure = sum(e.sign * e.magnitude * e.confidence for e in seen)
                wobble = self.rng.uniform(-0.04, 0.04)
                p = min(0.97, max(0.03, sigmoid(1.6 * pressure) + wobble))
                path.append((noon(day), {"Yes": round(p, 3), "No": round(1 - p, 3)}))
            else:
                scores = dict.fromkeys(outcomes, 0.0)
                for e in seen:
                    cand, sign = e.target.rsplit(":", 1)
                    scores[cand] += int(sign) * e.magnitude * e.confidence
                weights = {o: math.exp(1.5 * s) for o, s in scores.items()}
                total = sum(weights.values())
                probs = {o: round(w / total, 3) for o, w in weights.items()}
                drift = round(1.0 - sum(probs.values()), 3)
                probs[outcomes[0]] = round(probs[outcomes[0]] + drift, 3)
                path.append((noon(day), probs))
            day += timedelta(days=1)
        winner = ("Yes" if story.outcome else "No") if outcomes == ["Yes", "No"] else str(story.outcome)
        market = {
            "platform": platform,
            "external_id": ext,
            "title": f"{title} (fictional)",
            "outcomes": outcomes,
            "open_at": opened,
            "close_at": self.end + timedelta(days=7),
            "settle_at": settle,
            "winner": winner,
            "path": path,
            "liquidity": float(self.rng.randrange(2000, 20000)),
            "volume": float(self.rng.randrange(5000, 90000)),
            "bettors": self.rng.randrange(40, 400),
            "storyline": story.key,
            "description": f"{story.question['resolution_criteria']} Sample-world market (fictional).",
        }
        self.markets.append(market)
        return market

    def _filler_markets(self) -> None:
        """Thin markets that the sources' min_liquidity filter leaves out (no question)."""
        for platform in ("polymarket", "manifold", "kalshi"):
            n = len(self.markets) + 1
            ext = {
                "polymarket": f"{700000 + self.seed * 100 + n}",
                "manifold": f"sw{self.seed}m{n:03d}",
                "kalshi": f"SW{self.seed}-THIN{n}",
            }[platform]
            first = self.present_day - timedelta(days=10)
            path = [
                (noon(first + timedelta(days=d)), {"Yes": p, "No": round(1 - p, 3)})
                for d, p in enumerate(round(self.rng.uniform(0.2, 0.8), 3) for _ in range(10))
            ]
            self.markets.append(
                {
                    "platform": platform,
                    "external_id": ext,
                    "title": f"Will the {self.names.city()} regatta be held this year? (fictional, thin market)",
                    "outcomes": ["Yes", "No"],
                    "open_at": midnight(first),
                    "close_at": self.end + timedelta(days=7),
                    "settle_at": None,
                    "winner": None,
                    "path": path,
                    "liquidity": 12.0,
                    "volume": 30.0,
                    "bettors": 2,
                    "storyline": "",
                    "description": "A thin sample-world market (fictional).",
                }
            )

    # -- news
    def _report(self, story: Storyline, event: HiddenEvent) -> None:
        key_keys = {e.key for e in story.key_events()}
        n = 3 if (event.key in key_keys or event.is_outcome) else 2
        if event.is_outcome and story.kind == "summit":
            return  # the summit's outcome node is the aftermath as a whole, not a reported event
        outlets = self.rng.sample(self.outlets, n)
        for rank, outlet in enumerate(outlets):
            style = HEADLINE_STYLES[self.rng.randrange(len(HEADLINE_STYLES))] if rank else HEADLINE_STYLES[0]
            lag = timedelta(days=1) if rank == 2 else timedelta(0)
            published = (
                midnight(event.day) + lag + timedelta(hours=self.rng.randrange(6, 21), minutes=self.rng.randrange(60))
            )
            if event.is_outcome:
                published = max(published, story.resolved_at - timedelta(hours=1) + timedelta(minutes=10 * rank))
                if story.kind == "relations":
                    published = midnight(event.day) + timedelta(hours=8 + rank)
            title = style(event.title)
            context = story.question["background"].split(" This question belongs")[0]
            summary = f"{event.title}. {event.description.split('. ', 1)[-1]}"
            body = (
                f"{summary} {context} "
                f"{outlet.name.replace(' (fictional)', '')} reporters followed the story on {event.day:%d %B %Y}."
            )
            self._article(outlet, title, summary, body, published, story.key, event.key)

    def _article(
        self,
        outlet: Outlet,
        title: str,
        summary: str,
        body: str,
        published: datetime | None,
        storyline: str,
        event: str,
        author: str = "",
    ) -> ArticleItem:
        stamp = (published or noon(self.end_day)).strftime("%Y/%m/%d")
        digest = hashlib.sha1(f"{outlet.slug}|{title}|{stamp}".encode()).hexdigest()[:6]
        url = f"https://{outlet.host}/{stamp}/{slug(title)}-{digest}"
        item = ArticleItem(
            outlet=outlet.slug,
            url=url,
            canonical_url=url,
            guid=url,
            title=title,
            summary=summary,
            body=body,
            author=author or f"{self.names.rng.choice(FIRST_NAMES)} {self.names.rng.choice(LAST_NAMES)}",
            published_at=published,
            released_at=published or noon(self.start_day),
            storyline=storyline,
            event=event,
        )
        self.articles.append(item)
        return item

    def _noise(self) -> None:
        topics = (
            "{city} council approves new cycle lanes",
            "Heatwave expected across {city} this weekend",
            "{city} marathon draws record crowd",
            "{city} library reopens after renovation",
            "Local bakery in {city} wins regional prize",
            "{city} ferry timetable changes next month",
            "Museum in {city} unveils restored tapestry",
            "{city} schools report strong exam results",
        )
        total_days = (self.end_day - self.start_day).days
        for outlet in self.outlets:
            for _ in range(self.params["noise"]):
                city = self.names.city()
                title = self.rng.choice(topics).format(city=city)
                day = self.start_day + timedelta(days=self.rng.randrange(total_days))
                published = midnight(day) + timedelta(hours=self.rng.randrange(6, 22))
                body = f"{title}. Residents of {city} reacted to the news. Local officials gave details."
                self._article(outlet, title, f"{title}.", body, published, "", "")
            # An entry without a date: stored, never visible as evidence.
            city = self.names.city()
            title = f"{city} weekly letters to the editor"
            self._article(outlet, title, f"{title}.", f"{title}. Readers wrote in.", None, "", "")

    def _duplicates(self) -> None:
        """Syndicated copies: another outlet carries a story verbatim with tracking parameters."""
        reports = [a for a in self.articles if a.event and a.published_at is not None]
        for original in self.rng.sample(reports, max(1, len(reports) // 12)):
            other = self.rng.choice([o for o in self.outlets if o.slug != original.outlet])
            self.articles.append(
                ArticleItem(
                    outlet=other.slug,
                    url=f"{original.url}?utm_source=syndication&utm_medium=rss",
                    canonical_url=original.canonical_url,
                    guid=f"{original.url}#syndicated-{other.slug}",
                    title=original.title,
                    summary=original.summary,
                    body=original.body,
                    author=original.author,
                    published_at=original.published_at,
                    released_at=original.released_at,
                    storyline=original.storyline,
                    event=original.event,
                    duplicate=True,
                )
            )

    def _structured(self, story: Storyline) -> None:
        for event in story.events:
            if event.cameo is None:
                continue
            urls = tuple(a.canonical_url for a in self.articles if a.event == event.key and not a.duplicate)
            s, o, code = event.cameo
            self.structured.append(
                StructuredEventRow(event.day, s, o, code, urls, self.rng.randrange(120, 900), story.key)
            )
