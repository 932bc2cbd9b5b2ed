"""Hindsight graphs: the dated causal reference built for each resolved question."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from ingestion.models import Article, Question


class HindsightGraph(models.Model):
    class Builder(models.TextChoices):
        OFFLINE = "offline", "Offline builder (deterministic, no LLM)"
        LLM = "llm", "LLM builder"

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="hindsight_graphs")
    version = models.PositiveIntegerField()
    is_current = models.BooleanField(default=True)
    builder = models.CharField(max_length=10, choices=Builder.choices)
    builder_version = models.CharField(max_length=50)
    model_name = models.CharField(max_length=200, blank=True)
    prompts = models.JSONField(default=list, blank=True)
    token_usage = models.JSONField(default=dict, blank=True)
    explanation = models.TextField(blank=True)
    graph_built = models.BooleanField(default=False, help_text="Passed the quality thresholds.")
    quality = models.JSONField(default=dict, blank=True, help_text="Measured depth, counts and failures.")
    resolution_version = models.PositiveIntegerField(null=True, blank=True)
    fallback_reason = models.TextField(
        blank=True, help_text="Set when the offline builder stood in for a failed LLM build: why it failed."
    )
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["question", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["question", "version"], name="graph_unique_version"),
            models.UniqueConstraint(fields=["question"], condition=Q(is_current=True), name="graph_one_current"),
        ]

    def __str__(self) -> str:
        return f"Hindsight graph v{self.version} for question {self.question_id}"


class GraphBuildAttempt(models.Model):
    """Every build attempt, successful or not, with its reason when it failed."""

    class Reason(models.TextChoices):
        BUILT = "built", "Graph stored and passed the quality thresholds"
        QUALITY_FAILED = "quality_failed", "Graph stored with graph_built=False (quality thresholds unmet)"
        NOT_RESOLVED = "not_resolved", "Question has no current resolution"
        NO_ARTICLES = "no_articles", "No articles in the evidence window"
        INSUFFICIENT_EVIDENCE = "insufficient_evidence", "No news about the question's subject in its window"
        NOT_CONFIGURED = "not_configured", "No LLM configured"
        TIMEOUT = "timeout", "Model timed out"
        SERVER_ERROR = "server_error", "Model server returned an error"
        SERVER_DOWN = "server_down", "Model server unreachable"
        MALFORMED_OUTPUT = "malformed_output", "Model output invalid after the correction budget"
        CONTEXT_EXCEEDED = "context_exceeded", "Prompt would not fit the model's context window"
        ERROR = "error", "Unexpected error"

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="graph_attempts")
    builder = models.CharField(max_length=10, choices=HindsightGraph.Builder.choices)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    succeeded = models.BooleanField(default=False)
    reason = models.CharField(max_length=30, choices=Reason.choices, blank=True)
    resolution_version = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    log = models.JSONField(default=list, blank=True, help_text="Per-round validation problems and usage.")
    graph = models.ForeignKey(HindsightGraph, null=True, blank=True, on_delete=models.SET_NULL)
    # LLM builds: what was asked and what it cost, kept whether the build succeeded or not.
    model_name = models.CharField(max_length=200, blank=True)
    structured_output = models.CharField(
        max_length=20, blank=True, help_text="How JSON was asked for: json_schema, tools or text."
    )
    prompts = models.JSONField(default=list, blank=True)
    token_usage = models.JSONField(default=dict, blank=True)
    stages = models.JSONField(
        default=list, blank=True, help_text="Per stage: calls, prompt/answer tokens, seconds, valid on first try."
    )
    fallback_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="fallbacks",
        help_text="The failed LLM attempt this offline build stood in for.",
    )

    class Meta:
        ordering = ["-started_at"]


class HindsightEvent(models.Model):
    class EventType(models.TextChoices):
        DECISION = "Decision"
        OUTCOME = "Outcome"
        INDICATOR = "Indicator"
        MILESTONE = "Milestone"
        EXTERNAL_SHOCK = "ExternalShock"

    class ReviewStatus(models.TextChoices):
        PENDING = "Pending"
        APPROVED = "Approved"
        REJECTED = "Rejected"
        REVISED = "Revised"

    graph = models.ForeignKey(HindsightGraph, on_delete=models.CASCADE, related_name="events")
    key = models.CharField(max_length=50, help_text="Event id within the graph.")
    title = models.CharField(max_length=500)
    description = models.TextField(blank=True)
    occurred_on = models.DateField()
    event_type = models.CharField(max_length=20, choices=EventType.choices)
    is_outcome = models.BooleanField(default=False)
    # What the builder said, kept when a reviewer revises the title or date.
    original_title = models.CharField(max_length=500, blank=True)
    original_occurred_on = models.DateField(null=True, blank=True)
    review_status = models.CharField(max_length=10, choices=ReviewStatus.choices, default=ReviewStatus.PENDING)
    sources = models.ManyToManyField(Article, blank=True, related_name="hindsight_events")
    # A reviewer who added this event from an archive item (the builder did not find it); the
    # offline builder seeds later versions of the graph with such items.
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["occurred_on", "id"]
        constraints = [models.UniqueConstraint(fields=["graph", "key"], name="event_unique_key")]

    def __str__(self) -> str:
        return self.title


class CausalLink(models.Model):
    class Relation(models.TextChoices):
        CAUSES = "Causes"
        ENABLES = "Enables"
        PREVENTS = "Prevents"
        INHIBITS = "Inhibits"
        AMPLIFIES = "Amplifies"
        TRIGGERS = "Triggers"
        CORRELATES = "Correlates"

    graph = models.ForeignKey(HindsightGraph, on_delete=models.CASCADE, related_name="links")
    source = models.ForeignKey(HindsightEvent, on_delete=models.CASCADE, related_name="outgoing")
    target = models.ForeignKey(HindsightEvent, on_delete=models.CASCADE, related_name="incoming")
    relation = models.CharField(max_length=12, choices=Relation.choices)
    strength = models.FloatField()
    confidence = models.FloatField()
    reasoning = models.TextField(blank=True)
    evidence = models.ManyToManyField(Article, blank=True, related_name="hindsight_links")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(strength__gte=-1) & Q(strength__lte=1), name="link_strength_range"),
            models.CheckConstraint(condition=Q(confidence__gte=0) & Q(confidence__lte=1), name="link_conf_range"),
        ]


class OutcomeImpact(models.Model):
    class Direction(models.TextChoices):
        POSITIVE = "Positive"
        NEGATIVE = "Negative"
        NEUTRAL = "Neutral"
        MIXED = "Mixed"

    event = models.OneToOneField(HindsightEvent, on_delete=models.CASCADE, related_name="impact")
    direction = models.CharField(max_length=10, choices=Direction.choices)
    magnitude = models.FloatField()
    confidence = models.FloatField()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(magnitude__gte=0) & Q(magnitude__lte=1), name="impact_mag_range"),
            models.CheckConstraint(condition=Q(confidence__gte=0) & Q(confidence__lte=1), name="impact_conf_range"),
            models.CheckConstraint(
                condition=~Q(direction="Neutral") | Q(magnitude__lte=0.3), name="impact_neutral_small"
            ),
        ]


class EventReview(models.Model):
    class Decision(models.TextChoices):
        APPROVE = "approve", "Approve"
        REJECT = "reject", "Reject"
        REVISE = "revise", "Revise"

    class RejectReason(models.TextChoices):
        FABRICATED = "Fabricated"
        WRONG_DATE = "WrongDate"
        SOURCE_MISMATCH = "SourceMismatch"
        PREDICTION_NOT_EVENT = "PredictionNotEvent"
        NOISE = "Noise"
        DUPLICATE = "Duplicate"
        TOO_BROAD = "TooBroad"
        UNVERIFIABLE = "Unverifiable"

    event = models.ForeignKey(HindsightEvent, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    decision = models.CharField(max_length=10, choices=Decision.choices)
    reason = models.CharField(max_length=20, choices=RejectReason.choices, blank=True)
    revised_title = models.CharField(max_length=500, blank=True)
    revised_date = models.DateField(null=True, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]


class HindsightBuildRequest(models.Model):
    """One automatic build per (question, resolution version): a duplicate task finds it claimed."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="hindsight_build_requests")
    resolution_version = models.PositiveIntegerField()
    claimed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["question", "resolution_version"], name="build_request_unique")]


class QuestionHindsight(Question):
    """Admin view of a question from the hindsight side: its graph versions and a rebuild button."""

    class Meta:
        proxy = True
        verbose_name = "question hindsight"
        verbose_name_plural = "question hindsight (rebuild graphs)"


class TextEmbedding(models.Model):
    """A sentence embedding computed once per distinct text and model, so that regrades and new
    worker processes read it instead of running the model again (grading.embeddings)."""

    model = models.CharField(max_length=80, help_text="The embedding model and its version.")
    digest = models.CharField(max_length=64, help_text="SHA-256 (hex) of the normalised text as the model read it.")
    vector = models.BinaryField(help_text="Little-endian float32 values, L2-normalised.")
    created_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["model", "digest"], name="text_embedding_unique")]
