"""The sample world's data model: storylines with their hidden causal graphs, the articles,
markets and structured events that report them, and the world that holds them all (pure)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Any, Literal

SAMPLE_ATTRIBUTION = "Hindsight sample world (fictional)"
SIZES: dict[str, dict[str, int]] = {
    # storylines per (track, kind); "noise" irrelevant stories per outlet
    "tiny": {"replay_rounds": 1, "live_rounds": 1, "noise": 4, "extra_live": 0},
    "small": {"replay_rounds": 1, "live_rounds": 1, "noise": 8, "extra_live": 1},
    "large": {"replay_rounds": 8, "live_rounds": 4, "noise": 40, "extra_live": 1},
}
REPLAY_KINDS = ("merger", "election", "production", "bridge", "relations", "summit")
LIVE_MARKET_KINDS = (("launch", "polymarket"), ("election", "manifold"), ("merger", "kalshi"))
# Live questions no market settles, so that a question of every type is open at the world's present.
EXTRA_LIVE_KINDS = ("production", "bridge", "summit", "relations")
Direction = Literal["Positive", "Negative", "Neutral"]


@dataclass(frozen=True)
class Actor:
    key: str
    name: str
    kind: str  # country | company | person | organisation
    code: str = ""  # countries: the real alpha-3 code used as a neutral identifier


@dataclass(frozen=True)
class HiddenEvent:
    key: str
    title: str
    description: str
    day: date
    event_type: str  # Decision | Outcome | Indicator | Milestone | ExternalShock
    direction: Direction
    magnitude: float
    confidence: float
    is_outcome: bool = False
    # Kind-specific effect: the candidate helped/hurt (election), CAMEO (subject, object, code).
    target: str = ""
    cameo: tuple[str, str, str] | None = None

    @property
    def impact(self) -> float:
        return round(self.magnitude * self.confidence, 9)

    @property
    def sign(self) -> int:
        return {"Positive": 1, "Negative": -1}.get(self.direction, 0)


@dataclass(frozen=True)
class HiddenLink:
    source: str
    target: str
    relation: str
    strength: float
    confidence: float


@dataclass
class Storyline:
    key: str
    kind: str
    track: str  # replay | live
    platform: str  # polymarket | manifold | kalshi | "" (no market)
    actors: dict[str, Actor]
    events: list[HiddenEvent]
    links: list[HiddenLink]
    outcome: Any
    question: dict[str, Any]  # question_upsert data (live: without outcome/resolved_at)
    resolved_at: datetime
    market: dict[str, Any] | None = None
    explanation: str = ""
    params: dict[str, Any] = field(default_factory=dict)  # kind-specific inputs of the outcome rule

    @property
    def outcome_event(self) -> HiddenEvent:
        return next(e for e in self.events if e.is_outcome)

    def key_events(self, top_k: int = 5) -> list[HiddenEvent]:
        """The top events by magnitude x confidence among events with an impact (the grading rule:
        ties by earlier date, then key)."""
        candidates = [e for e in self.events if not e.is_outcome and e.direction != "Neutral"]
        return sorted(candidates, key=lambda e: (-e.impact, e.day, e.key))[:top_k]


@dataclass(frozen=True)
class Outlet:
    slug: str
    name: str
    feed_format: str  # the format the sample_world command subscribes to: rss | atom

    @property
    def host(self) -> str:
        return f"{self.slug}.example"


@dataclass(frozen=True)
class ArticleItem:
    outlet: str
    url: str  # the link in the feed (syndicated copies carry tracking parameters)
    canonical_url: str
    guid: str
    title: str
    summary: str
    body: str
    author: str
    published_at: datetime | None  # None: an entry with no date (never visible as evidence)
    released_at: datetime  # when the feed starts to carry it (the clock must reach it)
    storyline: str = ""
    event: str = ""
    duplicate: bool = False


@dataclass(frozen=True)
class StructuredEventRow:
    day: date
    subject: str
    object: str
    relation: str
    article_urls: tuple[str, ...]
    mentions: int
    storyline: str


@dataclass
class World:
    seed: int
    size: str
    start: datetime
    present: datetime  # the clock's first stop for forecasting: live questions are open here
    end: datetime  # every live storyline has resolved by here
    outlets: list[Outlet]
    storylines: list[Storyline]
    articles: list[ArticleItem]
    structured_events: list[StructuredEventRow]
    markets: list[dict[str, Any]]  # every market on every platform (storylines and filler)
    checkpoints: list[datetime]  # clock stops for polling before ``present``

    def storyline(self, key: str) -> Storyline:
        return next(s for s in self.storylines if s.key == key)

    def articles_of_event(self, storyline: str, event: str) -> list[ArticleItem]:
        return [a for a in self.articles if a.storyline == storyline and a.event == event and not a.duplicate]

    def visible_articles(self, at: datetime) -> list[ArticleItem]:
        return [a for a in self.articles if a.released_at <= at]


def noon(day: date) -> datetime:
    return datetime.combine(day, time(12, 0), tzinfo=UTC)


def midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def slug(text: str) -> str:
    out = "".join(c.lower() if c.isalnum() else "-" for c in text)
    while "--" in out:
        out = out.replace("--", "-")
    return out.strip("-")[:80]


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))
