"""A seeded generator of Hindsight's sample world: fictional, internally consistent, fully known.

Everything is invented: companies, people, regulators, outlets and the events. Countries have
invented names; each is tied to a real ISO 3166-1 alpha-3 code used only as a neutral identifier,
because relation questions and structured events must carry valid codes. Every question title ends
with "(fictional)", every outlet and market says so, and question records carry origin ``sample``
and the attribution ``Hindsight sample world (fictional)``.

The world is a set of *storylines*. Each has a hidden ground-truth causal event graph: dated events
with an impact on the outcome (direction, magnitude, confidence), causal links, and one outcome
event. The outcome of the storyline's question follows from the graph by a rule stated per kind:

* ``merger`` / ``launch`` (binary): yes when the causal pressure sum(d * m * c) over the events is
  positive (d = +1 for Positive, -1 for Negative).
* ``election`` (multiple choice): the candidate with the largest support, each event adding
  s * m * c to the candidate it concerns (s = +1 helps, -1 hurts).
* ``production`` (quantity): base * prod(1 + 0.12 * d * m) rounded to whole units.
* ``bridge`` (timeframe, month): planned opening shifted by sum(-d * round(4 m)) weeks; the opening
  day is the outcome event, its month the outcome.
* ``relations`` (MIRAI relation): the sign of the tension sum over CAMEO-coded events decides
  whether the relations on the target day are cooperative or conflictual; the gold answer is the
  set of codes of the target day's events.
* ``summit`` (open-ended): the gold events are the titles of the events after the question's
  cut-off; the background events are those before it.

News articles report the events on their dates (two or three outlets each, with headline
variants, a day's lag for some outlets, syndicated duplicates, undated entries and irrelevant
stories); markets on live storylines move with the causal pressure and settle on the outcome.

No Django imports: the generator is pure and deterministic for a given (size, seed, end).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
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
EXTRA_LIVE_KINDS = ("production", "bridge", "summit")
Direction = Literal["Positive", "Negative", "Neutral"]

# Invented names. Countries pair an invented name with a real alpha-3 code (a neutral identifier).
COUNTRIES = (
    ("Arvenia", "ISL"),
    ("Belmora", "URY"),
    ("Castrel", "FJI"),
    ("Dovania", "NZL"),
    ("Elsmark", "MLT"),
    ("Ferrona", "LUX"),
    ("Galdria", "EST"),
    ("Hespera", "BWA"),
)
COMPANY_STEMS = [
    "Halvard",
    "Corvane",
    "Lumora",
    "Tessaly",
    "Quillon",
    "Vantor",
    "Orrin",
    "Kestrel",
    "Maribel",
    "Dunmore",
    "Pellucid",
    "Ardent",
    "Solenne",
    "Grayhaven",
    "Wrenfield",
    "Osmara",
    "Calloway",
    "Brisk",
    "Tamsin",
    "Everin",
]
COMPANY_TRADES = ("Motors", "Foods", "Aerospace", "Energy", "Rail", "Pharma", "Mining", "Telecom", "Steel", "Systems")
FIRST_NAMES = [
    "Mara",
    "Tomas",
    "Ilse",
    "Joren",
    "Anika",
    "Dario",
    "Lena",
    "Piet",
    "Sefa",
    "Rhea",
    "Oskar",
    "Nadia",
    "Kaito",
    "Yelena",
    "Bram",
    "Ottilie",
]
LAST_NAMES = [
    "Reyvik",
    "Varga",
    "Pell",
    "Solberg",
    "Menz",
    "Haruki",
    "Castellan",
    "Wendt",
    "Ferro",
    "Idowu",
    "Lindqvist",
    "Marsh",
    "Okafor",
    "Brandt",
]
CITIES = [
    "Port Calder",
    "Velmont",
    "Ashby Cross",
    "Saltmere",
    "Orvale",
    "Kilbride",
    "Norrhaven",
    "Tarrow",
    "Emberly",
    "Quayside",
]
OUTLETS = (
    ("meridian-ledger", "The Meridian Ledger (fictional)", "rss"),
    ("harbor-wire", "Harbor Wire (fictional)", "atom"),
    ("northgate-courier", "Northgate Courier (fictional)", "rss"),
    ("orbis-daily", "Orbis Daily (fictional)", "atom"),
    ("tidewater-times", "Tidewater Times (fictional)", "rss"),
)
HEADLINE_STYLES: tuple[Callable[[str], str], ...] = (
    lambda h: h,
    lambda h: f"{h}, sources say",
    lambda h: f"Update: {h}",
    lambda h: f"{h} - analysis",
    lambda h: f"Breaking: {h}",
)
COOPERATIVE_CODES = ("036", "042", "043", "046", "051", "057", "061", "071")
CONFLICT_CODES = ("111", "112", "128", "130", "138", "163", "173")
CAMEO_PHRASES = {
    "036": "{s} says it is ready to negotiate with {o}",
    "042": "{s} foreign minister visits {o}",
    "043": "{s} hosts delegation from {o}",
    "046": "{s} and {o} hold talks on river water sharing",
    "051": "{s} praises {o} cooperation on border crossings",
    "057": "{s} signs water-sharing accord with {o}",
    "061": "{s} and {o} launch joint port investment",
    "071": "{s} provides drought aid to {o}",
    "111": "{s} denounces {o} dam plans",
    "112": "{s} accuses {o} of diverting river water",
    "128": "{s} defies {o} demand to halt dam works",
    "130": "{s} threatens {o} over river dispute",
    "138": "{s} threatens military response to {o} dam",
    "163": "{s} imposes trade sanctions on {o}",
    "173": "{s} detains {o} engineers near border",
}


# ----------------------------------------------------------------------------------------- model


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


# ----------------------------------------------------------------------------------------- helpers


def _noon(day: date) -> datetime:
    return datetime.combine(day, time(12, 0), tzinfo=UTC)


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _slug(text: str) -> str:
    out = "".join(c.lower() if c.isalnum() else "-" for c in text)
    while "--" in out:
        out = out.replace("--", "-")
    return out.strip("-")[:80]


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


class _Names:
    """Draws invented names without repeating them within one world."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.companies = [f"{s} {t}" for s in COMPANY_STEMS for t in COMPANY_TRADES]
        rng.shuffle(self.companies)
        self.people = [f"{f} {last}" for f in FIRST_NAMES for last in LAST_NAMES]
        rng.shuffle(self.people)
        self.countries = list(COUNTRIES)
        rng.shuffle(self.countries)
        self.country_pairs = [(a, b) for a in COUNTRIES for b in COUNTRIES if a != b]
        rng.shuffle(self.country_pairs)
        self.cities = list(CITIES)
        self.used_stems: set[str] = set()

    def company(self) -> str:
        # One company per stem, so two storylines never share a distinctive word.
        while True:
            name = self.companies.pop()
            stem = name.split()[0]
            if stem not in self.used_stems or not self.companies:
                self.used_stems.add(stem)
                return name

    def person(self) -> str:
        return self.people.pop()

    def country(self) -> tuple[str, str]:
        if not self.countries:
            self.countries = list(COUNTRIES)
            self.rng.shuffle(self.countries)
        return self.countries.pop()

    def country_pair(self) -> tuple[tuple[str, str], tuple[str, str]]:
        return self.country_pairs.pop()

    def city(self) -> str:
        return self.rng.choice(self.cities)


@dataclass
class _Beat:
    positive: str
    negative: str
    description: str
    event_type: str
    neutral: bool = False


# ----------------------------------------------------------------------------------------- kinds


def _merger_beats(a: str, b: str, reg: str, rival: str, ceo: str) -> list[_Beat]:
    return [
        _Beat(f"{a} agrees to buy {b} in all-share deal", "", f"{a} and {b} boards agreed terms.", "Decision"),
        _Beat(f"{reg} opens review of {a} takeover of {b}", "", f"{reg} began its merger review.", "Milestone", True),
        _Beat(
            f"{b} shareholders approve {a} takeover",
            f"{b} shareholders reject {a} takeover terms",
            f"{b} investors voted on the offer from {a}.",
            "Decision",
        ),
        _Beat(
            f"Unions back {a} plan to keep {b} plants open",
            f"Unions oppose {a} plan to close {b} plants",
            f"Workers at {b} reacted to the integration plan of {a}.",
            "Indicator",
        ),
        _Beat(
            f"{a} offers to sell overlapping {b} brands to win approval",
            f"{a} refuses to sell overlapping {b} brands",
            f"Remedies for the {a} {b} merger were discussed.",
            "Decision",
        ),
        _Beat(
            f"Rival {rival} drops objection to {a} {b} merger",
            f"Rival {rival} files complaint against {a} {b} merger",
            f"{rival} set out its position on the combination.",
            "Decision",
        ),
        _Beat(
            f"{reg} economists find limited harm in {a} {b} deal",
            f"{reg} economists warn {a} {b} deal would raise prices",
            f"An economic assessment of the {a} {b} deal was published.",
            "Indicator",
        ),
        _Beat(
            f"Consumer groups endorse {a} remedies for {b} deal",
            f"Consumer groups urge {reg} to block {a} {b} deal",
            "Consumer associations weighed in on the merger.",
            "Indicator",
        ),
        _Beat(
            f"{ceo} says {a} {b} integration plan is on track",
            f"{ceo} warns {a} {b} deal faces delay",
            f"{ceo}, chief executive of {a}, spoke about the timetable.",
            "Indicator",
        ),
        _Beat(
            f"{reg} hearing on {a} {b} merger ends with agreement on remedies",
            f"{reg} hearing on {a} {b} merger ends without agreement",
            f"The final hearing on the {a} {b} case closed.",
            "Milestone",
        ),
        _Beat(
            f"Lenders secure financing for {a} {b} combination",
            f"Lenders withdraw financing for {a} {b} combination",
            f"Banks decided on the loans for the {a} {b} deal.",
            "Decision",
        ),
    ]


def _launch_beats(a: str, craft: str, site: str, engineer: str) -> list[_Beat]:
    return [
        _Beat(f"{a} unveils {craft} satellite for orbit", "", f"{a} presented the {craft} mission.", "Decision"),
        _Beat(
            f"{a} completes {craft} thermal vacuum test",
            f"{a} {craft} fails thermal vacuum test",
            f"The {craft} spacecraft went through environmental testing.",
            "Milestone",
        ),
        _Beat(
            f"Regulator grants {a} launch licence for {craft}",
            f"Regulator delays {a} launch licence for {craft}",
            f"The licence decision for the {craft} mission was issued.",
            "Decision",
        ),
        _Beat(
            f"{craft} rocket arrives at {site} pad",
            f"{craft} rocket shipment to {site} stalled by strike",
            f"Transport of the {craft} launcher to {site} was reported.",
            "Milestone",
        ),
        _Beat(
            f"{engineer} confirms {craft} software cleared",
            f"{engineer} reports {craft} software fault",
            f"{engineer}, {a}'s mission lead, briefed reporters on {craft}.",
            "Indicator",
        ),
        _Beat(
            f"Insurers back {a} {craft} mission",
            f"Insurers withdraw cover for {a} {craft} mission",
            f"Underwriters reviewed the {craft} policy.",
            "Decision",
        ),
        _Beat(
            f"{a} {craft} wet dress rehearsal succeeds at {site}",
            f"{a} {craft} wet dress rehearsal halted at {site}",
            f"A fuelling rehearsal of {craft} took place at {site}.",
            "Milestone",
        ),
        _Beat(
            f"Weather forecast clears {craft} launch window at {site}",
            f"Storm forecast threatens {craft} launch window at {site}",
            f"Meteorologists issued the outlook for the {craft} window.",
            "ExternalShock",
        ),
        _Beat(
            f"{a} secures second ground station for {craft}",
            f"{a} loses ground station contract for {craft}",
            f"Ground segment arrangements for {craft} changed.",
            "Decision",
        ),
        _Beat(
            f"{craft} launch readiness review passes",
            f"{craft} launch readiness review postponed",
            f"The readiness board met on {craft}.",
            "Milestone",
        ),
        _Beat(
            f"{a} investors approve extra funding for {craft}",
            f"{a} investors reject extra funding for {craft}",
            f"Shareholders of {a} voted on funds for {craft}.",
            "Decision",
        ),
    ]


def _production_beats(a: str, city: str, model: str) -> list[_Beat]:
    return [
        _Beat(f"{a} sets {model} delivery target", "", f"{a} announced its quarterly {model} plan.", "Decision", True),
        _Beat(
            f"{a} opens second {model} assembly line in {city}",
            f"{a} postpones second {model} assembly line in {city}",
            f"Capacity plans at the {city} plant of {a} changed.",
            "Milestone",
        ),
        _Beat(
            f"{a} secures battery supply deal for {model}",
            f"Battery shortage slows {a} {model} output",
            f"Battery supplies for the {model} were reported.",
            "ExternalShock",
        ),
        _Beat(
            f"{a} {city} workers accept pay offer",
            f"Strike halts {a} {city} plant",
            f"Labour talks at the {city} factory of {a} concluded.",
            "Decision",
        ),
        _Beat(
            f"{model} orders surge after price cut",
            f"{model} orders drop after price rise",
            f"Demand for the {model} shifted.",
            "Indicator",
        ),
        _Beat(
            f"{a} clears {model} software recall quickly",
            f"{a} recall stalls {model} deliveries",
            f"A {model} software recall was handled by {a}.",
            "Decision",
        ),
        _Beat(
            f"Port of {city} reopens for {a} shipments",
            f"Port of {city} closure blocks {a} shipments",
            f"Shipping from {city} affected {a} logistics.",
            "ExternalShock",
        ),
        _Beat(
            f"{a} adds night shift for {model}",
            f"{a} cuts night shift for {model}",
            f"Shift patterns for {model} production changed.",
            "Decision",
        ),
        _Beat(
            f"Suppliers deliver {model} chips ahead of schedule",
            f"Chip supplier delays {model} components",
            f"Semiconductor deliveries for the {model} were reported.",
            "Indicator",
        ),
        _Beat(
            f"{a} {model} passes safety certification",
            f"{a} {model} certification delayed",
            f"Safety certification of the {model} was decided.",
            "Milestone",
        ),
        _Beat(
            f"Fleet buyer signs large {model} order with {a}",
            f"Fleet buyer cancels {model} order with {a}",
            f"A fleet contract for the {model} changed.",
            "Decision",
        ),
    ]


def _bridge_beats(bridge: str, city: str, builder: str) -> list[_Beat]:
    return [
        _Beat(
            f"{city} confirms {bridge} opening plan", "", f"{city} officials set a date for {bridge}.", "Decision", True
        ),
        _Beat(
            f"Crews finish {bridge} deck ahead of schedule",
            f"Cracks delay {bridge} deck pour",
            f"Deck works on {bridge} were reported by {builder}.",
            "Milestone",
        ),
        _Beat(
            f"{builder} adds crews to {bridge} works",
            f"{builder} workers strike at {bridge} site",
            f"Staffing at the {bridge} site changed.",
            "Decision",
        ),
        _Beat(
            f"Steel cables for {bridge} arrive early",
            f"Steel cable shipment for {bridge} delayed",
            f"Cable supplies for {bridge} were reported.",
            "ExternalShock",
        ),
        _Beat(
            f"{bridge} load test passes",
            f"{bridge} load test fails",
            f"Engineers ran a load test on {bridge}.",
            "Milestone",
        ),
        _Beat(
            f"{city} council approves extra {bridge} funding",
            f"{city} council rejects extra {bridge} funding",
            f"The council voted on {bridge} finances.",
            "Decision",
        ),
        _Beat(
            f"Inspectors clear {bridge} lighting and barriers",
            f"Inspectors halt {bridge} works over barriers",
            f"Safety inspectors visited {bridge}.",
            "Indicator",
        ),
        _Beat(
            f"Mild weather speeds {bridge} paving",
            f"Flood halts {bridge} paving",
            f"Weather affected paving on {bridge}.",
            "ExternalShock",
        ),
        _Beat(
            f"{builder} completes {bridge} approach roads",
            f"{builder} misses {bridge} approach roads milestone",
            f"Approach roads to {bridge} were reported.",
            "Milestone",
        ),
        _Beat(
            f"Court dismisses residents' challenge to {bridge}",
            f"Court suspends {bridge} works after residents' challenge",
            f"A legal challenge to {bridge} was decided.",
            "Decision",
        ),
    ]


def _election_beats(country: str, cands: list[str], party: str, city: str) -> list[tuple[str, str, str, int]]:
    """(title template with {c}, description, type, sign): sign +1 helps {c}, -1 hurts."""
    return [
        (
            "{c} wins endorsement of " + country + " farmers union",
            "A union endorsement in the campaign.",
            "Decision",
            1,
        ),
        ("{c} leads new " + country + " opinion poll", "A national poll was published.", "Indicator", 1),
        ("{c} wins televised debate in " + country, "Candidates met in a televised debate.", "Milestone", 1),
        ("{c} campaign hit by funding scandal", "Campaign finance questions emerged.", "ExternalShock", -1),
        ("{c} secures backing of " + party, f"{party} chose whom to support.", "Decision", 1),
        ("{c} draws record crowd in " + city, "A large rally took place.", "Indicator", 1),
        ("Regional governors endorse {c}", "Governors declared support.", "Decision", 1),
        ("{c} slips in final " + country + " poll", "The last poll before the vote was released.", "Indicator", -1),
        ("{c} gaffe on pensions draws criticism", "A remark on pensions caused a row.", "ExternalShock", -1),
        ("{c} gains in " + country + " youth survey", "A survey of young voters was published.", "Indicator", 1),
        ("Trade unions endorse {c} for president", "Unions announced their choice.", "Decision", 1),
    ]


def _summit_beats(x: str, y: str, river: str) -> list[_Beat]:
    return [
        _Beat(f"{x} and {y} agree to hold {river} summit", "", f"{x} and {y} announced a summit.", "Decision"),
        _Beat(f"Drought lowers {river} to record low", "", f"The {river} fell sharply.", "ExternalShock", True),
        _Beat(f"{x} farmers protest {river} water cuts", "", f"Farmers in {x} protested.", "Indicator", True),
        _Beat(f"{y} engineers publish {river} dam study", "", f"A dam study in {y} was published.", "Indicator", True),
        _Beat(f"{x} {y} {river} summit opens in border town", "", "The summit opened.", "Milestone"),
        _Beat(
            f"{x} and {y} sign {river} water quota deal",
            f"{x} and {y} fail to agree {river} water quotas",
            "Negotiators decided on quotas.",
            "Decision",
        ),
        _Beat(
            f"{x} and {y} create joint {river} commission",
            f"{y} walks out of {river} commission talks",
            "A commission was discussed.",
            "Decision",
        ),
        _Beat(
            f"{y} opens {river} dam gates for {x} farmers",
            f"{y} keeps {river} dam gates closed",
            "Dam operations were decided.",
            "Decision",
        ),
        _Beat(
            f"World bank pledges {river} irrigation loans",
            f"Lenders suspend {river} irrigation loans",
            "International lenders decided on irrigation finance.",
            "Decision",
        ),
        _Beat(
            f"{x} lifts tariffs on {y} grain after {river} deal",
            f"{x} raises tariffs on {y} grain in {river} row",
            "Trade measures followed the summit.",
            "Decision",
        ),
        _Beat(
            f"{x} {y} border reopens for {river} traders",
            f"{x} {y} border closes to {river} traders",
            "Border crossings were affected.",
            "Milestone",
        ),
    ]


# ----------------------------------------------------------------------------------------- builder


class _Builder:
    def __init__(self, *, size: str, seed: int, end: datetime) -> None:
        if size not in SIZES:
            raise ValueError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
        if end.tzinfo is None:
            raise ValueError("end must be an aware datetime")
        self.size = size
        self.seed = seed
        self.params = SIZES[size]
        self.rng = random.Random(f"hindsight-sample-world:{seed}")
        self.names = _Names(self.rng)
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

    def _binary_events(self, key: str, beats: list[_Beat], days: list[date], bias: float) -> list[HiddenEvent]:
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

    # -- storylines by kind
    def add(self, kind: str, track: str, platform: str, index: int) -> None:
        self.counter += 1
        key = f"{kind}-{track}-{self.counter:02d}"
        first, span = self._window(track, index)
        getattr(self, f"_story_{kind}")(key, track, platform, first, span)

    def _finish_binary(
        self,
        key: str,
        track: str,
        platform: str,
        events: list[HiddenEvent],
        outcome_titles: tuple[str, str],
        title: str,
        criteria: str,
        background: str,
        domain: str,
        actors: dict[str, Actor],
        outcome_day: date,
        market_title: str,
    ) -> None:
        pressure = sum(e.sign * e.magnitude * e.confidence for e in events)
        outcome = pressure > 0
        o_title = outcome_titles[0] if outcome else outcome_titles[1]
        events.append(
            HiddenEvent(
                key=f"{key}-outcome",
                title=o_title,
                description=f"{o_title}.",
                day=outcome_day,
                event_type="Outcome",
                direction="Positive" if outcome else "Negative",
                magnitude=1.0,
                confidence=1.0,
                is_outcome=True,
            )
        )
        resolved_at = _noon(outcome_day) + timedelta(hours=2)
        open_at = _midnight(events[0].day)
        q = self._common(key, track, title, "binary", domain, criteria, background, open_at, resolved_at)
        kind = key.split("-")[0]
        story = Storyline(key, kind, track, platform, actors, events, self._links(events), outcome, q, resolved_at)
        story.explanation = f"Causal pressure {pressure:+.2f}: " + ("yes." if outcome else "no.")
        if platform:
            story.market = self._market(story, market_title, ["Yes", "No"])
        self.storylines.append(story)

    def _story_merger(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        a, b, rival = self.names.company(), self.names.company(), self.names.company()
        country, _ = self.names.country()
        reg = f"{country} Competition Bureau"
        ceo = self.names.person()
        beats = _merger_beats(a, b, reg, rival, ceo)
        days = self._days(first, len(beats) + 1, span)
        bias = self.rng.choice((0.3, 0.7))
        events = self._binary_events(key, beats, days[:-1], bias)
        actors = {
            "acquirer": Actor("acquirer", a, "company"),
            "target": Actor("target", b, "company"),
            "regulator": Actor("regulator", reg, "organisation"),
            "rival": Actor("rival", rival, "company"),
            "ceo": Actor("ceo", ceo, "person"),
        }
        deadline = days[-1] + timedelta(days=3)
        self._finish_binary(
            key,
            track,
            platform,
            events,
            (f"{reg} approves {a} takeover of {b}", f"{reg} blocks {a} takeover of {b}"),
            f"Will the {reg} approve {a}'s takeover of {b} by {deadline:%d %B %Y}?",
            f"Yes if the {reg} clears the takeover of {b} by {a} (with or without remedies) by "
            f"{deadline:%d %B %Y}; no if it blocks it or has not decided by then.",
            f"{a} agreed to buy {b}. Competition authorities in {country} must clear the deal.",
            "business",
            actors,
            days[-1],
            f"{reg} approves {a}-{b} merger?",
        )

    def _story_launch(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        a = self.names.company()
        craft = self.rng.choice(("Skylark", "Heron", "Aurora", "Kite", "Meridian", "Lyra")) + f"-{self.counter}"
        site = self.names.city()
        engineer = self.names.person()
        beats = _launch_beats(a, craft, site, engineer)
        days = self._days(first, len(beats) + 1, span)
        events = self._binary_events(key, beats, days[:-1], self.rng.choice((0.3, 0.7)))
        actors = {"company": Actor("company", a, "company"), "engineer": Actor("engineer", engineer, "person")}
        deadline = days[-1] + timedelta(days=3)
        self._finish_binary(
            key,
            track,
            platform,
            events,
            (f"{a} launches {craft} satellite from {site}", f"{a} scrubs {craft} launch from {site}"),
            f"Will {a} launch the {craft} satellite from {site} by {deadline:%d %B %Y}?",
            f"Yes if {craft} lifts off from {site} by {deadline:%d %B %Y}; no otherwise.",
            f"{a} is preparing its {craft} satellite for launch from {site}.",
            "science",
            actors,
            days[-1],
            f"{a} launches {craft} by {deadline:%d %b %Y}?",
        )

    def _story_election(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        country, code = self.names.country()
        cands = [self.names.person() for _ in range(3)]
        party = self.rng.choice(("the Green Alliance", "the Civic Union", "the Farmers' League", "the Liberal Front"))
        city = self.names.city()
        templates = _election_beats(country, cands, party, city)
        days = self._days(first, len(templates) + 1, span)
        favourite = self.rng.randrange(3)
        support = dict.fromkeys(cands, 0.0)
        events: list[HiddenEvent] = []
        for i, ((tpl, desc, etype, sign), day) in enumerate(zip(templates, days[:-1], strict=False)):
            weights = [3.0 if j == favourite else 1.0 for j in range(3)]
            if sign < 0:
                weights = [1.0 if j == favourite else 2.0 for j in range(3)]
            cand = self.rng.choices(cands, weights=weights)[0]
            m, c = self._mag(), self._conf()
            support[cand] += sign * m * c
            title = tpl.format(c=cand)
            events.append(
                HiddenEvent(
                    f"{key}-e{i + 1:02d}",
                    title,
                    f"{title}. {desc}",
                    day,
                    etype,
                    "Neutral",
                    m,
                    c,
                    target=f"{cand}:{sign}",
                )
            )
        winner = max(cands, key=lambda c: (support[c], -cands.index(c)))
        # Direction toward the resolved outcome: helping the winner or hurting a rival is Positive.
        resolved: list[HiddenEvent] = []
        for e in events:
            name, direction_sign = e.target.rsplit(":", 1)
            helps = (name == winner) == (int(direction_sign) > 0)
            resolved.append(_replace_direction(e, "Positive" if helps else "Negative"))
        o_title = f"{winner} wins {country} presidential election"
        resolved.append(
            HiddenEvent(
                f"{key}-outcome", o_title, f"{o_title}.", days[-1], "Outcome", "Positive", 1.0, 1.0, is_outcome=True
            )
        )
        resolved_at = _noon(days[-1]) + timedelta(hours=6)
        q = self._common(
            key,
            track,
            f"Who will win the {country} presidential election on {days[-1]:%d %B %Y}?",
            "multiple_choice",
            "politics",
            f"Resolves to the candidate declared winner of the {country} presidential election.",
            f"Three candidates run for president of {country}: {', '.join(cands)}.",
            _midnight(days[0]),
            resolved_at,
        )
        q["options"] = list(cands)
        actors = {
            "country": Actor("country", country, "country", code),
            **{f"c{i}": Actor(f"c{i}", c, "person") for i, c in enumerate(cands)},
        }
        story = Storyline(
            key, "election", track, platform, actors, resolved, self._links(resolved), winner, q, resolved_at
        )
        story.explanation = "Support: " + ", ".join(f"{c} {support[c]:+.2f}" for c in cands)
        if platform:
            story.market = self._market(
                story, f"{country} presidential election winner", list(cands), support_events=events
            )
        self.storylines.append(story)

    def _story_production(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        a = self.names.company()
        city = self.names.city()
        model = self.rng.choice(("Vela", "Orca", "Tern", "Pike", "Wren", "Ibis")) + f" {self.counter}"
        beats = _production_beats(a, city, model)
        days = self._days(first, len(beats) + 1, span)
        events = self._binary_events(key, beats, days[:-1], self.rng.choice((0.35, 0.65)))
        base = self.rng.randrange(20, 60) * 1000
        value = float(base)
        for e in events:
            value *= 1 + 0.12 * e.sign * e.magnitude
        value = float(round(value))
        o_title = f"{a} reports {int(value):,} {model} deliveries".replace(",", " ")
        events.append(
            HiddenEvent(
                f"{key}-outcome", o_title, f"{o_title}.", days[-1], "Outcome", "Positive", 1.0, 1.0, is_outcome=True
            )
        )
        resolved_at = _noon(days[-1]) + timedelta(hours=3)
        q = self._common(
            key,
            track,
            f"How many {model} vehicles will {a} report delivering this quarter?",
            "quantity",
            "business",
            f"The number of {model} deliveries {a} reports for the quarter, in vehicles.",
            f"{a} planned about {base:,} {model} deliveries this quarter.".replace(",", " "),
            _midnight(days[0]),
            resolved_at,
        )
        q["unit"] = "vehicles"
        q["lower_bound"] = 0.0
        actors = {"company": Actor("company", a, "company")}
        story = Storyline(key, "production", track, "", actors, events, self._links(events), value, q, resolved_at)
        story.params["base"] = base
        story.explanation = f"Plan {base}, effects of {len(events) - 1} events give {int(value)}."
        self.storylines.append(story)

    def _story_bridge(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        city = self.names.city()
        bridge = f"{self.rng.choice(('North', 'Harbour', 'River', 'Old Mill', 'Crown'))} Bridge {self.counter}"
        builder = self.names.company()
        beats = _bridge_beats(bridge, city, builder)
        days = self._days(first, len(beats) + 1, span)
        events = self._binary_events(key, beats, days[:-1], self.rng.choice((0.35, 0.65)))
        shift_weeks = sum(-e.sign * round(4 * e.magnitude) for e in events)
        opening = days[-1]
        planned = opening - timedelta(weeks=shift_weeks)
        outcome = f"{opening:%Y-%m}"
        o_title = f"{bridge} opens to traffic in {city}"
        events.append(
            HiddenEvent(
                f"{key}-outcome", o_title, f"{o_title}.", opening, "Outcome", "Positive", 1.0, 1.0, is_outcome=True
            )
        )
        resolved_at = _noon(opening)
        q = self._common(
            key,
            track,
            f"In which month will {bridge} in {city} open to traffic?",
            "timeframe",
            "infrastructure",
            f"The calendar month (UTC) in which {bridge} first opens to general traffic.",
            f"{city} planned to open {bridge}, built by {builder}, in {planned:%B %Y}.",
            _midnight(days[0]),
            resolved_at,
        )
        q["granularity"] = "month"
        actors = {"builder": Actor("builder", builder, "company")}
        story = Storyline(key, "bridge", track, "", actors, events, self._links(events), outcome, q, resolved_at)
        story.explanation = f"Planned {planned:%Y-%m-%d}, shifted {shift_weeks:+d} weeks: opened {opening:%Y-%m-%d}."
        self.storylines.append(story)

    def _story_relations(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        (x, xc), (y, yc) = self.names.country_pair()
        days = self._days(first, 12, span)
        lean = self.rng.choice((0.3, 0.7))
        events: list[HiddenEvent] = []
        tension = 0.0
        used: set[tuple[date, str]] = set()
        for i, day in enumerate(days[:-1]):
            cooperative = self.rng.random() < lean
            code = self.rng.choice(COOPERATIVE_CODES if cooperative else CONFLICT_CODES)
            if (day, code) in used:
                code = (
                    COOPERATIVE_CODES[i % len(COOPERATIVE_CODES)]
                    if cooperative
                    else CONFLICT_CODES[i % len(CONFLICT_CODES)]
                )
            used.add((day, code))
            m, c = self._mag(), self._conf()
            tension += (1 if cooperative else -1) * m * c
            subject, obj = ((x, xc), (y, yc)) if i % 2 == 0 else ((y, yc), (x, xc))
            title = CAMEO_PHRASES[code].format(s=subject[0], o=obj[0])
            events.append(
                HiddenEvent(
                    f"{key}-e{i + 1:02d}",
                    title,
                    f"{title}.",
                    day,
                    "Decision",
                    "Positive" if cooperative else "Negative",
                    m,
                    c,
                    cameo=(subject[1], obj[1], code),
                )
            )
        target = days[-1]
        pool = COOPERATIVE_CODES if tension > 0 else CONFLICT_CODES
        codes = sorted(self.rng.sample(pool, 2))
        gold: dict[str, list[str]] = {}
        for j, code in enumerate(codes):
            title = CAMEO_PHRASES[code].format(s=x, o=y)
            events.append(
                HiddenEvent(
                    f"{key}-t{j + 1}",
                    title,
                    f"{title}.",
                    target,
                    "Decision",
                    "Positive" if tension > 0 else "Negative",
                    0.9,
                    0.9,
                    cameo=(xc, yc, code),
                )
            )
            gold.setdefault(code[:2], []).append(code)
        o_title = f"{x} and {y} relations on {target:%d %B %Y}"
        events.append(
            HiddenEvent(
                f"{key}-outcome",
                o_title,
                f"{o_title}.",
                target,
                "Outcome",
                "Positive" if tension > 0 else "Negative",
                1.0,
                1.0,
                is_outcome=True,
            )
        )
        resolved_at = _midnight(target) + timedelta(days=1)
        q = self._common(
            key,
            track,
            f"Which relations will {x} (coded {xc}) take towards {y} (coded {yc}) on {target:%d %B %Y}?",
            "relation",
            "international-relations",
            f"The CAMEO relations of the structured events with subject {xc} and object {yc} dated "
            f"{target.isoformat()} in Hindsight's event archive.",
            f"{x} and {y} share the Tamber river; a dam project strains relations. The alpha-3 codes "
            f"{xc} and {yc} are neutral identifiers for these invented countries.",
            _midnight(days[0]),
            resolved_at,
        )
        q.update(
            subject=xc,
            object=yc,
            target_date=target.isoformat(),
            horizon_days=1,
            simulated_date_policy="near_resolution",
            close_at=_midnight(target).isoformat(),
        )
        actors = {"x": Actor("x", x, "country", xc), "y": Actor("y", y, "country", yc)}
        outcome = {"relations": {root: sorted(c) for root, c in sorted(gold.items())}}
        story = Storyline(key, "relations", track, "", actors, events, self._links(events), outcome, q, resolved_at)
        story.explanation = f"Tension {tension:+.2f}: {'cooperative' if tension > 0 else 'conflictual'} relations."
        self.storylines.append(story)

    def _story_summit(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        (x, xc), (y, yc) = self.names.country_pair()
        river = self.rng.choice(("Tamber", "Oslow", "Verrin", "Calder", "Mirren")) + " river"
        beats = _summit_beats(x, y, river)
        days = self._days(first, len(beats), span)
        events = self._binary_events(key, beats, days, self.rng.choice((0.3, 0.75)))
        cutoff_index = 5
        cutoff = _midnight(days[cutoff_index])
        gold = [e.title for e in events[cutoff_index:]]
        last = events[-1]
        events.append(
            HiddenEvent(
                f"{key}-outcome",
                f"Aftermath of the {river} summit",
                "The summit's aftermath.",
                last.day,
                "Outcome",
                "Positive",
                1.0,
                1.0,
                is_outcome=True,
            )
        )
        resolved_at = _noon(last.day) + timedelta(hours=8)
        q = self._common(
            key,
            track,
            f"What will happen after the {x}-{y} {river} summit?",
            "open_ended",
            "international-relations",
            f"The notable events between {x} and {y} over the {river} after the summit opened, "
            f"up to {last.day:%d %B %Y}.",
            f"{x} and {y} met over water sharing on the {river}.",
            cutoff,
            resolved_at,
        )
        q["background_events"] = [e.title for e in events[:cutoff_index]]
        actors = {"x": Actor("x", x, "country", xc), "y": Actor("y", y, "country", yc)}
        story = Storyline(key, "summit", track, "", actors, events, self._links(events), gold, q, resolved_at)
        story.explanation = f"{len(gold)} events followed the cut-off."
        self.storylines.append(story)

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
        opened = _midnight(story.events[0].day)
        settle = story.resolved_at
        path: list[tuple[datetime, dict[str, float]]] = []
        day = story.events[0].day
        while _noon(day) < settle:
            seen = [e for e in (support_events or story.events) if e.day <= day and not e.is_outcome]
            if len(outcomes) == 2 and outcomes == ["Yes", "No"]:
                pressure = sum(e.sign * e.magnitude * e.confidence for e in seen)
                wobble = self.rng.uniform(-0.04, 0.04)
                p = min(0.97, max(0.03, _sigmoid(1.6 * pressure) + wobble))
                path.append((_noon(day), {"Yes": round(p, 3), "No": round(1 - p, 3)}))
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
                path.append((_noon(day), probs))
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
                (_noon(first + timedelta(days=d)), {"Yes": p, "No": round(1 - p, 3)})
                for d, p in enumerate(round(self.rng.uniform(0.2, 0.8), 3) for _ in range(10))
            ]
            self.markets.append(
                {
                    "platform": platform,
                    "external_id": ext,
                    "title": f"Will the {self.names.city()} regatta be held this year? (fictional, thin market)",
                    "outcomes": ["Yes", "No"],
                    "open_at": _midnight(first),
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
                _midnight(event.day) + lag + timedelta(hours=self.rng.randrange(6, 21), minutes=self.rng.randrange(60))
            )
            if event.is_outcome:
                published = max(published, story.resolved_at - timedelta(hours=1) + timedelta(minutes=10 * rank))
                if story.kind == "relations":
                    published = _midnight(event.day) + timedelta(hours=8 + rank)
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
        stamp = (published or _noon(self.end_day)).strftime("%Y/%m/%d")
        digest = hashlib.sha1(f"{outlet.slug}|{title}|{stamp}".encode()).hexdigest()[:6]
        url = f"https://{outlet.host}/{stamp}/{_slug(title)}-{digest}"
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
            released_at=published or _noon(self.start_day),
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
                published = _midnight(day) + timedelta(hours=self.rng.randrange(6, 22))
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

    def build(self) -> World:
        for r in range(self.params["replay_rounds"]):
            for kind in REPLAY_KINDS:
                self.add(kind, "replay", "", r)
        for r in range(self.params["live_rounds"]):
            for kind, platform in LIVE_MARKET_KINDS:
                self.add(kind, "live", platform, r)
            for kind in EXTRA_LIVE_KINDS[: self.params["extra_live"] * 3 if r == 0 else 0]:
                self.add(kind, "live", "", r)
        self._filler_markets()
        for story in self.storylines:
            for event in story.events:
                self._report(story, event)
        self._noise()
        self._duplicates()
        for story in self.storylines:
            self._structured(story)
        self.articles.sort(key=lambda a: (a.released_at, a.url))
        present = _midnight(self.present_day) + timedelta(hours=23)
        stops = {
            _midnight(self.start_day) + timedelta(days=d)
            for d in range(0, (self.present_day - self.start_day).days, 15)
        }
        stops |= {_midnight(s.events[0].day) for s in self.storylines if s.track == "live"}
        checkpoints = [*sorted(t for t in stops if t < present), present]
        return World(
            seed=self.seed,
            size=self.size,
            start=_midnight(self.start_day),
            present=present,
            end=self.end,
            outlets=self.outlets,
            storylines=self.storylines,
            articles=self.articles,
            structured_events=sorted(self.structured, key=lambda r: (r.day, r.subject, r.object, r.relation)),
            markets=self.markets,
            checkpoints=checkpoints,
        )


def _replace_direction(event: HiddenEvent, direction: Direction) -> HiddenEvent:
    from dataclasses import replace

    return replace(event, direction=direction)


def generate_world(*, size: str = "small", seed: int = 7, end: datetime) -> World:
    """The sample world of ``size`` (tiny | small | large) for ``seed``, ending just before ``end``.

    Same (size, seed, end) in, same world out. ``end`` is normally the real time of generation, so
    the whole world lies in the past and the fictional clock releases it step by step.
    """
    return _Builder(size=size, seed=seed, end=end).build()


def outcome_from_graph(story: Storyline) -> Any:
    """Recompute a storyline's outcome from its hidden graph alone (the rules of the module docstring)."""
    events = [e for e in story.events if not e.is_outcome]
    if story.kind in ("merger", "launch"):
        return sum(e.sign * e.magnitude * e.confidence for e in events) > 0
    if story.kind == "election":
        support: dict[str, float] = {}
        for e in events:
            cand, sign = e.target.rsplit(":", 1)
            support[cand] = support.get(cand, 0.0) + int(sign) * e.magnitude * e.confidence
        options = story.question["options"]
        return max(options, key=lambda c: (support.get(c, 0.0), -options.index(c)))
    if story.kind == "production":
        value = float(story.params["base"])
        for e in events:
            value *= 1 + 0.12 * e.sign * e.magnitude
        return float(round(value))
    if story.kind == "bridge":
        return f"{story.outcome_event.day:%Y-%m}"
    if story.kind == "relations":
        target = date.fromisoformat(story.question["target_date"])
        gold: dict[str, set[str]] = {}
        for e in events:
            if (
                e.cameo
                and e.day == target
                and e.cameo[0] == story.question["subject"]
                and e.cameo[1] == story.question["object"]
            ):
                gold.setdefault(e.cameo[2][:2], set()).add(e.cameo[2])
        return {"relations": {k: sorted(v) for k, v in sorted(gold.items())}}
    if story.kind == "summit":
        cutoff = datetime.fromisoformat(story.question["open_at"]).date()
        return [e.title for e in events if e.day >= cutoff]
    raise ValueError(f"unknown storyline kind {story.kind!r}")
