"""The competition: teams, agents, tokens, replay sessions, forecasts, grades and standings."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from ingestion.models import Article, Question


class Team(models.Model):
    name = models.CharField(max_length=200, unique=True)
    slug = models.SlugField(max_length=200, unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="teams")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        MEMBER = "member", "Member"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="membership_unique")]


class Agent(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="agents")
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=200, unique=True)
    model_name = models.CharField(max_length=200, blank=True)
    provider = models.CharField(max_length=200, blank=True)
    knowledge_cutoff = models.DateField(
        null=True, blank=True, help_text="Declared knowledge cutoff of the model; agents without one are labelled."
    )
    tools_description = models.TextField(blank=True)
    is_baseline = models.BooleanField(default=False, help_text="Run by the platform itself.")
    created_at = models.DateTimeField(auto_now_add=True)
    retired_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Retired: its tokens, MCP access and endpoint deliveries have ended; its forecasts and grades stay.",
    )
    retired_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["team", "name"], name="agent_unique_name_per_team")]

    def __str__(self) -> str:
        return self.name


class AgentCutoffChange(models.Model):
    """Every change of an agent's declared knowledge cutoff: who changed it, when and where.

    The cutoff decides which of the agent's grades count as contaminated, so its history is kept."""

    class Via(models.TextChoices):
        WEB = "web", "Team pages"
        ADMIN = "admin", "Django admin"
        COMMAND = "command", "Management command"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="cutoff_changes")
    old_cutoff = models.DateField(null=True, blank=True)
    new_cutoff = models.DateField(null=True, blank=True)
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    via = models.CharField(max_length=10, choices=Via.choices, default=Via.WEB)
    changed_at = models.DateTimeField()

    class Meta:
        ordering = ["-changed_at", "-id"]

    def __str__(self) -> str:
        return f"{self.agent_id}: {self.old_cutoff} -> {self.new_cutoff}"


class ApiToken(models.Model):
    """An agent's API key: shown once, stored as a SHA-256 hash, identified by its prefix.

    ``issued_by`` says what made it, for good: a person (``created_by``; when that account is
    deleted, ``created_by`` becomes empty and the token stops working), the command line
    (``create_agent`` without ``--owner``) or the platform (its baseline agents). A token made by
    no person never has a ``created_by``, so the two cannot be mistaken for each other.
    """

    class IssuedBy(models.TextChoices):
        PERSON = "person", "A person"
        COMMAND = "command", "The command line"
        PLATFORM = "platform", "The platform"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, unique=True)
    key_hash = models.CharField(max_length=64, unique=True)
    issued_by = models.CharField(max_length=10, choices=IssuedBy.choices, default=IssuedBy.PERSON)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(issued_by="person") | Q(created_by__isnull=True), name="apitoken_no_person_no_creator"
            )
        ]


class ReplaySession(models.Model):
    """An agent placed at a simulated date on a replay question; its date never changes.

    The agent may close it (it then takes no more forecasts; those made stand), which also ends
    its work on the question for the evidence gateway's rule (``leaderboard.services.evidence``).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="replay_sessions")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="replay_sessions")
    simulated_at = models.DateTimeField()
    created_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True, help_text="Closed by its agent: no more forecasts.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "question"], name="replay_one_per_agent_question")]


class EvidenceAccess(models.Model):
    """The evidence access log: every gateway search and read an agent makes."""

    class Kind(models.TextChoices):
        SEARCH = "search", "Article search"
        READ = "read", "Article read"
        EVENTS = "events", "Structured events"
        PRICES = "prices", "Market prices"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="evidence_accesses")
    session = models.ForeignKey(ReplaySession, null=True, blank=True, on_delete=models.CASCADE)
    question = models.ForeignKey(Question, null=True, blank=True, on_delete=models.CASCADE)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    query = models.JSONField(default=dict, blank=True)
    item_ids = models.JSONField(default=list, blank=True)
    article = models.ForeignKey(Article, null=True, blank=True, on_delete=models.SET_NULL)
    as_of = models.DateTimeField()
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["agent", "question"]), models.Index(fields=["agent", "session"])]


class Forecast(models.Model):
    """Append-only: an update adds a row; the latest before the deadline counts."""

    class Channel(models.TextChoices):
        API = "api", "API"
        WEB = "web", "Web form"
        MCP = "mcp", "MCP"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="forecasts")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="forecasts")
    session = models.ForeignKey(ReplaySession, null=True, blank=True, on_delete=models.CASCADE)
    received_at = models.DateTimeField(db_index=True)
    prediction = models.JSONField()
    sources = models.JSONField(default=list, blank=True, help_text="Cited sources as submitted (ids or URLs).")
    cited_articles = models.ManyToManyField(Article, blank=True, related_name="cited_by")
    rationale = models.TextField(blank=True)
    graph = models.JSONField(null=True, blank=True)
    idempotency_key = models.CharField(max_length=200, blank=True)
    body_hash = models.CharField(max_length=64, blank=True)
    channel = models.CharField(max_length=5, choices=Channel.choices, default=Channel.API)
    submitted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["-received_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "idempotency_key"], condition=~Q(idempotency_key=""), name="forecast_idempotency"
            )
        ]
        indexes = [models.Index(fields=["question", "agent", "received_at"])]

    def __str__(self) -> str:
        return f"Forecast {self.pk} by agent {self.agent_id} on question {self.question_id}"


class Grade(models.Model):
    """One row per (forecast, grade version); a regrade adds a version and marks it current."""

    class Judge(models.TextChoices):
        NONE = "", "Not applicable"
        LLM = "llm", "LLM judge"
        LEXICAL = "lexical", "Lexical judge"

    # No index of its own: the (forecast, version) unique constraint's index serves forecast lookups,
    # and grading inserts every grade through both.
    forecast = models.ForeignKey(Forecast, on_delete=models.CASCADE, related_name="grades", db_index=False)
    version = models.PositiveIntegerField()
    is_current = models.BooleanField(default=True)
    grader_version = models.CharField(max_length=20)
    matcher_settings = models.JSONField(default=dict, blank=True)
    resolution_version = models.PositiveIntegerField()
    reference_version = models.PositiveIntegerField(null=True, blank=True)
    void = models.BooleanField(default=False, help_text="The question was annulled.")
    contaminated = models.BooleanField(default=False, help_text="The question's t0 precedes the agent's cutoff.")
    cutoff_declared = models.BooleanField(default=True)
    counts = models.BooleanField(default=True, help_text="The forecast that counts for its agent and question.")
    # Outcome
    correct = models.BooleanField(null=True)
    brier = models.FloatField(null=True)
    log_score = models.FloatField(null=True)
    market_edge = models.FloatField(null=True)
    pinball = models.FloatField(null=True)
    reduced_correct = models.BooleanField(null=True)
    first_level_f1 = models.FloatField(null=True)
    second_level_f1 = models.FloatField(null=True)
    kl_binary = models.FloatField(null=True)
    kl_quad = models.FloatField(null=True)
    open_precision = models.FloatField(null=True)
    open_recall = models.FloatField(null=True)
    open_f1 = models.FloatField(null=True)
    judge = models.CharField(max_length=10, choices=Judge.choices, blank=True)
    # Evidence
    source_precision = models.FloatField(null=True)
    source_recall = models.FloatField(null=True)
    leaks = models.PositiveIntegerField(null=True)
    # Reasoning (all null when the reference did not pass its quality thresholds)
    carried_graph = models.BooleanField(
        null=True, help_text="Whether the forecast carried a graph; null when reasoning was not graded."
    )
    key_event_recall = models.FloatField(null=True, help_text="Null when the forecast carried no graph.")
    event_precision = models.FloatField(null=True)
    event_recall = models.FloatField(null=True)
    event_f1 = models.FloatField(null=True)
    temporal_mae = models.FloatField(null=True)
    details = models.JSONField(default=dict, blank=True, help_text="Per-item verdicts and matches, for audit.")
    # What the grade was computed from (grader, resolution, reference + review state, matcher, judge):
    # a regrade is skipped for forecasts whose current grade already has the question's current key.
    inputs_key = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["forecast", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["forecast", "version"], name="grade_unique_version"),
            models.UniqueConstraint(fields=["forecast"], condition=Q(is_current=True), name="grade_one_current"),
        ]

    def __str__(self) -> str:
        return f"Grade v{self.version} of forecast {self.forecast_id}"

    @property
    def ker_coverage(self) -> float | None:
        """This grade's share in the standings' KER coverage: 1.0 with a forecast graph, 0.0 without,
        None when reasoning was not graded (no hindsight graph passing the quality thresholds)."""
        return None if self.carried_graph is None else float(self.carried_graph)


class QuestionGradingState(models.Model):
    """Per-question grading bookkeeping: the claim that keeps two workers off one question.

    A worker claims the question with a conditional UPDATE on ``claimed_at`` and keeps it alive
    with ``heartbeat_at``; a claim without a heartbeat for HINDSIGHT_GRADING_CLAIM_STALE_SECONDS
    belongs to a run that died and may be taken (``leaderboard.services.claims``).
    """

    question = models.OneToOneField(Question, on_delete=models.CASCADE, related_name="grading_state")
    claimed_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life of the claiming run.")
    claimed_by = models.CharField(max_length=200, blank=True, help_text="host:pid of the claiming run.")
    inputs_key = models.CharField(max_length=200, blank=True, help_text="Key of the last completed grading run.")
    graded_at = models.DateTimeField(null=True, blank=True)
    runs = models.PositiveIntegerField(default=0, help_text="Completed runs that wrote or changed grades.")
    checks = models.PositiveIntegerField(default=0, help_text="Completed runs, including those with nothing to do.")
    rerun_requested = models.BooleanField(
        default=False, help_text="Another delivery arrived while the question was claimed: run again."
    )
    last_error = models.TextField(blank=True)

    def __str__(self) -> str:
        return f"grading state of question {self.question_id}"


class Standing(models.Model):
    """One agent's (or platform baseline's) materialised line in one leaderboard view.

    A view is track x at most one of (question type, domain, origin, horizon bucket) x the
    contamination filter; ``""`` means unfiltered. Rebuilt by ``leaderboard.services.standings``.
    Every metric carries its own n (questions of the view it applies to).
    """

    class Track(models.TextChoices):
        ALL = "all", "All tracks"
        LIVE = "live", "Live"
        REPLAY = "replay", "Replay"

    track = models.CharField(max_length=10, choices=Track.choices)
    question_type = models.CharField(max_length=20, blank=True)
    domain = models.CharField(max_length=100, blank=True)
    origin = models.CharField(max_length=20, blank=True)
    horizon = models.CharField(max_length=10, blank=True)
    contamination_filter = models.BooleanField(default=True)
    agent = models.ForeignKey(Agent, null=True, blank=True, on_delete=models.CASCADE, related_name="standings")
    baseline = models.CharField(max_length=20, blank=True, help_text="Platform baseline name; empty for agents.")
    rank = models.PositiveIntegerField(null=True, blank=True)
    rank_metric = models.CharField(max_length=20, blank=True)
    provisional = models.BooleanField(default=False)
    n = models.PositiveIntegerField(default=0, help_text="Eligible questions.")
    accuracy = models.FloatField(null=True)
    accuracy_n = models.PositiveIntegerField(default=0)
    brier = models.FloatField(null=True)
    brier_n = models.PositiveIntegerField(default=0)
    brier_lo = models.FloatField(null=True)
    brier_hi = models.FloatField(null=True)
    brier_index = models.FloatField(null=True)
    # Difficulty-adjusted Brier (ForecastBench's two-way fixed effects); its n counts the questions
    # other agents answered too, in the largest connected group.
    brier_adjusted = models.FloatField(null=True)
    brier_adjusted_n = models.PositiveIntegerField(default=0)
    log_score = models.FloatField(null=True)
    log_score_n = models.PositiveIntegerField(default=0)
    # Metaculus' peer score: 100 x (own log score - the other agents' mean), averaged over questions.
    peer_score = models.FloatField(null=True)
    peer_score_n = models.PositiveIntegerField(default=0)
    # Live questions: Brier of every forecast weighted by the time it stood, and the share of the
    # questions' open time the agent's forecasts covered.
    time_brier = models.FloatField(null=True)
    time_brier_n = models.PositiveIntegerField(default=0)
    time_coverage = models.FloatField(null=True)
    time_coverage_n = models.PositiveIntegerField(default=0)
    market_edge = models.FloatField(null=True)
    market_edge_n = models.PositiveIntegerField(default=0)
    source_precision = models.FloatField(null=True)
    source_precision_n = models.PositiveIntegerField(default=0)
    key_event_recall = models.FloatField(null=True)
    key_event_recall_n = models.PositiveIntegerField(default=0)
    # Share of the agent's forecasts graded against a hindsight graph that carried a graph of their own
    # (KER is averaged over those only); its n counts the forecasts graded against a hindsight graph.
    ker_coverage = models.FloatField(null=True)
    ker_coverage_n = models.PositiveIntegerField(default=0)
    # Cited articles published after the forecast's as-of time, summed; n counts the forecasts whose
    # evidence was graded.
    leaks = models.FloatField(null=True)
    leaks_n = models.PositiveIntegerField(default=0)
    second_level_f1 = models.FloatField(null=True)
    second_level_f1_n = models.PositiveIntegerField(default=0)
    open_f1 = models.FloatField(null=True)
    open_f1_n = models.PositiveIntegerField(default=0)
    standings_version = models.CharField(
        max_length=10, blank=True, help_text="Version of the standings' definitions the row was computed under."
    )
    computed_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(
                fields=["track", "question_type", "domain", "origin", "horizon", "contamination_filter", "rank"],
                name="standing_view_rank",
            ),
            models.Index(fields=["agent", "track"], name="standing_agent"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["track", "question_type", "domain", "origin", "horizon", "contamination_filter", "agent"],
                condition=Q(agent__isnull=False),
                name="standing_unique_agent_view",
            ),
            models.UniqueConstraint(
                fields=["track", "question_type", "domain", "origin", "horizon", "contamination_filter", "baseline"],
                condition=Q(agent__isnull=True),
                name="standing_unique_baseline_view",
            ),
        ]

    def __str__(self) -> str:
        who = self.baseline or str(self.agent_id)
        return f"{who} in {self.track}/{self.question_type}/{self.domain}/{self.origin}/{self.horizon}"


class QuestionDifficulty(models.Model):
    """A question's difficulty: its effect in the standings' two-way fixed-effects fit of Brier scores.

    Positive: harder than the average question (agents' Brier scores run higher on it). One row per
    question with eligible Brier grades and contamination-filter setting (the filter decides whose
    grades enter the fit). ``effect`` is null for questions outside the largest group of agents and
    questions linked by shared answers: their difficulty cannot be compared with the others'.
    """

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="difficulties")
    contamination_filter = models.BooleanField(default=True)
    effect = models.FloatField(null=True)
    agents = models.PositiveIntegerField(default=0, help_text="Agents whose Brier on the question entered the fit.")
    mean_brier = models.FloatField(null=True, help_text="Those agents' mean Brier on the question.")
    standings_version = models.CharField(max_length=10)
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["question_id", "-contamination_filter"]
        constraints = [
            models.UniqueConstraint(fields=["question", "contamination_filter"], name="difficulty_unique_question"),
        ]

    def __str__(self) -> str:
        return f"Difficulty of question {self.question_id}: {self.effect}"
