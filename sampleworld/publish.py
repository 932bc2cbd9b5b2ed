"""Publishing the sample world through Hindsight's real ingestion path.

The world is served by :class:`~sampleworld.server.SampleWorldServer`; this module only
does what an operator would: add one source per outlet and market platform (``source_create``,
the service behind ``manage.py add_source``), poll them with ``source_poll`` as the fictional
clock moves, import the structured events CSV with ``manage.py import_events``, and create the
storylines' questions with the question services (``question_upsert`` / ``question_resolve``).
Market questions are created, priced and resolved by the market pollers themselves.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from django.core.management import call_command
from django.db import transaction

from ingestion.models import SAMPLE_WORLD_OPTION, Article, Market, Question, Source, StructuredEvent
from ingestion.polls import PollReport
from ingestion.services.events import event_dedupe_key
from ingestion.services.questions import question_resolve, question_upsert
from ingestion.services.sources import source_create, source_poll
from sampleworld.clock import FictionalClock
from sampleworld.generator import generate_world
from sampleworld.server import SampleWorldServer
from sampleworld.world import SAMPLE_ATTRIBUTION, Storyline, World

# Source option naming the world a sample source belongs to (so a second run finds it).
WORLD_OPTION = SAMPLE_WORLD_OPTION
MARKET_OPTIONS: dict[str, dict[str, Any]] = {
    "polymarket": {"open_questions": True, "min_liquidity": 500, "horizon_days": 120, "paging": "keyset"},
    "manifold": {"open_questions": True, "min_liquidity": 500, "horizon_days": 120},
    "kalshi": {"open_questions": True, "min_liquidity": 500, "horizon_days": 120, "status": "open"},
}
MARKET_NAMES = {
    "polymarket": "Sample Polymarket (fictional markets)",
    "manifold": "Sample Manifold (fictional markets)",
    "kalshi": "Sample Kalshi (fictional markets)",
}
Log = Callable[[str], None]


def _quiet(message: str) -> None:
    return None


@dataclass(frozen=True)
class WorldParams:
    size: str
    seed: int
    end: datetime
    clock: datetime | None = None  # how far the fictional clock got in this database

    def as_option(self) -> dict[str, Any]:
        option: dict[str, Any] = {"size": self.size, "seed": self.seed, "end": self.end.isoformat()}
        if self.clock is not None:
            option["clock"] = self.clock.isoformat()
        return option

    @classmethod
    def from_option(cls, value: Any) -> WorldParams | None:
        if not isinstance(value, dict):
            return None
        try:
            clock = datetime.fromisoformat(value["clock"]) if value.get("clock") else None
            return cls(
                size=str(value["size"]), seed=int(value["seed"]), end=datetime.fromisoformat(value["end"]), clock=clock
            )
        except (KeyError, TypeError, ValueError):
            return None


def sample_world_params() -> WorldParams | None:
    """The parameters of the sample world already published in this database, if any."""
    for options in Source.objects.filter(options__has_key=WORLD_OPTION).values_list("options", flat=True):
        params = WorldParams.from_option(options.get(WORLD_OPTION))
        if params is not None:
            return params
    return None


@dataclass
class PublishReport:
    polls: int = 0
    added: int = 0
    skipped: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    questions_created: int = 0
    questions_resolved: int = 0

    def take(self, report: PollReport, label: str) -> None:
        self.polls += 1
        self.added += report.added
        self.skipped += report.skipped
        self.failed += report.failed
        if report.error:
            self.errors.append(f"{label}: {report.error}")


@dataclass
class SampleWorldRun:
    """A generated world, its clock and its server, wired to this database's sample sources."""

    world: World
    clock: FictionalClock
    server: SampleWorldServer
    sources: dict[str, int] = field(default_factory=dict)  # outlet slug or platform -> Source id
    log: Log = _quiet

    @classmethod
    def start(cls, *, params: WorldParams, log: Log = _quiet) -> SampleWorldRun:
        world = generate_world(size=params.size, seed=params.seed, end=params.end)
        # A world published before resumes where its clock stopped: replaying earlier stops would
        # show settled markets as open again, and the pollers would un-resolve their questions.
        clock = FictionalClock(params.clock or world.start)
        server = SampleWorldServer(world, clock).start()
        return cls(world=world, clock=clock, server=server, log=log)

    def stop(self) -> None:
        self.server.stop()

    @property
    def params(self) -> WorldParams:
        return WorldParams(size=self.world.size, seed=self.world.seed, end=self.world.end, clock=self.clock.now())

    # -- sources
    def ensure_sources(self) -> dict[str, int]:
        """One source per outlet (in its feed format) and per market platform, pointing at this
        run's server. A source from an earlier run of the same world gets the new address."""
        base = self.server.base_url
        wanted: list[tuple[str, str, str, str, dict[str, Any]]] = []
        for outlet in self.world.outlets:
            url = f"{base}/feeds/{outlet.slug}.{outlet.feed_format}"
            wanted.append((outlet.slug, Source.Kind.RSS, url, outlet.name, {}))
        for platform, options in MARKET_OPTIONS.items():
            url = {"polymarket": f"{base}/polymarket", "manifold": f"{base}/manifold", "kalshi": f"{base}/kalshi"}[
                platform
            ]
            extra = {"clob_url": f"{base}/polymarket"} if platform == "polymarket" else {}
            wanted.append((platform, platform, url, MARKET_NAMES[platform], {**options, **extra}))
        for key, kind, url, name, options in wanted:
            options = {**options, WORLD_OPTION: self.params.as_option()}
            existing = Source.objects.filter(kind=kind, name=name, options__has_key=WORLD_OPTION).first()
            if existing is None:
                source = source_create(
                    kind=kind, url=url, name=name, options=options, poll_interval=timedelta(minutes=30)
                )
                self.log(f"added {kind} source {source.pk} {name} -> {url}")
            else:
                source = _repoint(source=existing, url=url, options=options)
            self.sources[key] = source.pk
        return self.sources

    def disable_sources(self) -> None:
        """The local server dies with this process: stop beat from polling a dead address."""
        Source.objects.filter(pk__in=list(self.sources.values())).update(enabled=False)

    # -- the clock
    def poll_all(self, *, now: datetime, report: PublishReport) -> None:
        # News first, so a market settling in the same step finds the articles for its graph.
        order = [o.slug for o in self.world.outlets] + list(MARKET_OPTIONS)
        for key in order:
            result = source_poll(source_id=self.sources[key], now=now, include_disabled=True)
            report.take(result, key)

    def advance(self, *, to: datetime, report: PublishReport) -> None:
        """Move the clock through every checkpoint up to ``to``, polling at each stop."""
        stops = [t for t in self.world.checkpoints if self.clock.now() < t <= to]
        if not stops or stops[-1] != to:
            stops.append(to)
        for stop in stops:
            if stop <= self.clock.now() and self.sources_polled_at(stop):
                continue
            self.clock.advance(stop)
            self.poll_all(now=stop, report=report)
            self._save_clock()
        self.import_events()

    def sources_polled_at(self, when: datetime) -> bool:
        return not Source.objects.filter(pk__in=list(self.sources.values())).exclude(last_attempt_at__gte=when).exists()

    def _save_clock(self) -> None:
        option = self.params.as_option()
        for source in Source.objects.filter(pk__in=list(self.sources.values())):
            source.options = {**source.options, WORLD_OPTION: option}
            source.save(update_fields=["options"])

    def import_events(self) -> str:
        """Fetch the events CSV as of the clock and run ``manage.py import_events`` on it."""
        text = httpx.get(f"{self.server.base_url}/events.csv", timeout=30).raise_for_status().text
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "sample_world_events.csv"
            path.write_text(text, encoding="utf-8")
            out = io.StringIO()
            # Relation questions come from the storylines (labelled fictional), not the importer.
            call_command("import_events", str(path), "--no-questions", stdout=out)
        return out.getvalue().strip()

    # -- questions
    def load_questions(self, *, now: datetime, report: PublishReport) -> None:
        """Replay questions (resolved, with outcomes) and live non-market questions (open)."""
        for story in self.world.storylines:
            if story.platform:
                continue
            data = dict(story.question)
            if story.track == "replay":
                data["outcome"] = story.outcome
                data["resolved_at"] = story.resolved_at.isoformat()
            with transaction.atomic():
                existed = Question.objects.filter(external_id=data["external_id"]).exists()
                question_upsert(data=data, origin=Question.Origin.SAMPLE, now=now)
            report.questions_created += 0 if existed else 1

    def resolve_live(self, *, now: datetime, report: PublishReport) -> None:
        """Resolve live questions that no market settles, as staff would once the outcome is known."""
        for story in self.world.storylines:
            if story.track != "live" or story.platform or story.resolved_at > now:
                continue
            question = Question.objects.filter(external_id=story.question["external_id"]).first()
            if question is None:
                continue
            resolution = question_resolve(
                question=question,
                outcome=story.outcome,
                resolved_at=story.resolved_at,
                note="Resolved by the sample world's fictional clock.",
                evidence={"source": SAMPLE_ATTRIBUTION, "storyline": story.key},
                author_label="sample-world",
                now=now,
            )
            report.questions_resolved += resolution is not None


def _repoint(*, source: Source, url: str, options: dict[str, Any]) -> Source:
    if source.url != url or source.options != options or not source.enabled:
        Source.objects.filter(pk=source.pk).update(url=url, options=options, enabled=True, etag="", last_modified="")
        source.refresh_from_db()
    return source


def storyline_question(*, world: World, story: Storyline) -> Question | None:
    """The question of a storyline: its own external id, or the question of its market."""
    if story.market is not None:
        return Question.objects.filter(
            market__platform=story.platform, market__external_id=story.market["external_id"]
        ).first()
    return Question.objects.filter(external_id=story.question["external_id"]).first()


def event_article_ids(*, world: World, story: Storyline, event_key: str) -> list[int]:
    """Archive ids of the articles that reported one hidden event."""
    urls = [a.canonical_url for a in world.articles_of_event(story.key, event_key)]
    return sorted(Article.objects.filter(url__in=urls).values_list("pk", flat=True))


@transaction.atomic
def sample_world_delete() -> dict[str, int]:
    """Remove the published sample world (its sources' articles and markets, its questions and
    structured events, the sources), so it can be published afresh."""
    params = sample_world_params()
    sources = Source.objects.filter(options__has_key=WORLD_OPTION)
    counts: dict[str, int] = {}
    markets = Market.objects.filter(source__in=sources)
    questions = Question.objects.filter(external_id__startswith="sample:") | Question.objects.filter(market__in=markets)
    counts["questions"] = questions.count()
    for question in questions:
        question.delete()
    if params is not None:
        world = generate_world(size=params.size, seed=params.seed, end=params.end)
        keys = [
            event_dedupe_key(day=r.day, subject=r.subject, object=r.object, relation=r.relation)
            for r in world.structured_events
        ]
        counts["structured_events"] = StructuredEvent.objects.filter(dedupe_key__in=keys).delete()[0]
    counts["markets"] = markets.delete()[0]
    counts["articles"] = Article.objects.filter(source__in=sources).delete()[0]
    counts["sources"] = sources.delete()[0]
    return counts
