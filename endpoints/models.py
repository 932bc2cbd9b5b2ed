"""Agents the platform calls: an agent's HTTPS endpoint, the questions delivered to it, each attempt."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from ingestion.models import Question
from leaderboard.models import Agent, Forecast, ReplaySession


class AgentEndpoint(models.Model):
    """Where the platform POSTs questions for an agent, and the secret it signs them with.

    The platform must sign, so it cannot keep only a hash of the secret (as it does for API keys):
    the secret is stored encrypted (Fernet, keys from HINDSIGHT_ENDPOINT_SECRET_KEYS) and shown to
    the team once, when created or rotated.
    """

    agent = models.OneToOneField(Agent, on_delete=models.CASCADE, related_name="endpoint")
    url = models.URLField(max_length=2000)
    secret_ciphertext = models.TextField()
    secret_prefix = models.CharField(max_length=16, help_text="The secret's first characters, to tell secrets apart.")
    max_concurrency = models.PositiveSmallIntegerField(default=2, help_text="Deliveries in flight at once, at most.")
    offer_live = models.BooleanField(default=True, help_text="Deliver every live question when it opens.")
    paused_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField()
    secret_rotated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.agent} -> {self.url}"

    @property
    def is_active(self) -> bool:
        return self.paused_at is None


class Delivery(models.Model):
    """One question sent to one agent's endpoint; its id is the delivery id the agent sees.

    Claimed for an attempt with a conditional UPDATE (``pending`` -> ``sending``, a fresh ``claim``);
    the attempt's result is recorded only while that claim still holds, so a duplicate task or a
    worker that lost its claim to the sweeper changes nothing.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting"
        SENDING = "sending", "Sending"
        ANSWERED = "answered", "Answered with a forecast"
        ACKNOWLEDGED = "acknowledged", "Acknowledged (answer through the API)"
        REFUSED = "refused", "Answer refused"
        FAILED = "failed", "Gave up"
        CANCELLED = "cancelled", "Cancelled"

    class Trigger(models.TextChoices):
        OPENED = "opened", "Question opened"
        REQUEST = "request", "Requested"

    ACTIVE_STATUSES = (Status.PENDING, Status.SENDING)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="deliveries")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="deliveries")
    session = models.ForeignKey(ReplaySession, null=True, blank=True, on_delete=models.CASCADE)
    trigger = models.CharField(max_length=10, choices=Trigger.choices)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=15, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    claim = models.UUIDField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    forecast = models.ForeignKey(Forecast, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = "deliveries"
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "question"], condition=Q(trigger="opened"), name="delivery_one_offer_per_question"
            ),
            models.UniqueConstraint(
                fields=["agent", "question"],
                condition=Q(status__in=["pending", "sending"]),
                name="delivery_one_active_per_question",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="delivery_due"),
            models.Index(fields=["agent", "status"], name="delivery_agent_status"),
        ]

    def __str__(self) -> str:
        return f"delivery {self.pk} of question {self.question_id} to {self.agent_id}"

    @property
    def idempotency_key(self) -> str:
        """The key of the forecast this delivery's answer stores: one delivery, at most one forecast."""
        return f"delivery-{self.pk}"


class DeliveryAttempt(models.Model):
    """One POST to the endpoint: what came back, how long it took, what went wrong."""

    class Outcome(models.TextChoices):
        ANSWERED = "answered", "Forecast stored"
        ACKNOWLEDGED = "acknowledged", "Acknowledged"
        REFUSED = "refused", "Answer refused"
        HTTP_ERROR = "http_error", "HTTP error"
        TIMEOUT = "timeout", "Timed out"
        CONNECTION = "connection", "Connection failed"
        BLOCKED = "blocked", "Address refused"
        LOST = "lost", "Worker lost"

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveSmallIntegerField()
    url = models.URLField(max_length=2000, blank=True)
    started_at = models.DateTimeField()
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=15, choices=Outcome.choices)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="delivery_attempt_unique_number")]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.delivery_id}"
