"""Deliveries: creating them, claiming one for an attempt, recording what the attempt came to.

Lifecycle: ``pending`` -> (claim) ``sending`` -> ``answered`` | ``acknowledged`` | ``refused``, or
back to ``pending`` with a backoff after a failed attempt, ``failed`` after the last one, and
``cancelled`` when the question stops taking forecasts or the endpoint is paused or removed.

No function here makes the HTTP call: a claim is one short transaction, the call happens outside
any transaction, and the result is recorded in another short one, conditional on the claim.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, OperationalError, connections, transaction
from django.db.models import F
from django.utils import timezone

from endpoints.models import AgentEndpoint, Delivery, DeliveryAttempt
from endpoints.selectors import endpoint_access_refusal
from ingestion.models import Question
from leaderboard.models import Agent
from leaderboard.selectors.agent_access import agent_access_refusal, memberships_of
from leaderboard.selectors.questions import replay_not_offered
from leaderboard.services.errors import ForecastConflict, NotFound
from leaderboard.services.replay_sessions import replay_session_open

T = TypeVar("T")

FAILURES = frozenset(
    {
        DeliveryAttempt.Outcome.HTTP_ERROR,
        DeliveryAttempt.Outcome.TIMEOUT,
        DeliveryAttempt.Outcome.CONNECTION,
        DeliveryAttempt.Outcome.BLOCKED,
        DeliveryAttempt.Outcome.LOST,
    }
)
_FINAL_STATUS: dict[str, Delivery.Status] = {
    DeliveryAttempt.Outcome.ANSWERED: Delivery.Status.ANSWERED,
    DeliveryAttempt.Outcome.ACKNOWLEDGED: Delivery.Status.ACKNOWLEDGED,
    DeliveryAttempt.Outcome.REFUSED: Delivery.Status.REFUSED,
}


def question_not_accepting(*, question: Question, now: datetime) -> str | None:
    """Why the question takes no forecasts now (so there is nothing to deliver), or None."""
    if question.track == Question.Track.LIVE:
        if question.status != Question.Status.OPEN:
            return f"question {question.pk} is {question.status}; live questions take forecasts only while open"
        if now < question.open_at:
            return f"question {question.pk} opens for forecasts at {question.open_at.isoformat()}"
        if now >= question.close_at:
            return f"question {question.pk} stopped taking forecasts at {question.close_at.isoformat()}"
        return None
    return replay_not_offered(question, what="deliveries")


@transaction.atomic
def delivery_request(
    *, agent: Agent, question_id: int, requested_by: AbstractBaseUser | None = None, now: datetime | None = None
) -> tuple[Delivery, bool]:
    """Deliver a question to the agent's endpoint now: (delivery, created).

    A replay question first gets the agent's replay session (created once, never changed). While a
    delivery of the same question to the agent is waiting or being sent, that one is returned.
    Raises NotFound (unknown question) or ForecastConflict (no endpoint, paused, not accepting).
    """
    now = now or timezone.now()
    endpoint = AgentEndpoint.objects.filter(agent=agent).first()
    if endpoint is None:
        raise ForecastConflict(
            f"agent {agent.slug} has no endpoint registered; register one on the agent's page", field="endpoint"
        )
    if not endpoint.is_active:
        raise ForecastConflict(f"agent {agent.slug}'s endpoint is paused; resume it first", field="endpoint")
    refusal = endpoint_access_refusal(endpoint=endpoint, agent=agent)
    if refusal is not None:
        raise ForecastConflict(refusal.message, field="endpoint")
    question = Question.objects.exclude(status=Question.Status.DRAFT).filter(pk=question_id).first()
    if question is None:
        raise NotFound(f"question {question_id} does not exist", field="question")
    problem = question_not_accepting(question=question, now=now)
    if problem:
        raise ForecastConflict(problem, field="question")
    session = None
    if question.track == Question.Track.REPLAY:
        session, _ = replay_session_open(agent=agent, question_id=question.pk, now=now)
    active = Delivery.objects.filter(agent=agent, question=question, status__in=Delivery.ACTIVE_STATUSES)
    existing = active.first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            delivery = Delivery.objects.create(
                agent=agent,
                question=question,
                session=session,
                trigger=Delivery.Trigger.REQUEST,
                requested_by=requested_by,  # type: ignore[misc]
                next_attempt_at=now,
                created_at=now,
            )
    except IntegrityError:
        # A concurrent request created it first (one active delivery per agent and question).
        return active.get(), False
    return delivery, True


def deliveries_offer_live(
    *, now: datetime | None = None, question_ids: Sequence[int] | None = None, limit: int | None = None
) -> list[uuid.UUID]:
    """Offer live questions taking forecasts now to every active endpoint that wants them.

    Each (agent, question) pair is offered once: pairs with any delivery already are skipped and a
    unique constraint keeps concurrent offers to one. Returns the ids of the new deliveries.
    """
    now = now or timezone.now()
    endpoints = list(
        AgentEndpoint.objects.filter(paused_at=None, offer_live=True, agent__retired_at=None).select_related(
            "agent", "created_by"
        )
    )
    members = memberships_of(pairs=[(e.agent.team_id, e.created_by_id) for e in endpoints])
    agent_ids = [
        e.agent_id
        for e in endpoints
        if agent_access_refusal(
            agent=e.agent,
            holder=e.created_by,
            holder_is_member=(e.agent.team_id, e.created_by_id) in members,
            holder_deleted=e.created_by is None,
            credential="endpoint",
        )
        is None
    ]
    if not agent_ids:
        return []
    questions = Question.objects.filter(
        track=Question.Track.LIVE, status=Question.Status.OPEN, open_at__lte=now, close_at__gt=now
    )
    if question_ids is not None:
        questions = questions.filter(pk__in=list(question_ids))
    open_ids = list(questions.order_by("open_at", "pk").values_list("pk", flat=True))
    if not open_ids:
        return []
    seen = set(
        Delivery.objects.filter(agent_id__in=agent_ids, question_id__in=open_ids).values_list("agent_id", "question_id")
    )
    new = [
        Delivery(
            agent_id=agent_id,
            question_id=question_id,
            trigger=Delivery.Trigger.OPENED,
            next_attempt_at=now,
            created_at=now,
        )
        for question_id in open_ids
        for agent_id in agent_ids
        if (agent_id, question_id) not in seen
    ][:limit]
    if not new:
        return []
    Delivery.objects.bulk_create(new, ignore_conflicts=True)
    return [d.pk for d in new]


@dataclass(frozen=True)
class ClaimedDelivery:
    """A delivery held for one attempt: what the attempt needs, read in the claim's transaction."""

    delivery: Delivery
    claim: uuid.UUID
    attempt: int
    url: str
    secret_ciphertext: str
    holder_id: int | None = None  # who registered the endpoint (the evidence token carries it)


def _cancel(*, delivery_id: uuid.UUID, reason: str, now: datetime) -> None:
    Delivery.objects.filter(pk=delivery_id, status=Delivery.Status.PENDING).update(
        status=Delivery.Status.CANCELLED, finished_at=now, last_error=reason, next_attempt_at=None
    )


def delivery_claim(*, delivery_id: uuid.UUID | str, now: datetime) -> ClaimedDelivery | None:
    """Take a due delivery for one attempt, or None: not due, taken, or the agent is at its limit.

    The agent's endpoint row is locked for the claim's short transaction so that two workers
    cannot both see a free slot; the slot count is the agent's deliveries being sent.
    """
    delivery = (
        Delivery.objects.select_related("agent", "question", "session").filter(pk=delivery_id).first()
        if _is_uuid(delivery_id)
        else None
    )
    if delivery is None or delivery.status != Delivery.Status.PENDING:
        return None
    if delivery.next_attempt_at is not None and delivery.next_attempt_at > now:
        return None
    return _sqlite_retry(lambda: _claim(delivery=delivery, now=now))


@transaction.atomic
def _claim(*, delivery: Delivery, now: datetime) -> ClaimedDelivery | None:
    endpoints = AgentEndpoint.objects.filter(agent_id=delivery.agent_id)
    if connections[endpoints.db].vendor == "sqlite":
        # SQLite has no row locks: take the database's write lock with the transaction's first
        # statement (a transaction that read first cannot write once another has).
        endpoints.update(max_concurrency=F("max_concurrency"))
        endpoint = endpoints.first()
    else:
        endpoint = endpoints.select_for_update().first()
    if endpoint is None or not endpoint.is_active:
        _cancel(delivery_id=delivery.pk, reason="the endpoint was removed or paused", now=now)
        return None
    refusal = endpoint_access_refusal(endpoint=endpoint, agent=delivery.agent)
    if refusal is not None:
        _cancel(delivery_id=delivery.pk, reason=f"access ended ({refusal.code}): {refusal.message}", now=now)
        return None
    problem = question_not_accepting(question=delivery.question, now=now)
    if problem:
        _cancel(delivery_id=delivery.pk, reason=problem, now=now)
        return None
    sending = Delivery.objects.filter(agent_id=delivery.agent_id, status=Delivery.Status.SENDING).count()
    if sending >= endpoint.max_concurrency:
        return None  # stays pending: a finishing delivery or the sweeper starts it
    claim = uuid.uuid4()
    taken = Delivery.objects.filter(pk=delivery.pk, status=Delivery.Status.PENDING, attempts=delivery.attempts).update(
        status=Delivery.Status.SENDING, claim=claim, claimed_at=now, attempts=F("attempts") + 1
    )
    if not taken:
        return None
    return ClaimedDelivery(
        delivery=delivery,
        claim=claim,
        attempt=delivery.attempts + 1,
        url=endpoint.url,
        secret_ciphertext=endpoint.secret_ciphertext,
        holder_id=endpoint.created_by_id,
    )


def _sqlite_retry(work: Callable[[], T], *, tries: int = 20) -> T:
    """Run a short transaction again while SQLite reports the database locked by another writer
    (past its busy timeout, or at once for a shared-cache database); other errors pass through."""
    for attempt in range(1, tries + 1):
        try:
            return work()
        except OperationalError as exc:
            if "locked" not in str(exc) or attempt == tries:
                raise
            time.sleep(0.02 * attempt)
    raise AssertionError("unreachable")


def _is_uuid(value: uuid.UUID | str) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class AttemptResult:
    outcome: str  # DeliveryAttempt.Outcome
    started_at: datetime
    url: str = ""
    latency_ms: int | None = None
    status_code: int | None = None
    error: str = ""
    forecast_id: int | None = None
    retry_after_seconds: float | None = None


def delivery_backoff_seconds(*, attempt: int, retry_after_seconds: float | None = None) -> float:
    """Wait after failed attempt ``attempt``: BASE * 2**(attempt-1) capped at MAX, plus up to 10%
    jitter (agents failing together do not all come back at once); at least the agent's Retry-After."""
    base = settings.HINDSIGHT_DELIVERY_BACKOFF_BASE_SECONDS
    ceiling = settings.HINDSIGHT_DELIVERY_BACKOFF_MAX_SECONDS
    wait = min(ceiling, base * 2 ** max(0, attempt - 1))
    wait += wait * 0.1 * random.random()
    if retry_after_seconds is not None:
        wait = max(wait, min(retry_after_seconds, ceiling))
    return wait


def delivery_attempt_record(
    *, claimed: ClaimedDelivery, result: AttemptResult, now: datetime
) -> Delivery.Status | None:
    """Log the attempt and move the delivery on; None (and nothing written) if the claim was lost."""
    return _sqlite_retry(lambda: _record(claimed=claimed, result=result, now=now))


@transaction.atomic
def _record(*, claimed: ClaimedDelivery, result: AttemptResult, now: datetime) -> Delivery.Status | None:
    failed = result.outcome in FAILURES
    max_attempts = settings.HINDSIGHT_DELIVERY_MAX_ATTEMPTS
    updates: dict[str, object] = {"claim": None, "claimed_at": None}
    if not failed:
        status = _FINAL_STATUS[result.outcome]
        updates.update(status=status, finished_at=now, next_attempt_at=None, last_error=result.error)
        if result.forecast_id is not None:
            updates["forecast_id"] = result.forecast_id
    elif claimed.attempt >= max_attempts:
        status = Delivery.Status.FAILED
        updates.update(
            status=status,
            finished_at=now,
            next_attempt_at=None,
            last_error=f"gave up after {claimed.attempt} attempts; the last one: {result.error}",
        )
    else:
        status = Delivery.Status.PENDING
        wait = delivery_backoff_seconds(attempt=claimed.attempt, retry_after_seconds=result.retry_after_seconds)
        updates.update(status=status, next_attempt_at=now + timedelta(seconds=wait), last_error=result.error)
    held = Delivery.objects.filter(pk=claimed.delivery.pk, status=Delivery.Status.SENDING, claim=claimed.claim)
    if not held.update(**updates):
        return None
    DeliveryAttempt.objects.create(
        delivery_id=claimed.delivery.pk,
        number=claimed.attempt,
        url=result.url,
        started_at=result.started_at,
        latency_ms=result.latency_ms,
        status_code=result.status_code,
        outcome=result.outcome,
        error=result.error,
    )
    return status


def deliveries_reclaim_stale(*, now: datetime, limit: int = 100) -> int:
    """Deliveries whose worker vanished mid-attempt: log the attempt as lost and retry (or give up)."""
    cutoff = now - timedelta(seconds=settings.HINDSIGHT_DELIVERY_CLAIM_STALE_SECONDS)
    stale = Delivery.objects.select_related("agent").filter(status=Delivery.Status.SENDING, claimed_at__lt=cutoff)
    reclaimed = 0
    for delivery in stale.order_by("claimed_at")[:limit]:
        assert delivery.claim is not None and delivery.claimed_at is not None
        claimed = ClaimedDelivery(
            delivery=delivery, claim=delivery.claim, attempt=delivery.attempts, url="", secret_ciphertext=""
        )
        lost = AttemptResult(
            outcome=DeliveryAttempt.Outcome.LOST,
            started_at=delivery.claimed_at,
            error="the worker stopped during the attempt and recorded no result",
        )
        if delivery_attempt_record(claimed=claimed, result=lost, now=now) is not None:
            reclaimed += 1
    return reclaimed
