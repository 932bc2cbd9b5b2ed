"""The world as Hindsight knows it: sources, evidence, markets, questions and resolutions."""

from __future__ import annotations

from datetime import date
from typing import Final

from django.conf import settings
from django.db import models
from django.db.models import Q

from ingestion.outcomes import outcome_text

# Marks the sources the demo's sample world created (sampleworld.publish), whatever their kind:
# read by the sample world, and by the market poll (a fictional market has no page on a real site).
SAMPLE_WORLD_OPTION: Final = "sample_world"


class Source(models.Model):
    class Kind(models.TextChoices):
        RSS = "rss", "Feed (RSS, Atom or JSON Feed)"
        POLYMARKET = "polymarket", "Polymarket (Gamma API)"
        MANIFOLD = "manifold", "Manifold (API v0)"
        KALSHI = "kalshi", "Kalshi (trade API v2)"
        # Never polled: its articles come from ``manage.py import_archive`` (docs/operations.md).
        ARCHIVE = "archive", "News archive (JSON Lines import)"

    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    url = models.URLField(max_length=1000)
    options = models.JSONField(default=dict, blank=True)
    poll_interval = models.DurationField(help_text="Time between successful polls.")
    enabled = models.BooleanField(default=True)
    # Health
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True, db_index=True)
    last_error = models.TextField(blank=True)
    # What the last successful poll read only with a warning (a feed recovered by feedparser's
    # loose parser, markets on hold); empty when it read everything cleanly.
    last_warning = models.TextField(blank=True, default="", db_default="")
    # Conditional GET validators of the last successful fetch.
    etag = models.CharField(max_length=500, blank=True)
    last_modified = models.CharField(max_length=100, blank=True)
    # Set while a worker polls the source, so a duplicate task does nothing.
    claimed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class Article(models.Model):
    source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.SET_NULL, related_name="articles")
    url = models.URLField(max_length=2000, unique=True, help_text="Canonical URL.")
    title = models.CharField(max_length=1000)
    summary = models.TextField(blank=True)
    body = models.TextField(blank=True)
    author = models.CharField(max_length=300, blank=True)
    language = models.CharField(max_length=20, blank=True)
    # None when the entry had no parsable date: such an article is never visible as evidence.
    published_at = models.DateTimeField(null=True, blank=True, db_index=True)
    fetched_at = models.DateTimeField()
    content_hash = models.CharField(max_length=64, unique=True)
    # The feed's own identifier of the entry (RSS guid, Atom id, JSON Feed id), when it has one:
    # two posts under one permalink with different identifiers are different posts.
    guid = models.CharField(max_length=1000, blank=True, default="", db_default="")
    # Imported archives only (ingestion.archives): the archive's own id of the item, unique within
    # its source, the item's licence as the archive gives it, and the line's other fields.
    external_id = models.CharField(max_length=300, blank=True, default="", db_default="")
    license = models.CharField(max_length=100, blank=True, default="", db_default="")
    extra = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-published_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "external_id"], condition=~Q(external_id=""), name="article_unique_archive_id"
            )
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def reported_on(self) -> date | None:
        """The day an archive entry files the event under (the news portal's day,
        ``extra["portal_date"]``), which can be weeks before its text was first captured
        (``published_at``, the date the evidence gateway uses); None for other articles."""
        day = (self.extra or {}).get("portal_date") if isinstance(self.extra, dict) else None
        try:
            return date.fromisoformat(day) if isinstance(day, str) else None
        except ValueError:
            return None


class Market(models.Model):
    class Platform(models.TextChoices):
        POLYMARKET = "polymarket", "Polymarket"
        MANIFOLD = "manifold", "Manifold"
        KALSHI = "kalshi", "Kalshi"
        FORECASTBENCH = "forecastbench", "ForecastBench freeze value"
        SAMPLE = "sample", "Sample world (fictional)"

    source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.SET_NULL, related_name="markets")
    platform = models.CharField(max_length=20, choices=Platform.choices)
    external_id = models.CharField(max_length=300)
    title = models.CharField(max_length=1000)
    outcomes = models.JSONField(default=list)
    url = models.URLField(max_length=1000, blank=True)
    open_at = models.DateTimeField(null=True, blank=True)
    close_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=30, blank=True)
    liquidity = models.FloatField(null=True, blank=True)
    volume = models.FloatField(null=True, blank=True)
    bettors = models.IntegerField(null=True, blank=True)
    raw = models.JSONField(default=dict, blank=True)
    # Why the market's answer is on hold (e.g. closed without a settlement price); empty otherwise.
    hold_reason = models.CharField(max_length=300, blank=True, default="", db_default="")
    # Hash of the stored values and raw payload: a poll skips a market whose hash is unchanged
    # without loading or re-serialising its payload. Empty for rows stored before it existed.
    content_hash = models.CharField(max_length=64, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "external_id"], name="market_unique_external")]

    def __str__(self) -> str:
        return f"{self.platform}:{self.external_id}"


class PricePoint(models.Model):
    # No index of its own: the unique (market, outcome, time) and (market, time) indexes both
    # start with the market, and a third index would only slow every price write.
    market = models.ForeignKey(Market, on_delete=models.CASCADE, related_name="prices", db_index=False)
    outcome = models.CharField(max_length=300)
    time = models.DateTimeField()
    probability = models.FloatField()

    class Meta:
        ordering = ["time"]
        constraints = [
            models.UniqueConstraint(fields=["market", "outcome", "time"], name="pricepoint_unique"),
            models.CheckConstraint(
                condition=Q(probability__gte=0) & Q(probability__lte=1), name="pricepoint_probability_range"
            ),
        ]
        indexes = [models.Index(fields=["market", "time"])]


class StructuredEvent(models.Model):
    """A MIRAI-style dated country-to-country event with a second-level CAMEO relation code."""

    date = models.DateField(db_index=True)
    subject = models.CharField(max_length=3, help_text="ISO 3166-1 alpha-3")
    object = models.CharField(max_length=3, help_text="ISO 3166-1 alpha-3")
    relation = models.CharField(max_length=4, help_text="Second-level CAMEO code, e.g. 042")
    relation_root = models.CharField(max_length=2, help_text="First-level CAMEO code, e.g. 04")
    articles = models.ManyToManyField(Article, blank=True, related_name="structured_events")
    article_urls = models.JSONField(default=list, blank=True)
    # GDELT-style daily mention count when the source file gives one (MIRAI filters on it).
    mentions = models.PositiveIntegerField(null=True, blank=True)
    dedupe_key = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["date", "id"]
        indexes = [models.Index(fields=["subject", "object", "date"]), models.Index(fields=["relation_root", "date"])]


class Question(models.Model):
    class Type(models.TextChoices):
        BINARY = "binary", "Binary"
        MULTIPLE_CHOICE = "multiple_choice", "Multiple choice"
        QUANTITY = "quantity", "Quantity"
        TIMEFRAME = "timeframe", "Timeframe"
        RELATION = "relation", "Relation (MIRAI)"
        OPEN_ENDED = "open_ended", "Open-ended (OpenForecast)"

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"
        RESOLVED = "resolved", "Resolved"
        ANNULLED = "annulled", "Annulled"

    class Track(models.TextChoices):
        LIVE = "live", "Live"
        REPLAY = "replay", "Replay"

    class Origin(models.TextChoices):
        MARKET = "market", "Prediction market"
        NEWS = "news", "Generated from news"
        IMPORTED = "imported", "Imported question set"
        ADMIN = "admin", "Created by staff"
        SAMPLE = "sample", "Sample world (fictional)"
        # Real replay questions written from an imported news archive, which is their evidence corpus.
        ARCHIVE = "archive", "Real news archive"

    class Granularity(models.TextChoices):
        DAY = "day", "Day"
        WEEK = "week", "Week"
        MONTH = "month", "Month"
        QUARTER = "quarter", "Quarter"
        YEAR = "year", "Year"

    class SimulatedDatePolicy(models.TextChoices):
        EARLY = "early", "Early (25% of the window)"
        MID = "mid", "Midpoint of the window"
        LATE = "late", "Late (75% of the window)"
        NEAR_RESOLUTION = "near_resolution", "Near resolution (95% of the window)"

    external_id = models.CharField(max_length=300, unique=True, null=True, blank=True)
    title = models.CharField(max_length=1000)
    type = models.CharField(max_length=20, choices=Type.choices)
    options = models.JSONField(default=list, blank=True, help_text="Multiple-choice options.")
    unit = models.CharField(max_length=50, blank=True)
    lower_bound = models.FloatField(null=True, blank=True)
    upper_bound = models.FloatField(null=True, blank=True)
    granularity = models.CharField(max_length=10, choices=Granularity.choices, blank=True)
    subject = models.CharField(max_length=3, blank=True, help_text="Relation: ISO alpha-3")
    object = models.CharField(max_length=3, blank=True, help_text="Relation: ISO alpha-3")
    target_date = models.DateField(null=True, blank=True)
    horizon_days = models.PositiveIntegerField(default=1)
    background_events = models.JSONField(default=list, blank=True, help_text="Open-ended: prior events.")
    resolution_criteria = models.TextField(blank=True)
    background = models.TextField(blank=True)
    domain = models.CharField(max_length=100, blank=True, db_index=True)
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.ADMIN)
    market = models.ForeignKey(Market, null=True, blank=True, on_delete=models.SET_NULL, related_name="questions")
    provenance_url = models.URLField(max_length=2000, blank=True)
    provenance_articles = models.ManyToManyField(Article, blank=True, related_name="provenance_of")
    attribution = models.JSONField(default=dict, blank=True, help_text="Source, URL and licence of imports.")
    generation = models.JSONField(
        default=dict, blank=True, help_text="News-generated questions: model, scores with reasons."
    )
    rejection_reason = models.TextField(blank=True)
    open_at = models.DateTimeField(help_text="t0: earliest forecastable date.")
    close_at = models.DateTimeField(help_text="Forecast deadline (live questions).")
    resolve_by = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT, db_index=True)
    track = models.CharField(max_length=10, choices=Track.choices, default=Track.LIVE, db_index=True)
    simulated_date_policy = models.CharField(
        max_length=20, choices=SimulatedDatePolicy.choices, default=SimulatedDatePolicy.MID
    )
    # Replay: staff publish the outcome; until then no page or endpoint shows it to non-staff.
    outcome_published_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["close_at", "id"]
        indexes = [models.Index(fields=["status", "track", "type"])]

    def __str__(self) -> str:
        return self.title

    @property
    def current_resolution(self) -> Resolution | None:
        return self.resolutions.order_by("-version").first()

    @property
    def is_revealed(self) -> bool:
        """Whether the outcome may be shown to non-staff users."""
        if self.status not in (self.Status.RESOLVED, self.Status.ANNULLED):
            return False
        return self.track == self.Track.LIVE or self.outcome_published_at is not None

    @property
    def offered_for_replay(self) -> bool:
        """A replay question still taking replay sessions and forecasts: its status is one of
        ``REPLAY_OFFERED_STATUSES`` and staff have not published its outcome."""
        return (
            self.track == self.Track.REPLAY
            and self.status in REPLAY_OFFERED_STATUSES
            and self.outcome_published_at is None
        )

    @property
    def public_status(self) -> str:
        """The status shown outside the admin: an annulled replay question looks like any other
        unpublished replay question (resolved) until staff publish its outcome, since "annulled"
        would tell agents something about the outcome."""
        if (
            self.status == self.Status.ANNULLED
            and self.track == self.Track.REPLAY
            and self.outcome_published_at is None
        ):
            return self.Status.RESOLVED
        return self.status

    def get_public_status_display(self) -> str:
        """The status the site's pages show: a replay question still on offer reads "Open for
        replay" (agents forecast it as of a simulated date), whatever happened in the real world."""
        if self.offered_for_replay:
            return OPEN_FOR_REPLAY
        return str(self.Status(self.public_status).label)


# A replay question opens sessions and takes forecasts while its status is one of these and its
# outcome is unpublished: resolved, or closed while staff have un-resolved it for review. An annulled
# one takes none (its forecasts could only ever be void); it still reads "resolved" until its outcome
# is published, and its refusal says only that it was withdrawn from the replay track.
REPLAY_OFFERED_STATUSES: Final = (Question.Status.RESOLVED, Question.Status.CLOSED)
OPEN_FOR_REPLAY: Final = "Open for replay"


class Resolution(models.Model):
    """One version of a question's resolution; every change adds a row, never an overwrite."""

    class Kind(models.TextChoices):
        RESOLVE = "resolve", "Resolved"
        UNRESOLVE = "unresolve", "Un-resolved"
        AMEND = "amend", "Amended"
        ANNUL = "annul", "Annulled"

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="resolutions")
    version = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    outcome = models.JSONField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True, help_text="When the outcome became known.")
    provisional = models.BooleanField(default=False)
    note = models.TextField(blank=True)
    evidence = models.JSONField(default=dict, blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    author_label = models.CharField(max_length=200, blank=True, help_text="e.g. market:kalshi, import, staff")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["question", "version"]
        constraints = [models.UniqueConstraint(fields=["question", "version"], name="resolution_unique_version")]

    def __str__(self) -> str:
        return f"{self.question_id} v{self.version} {self.kind}"

    @property
    def outcome_display(self) -> str:
        """The outcome in words (an annulment or withdrawal says so instead)."""
        if self.kind == self.Kind.ANNUL:
            return "Annulled"
        if self.kind == self.Kind.UNRESOLVE:
            return "Withdrawn (no outcome)"
        question = self.question
        return outcome_text(question.type, self.outcome, unit=question.unit, granularity=question.granularity)


class NewsCluster(models.Model):
    """A set of related recent articles sent to the LLM question generator, claimed once.

    The key is a hash of the sorted article ids, so the hourly task never asks twice about the
    same cluster and a duplicate task finds it claimed.
    """

    key = models.CharField(max_length=64, unique=True)
    article_ids = models.JSONField(default=list)
    terms = models.JSONField(default=list, blank=True, help_text="Top shared terms, for staff.")
    claimed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    model_name = models.CharField(max_length=200, blank=True)
    questions_created = models.PositiveIntegerField(default=0)
    problems = models.JSONField(default=list, blank=True, help_text="Malformed or rejected model output, logged.")
    llm_usage = models.JSONField(
        default=list, blank=True, help_text="Per LLM stage: calls, prompt/answer tokens, seconds, valid on first try."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "id"]

    def __str__(self) -> str:
        return f"cluster {self.key[:12]} ({len(self.article_ids)} articles)"
