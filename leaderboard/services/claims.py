"""Grading claims: one live run per question.

A run claims a question with a conditional UPDATE of its ``QuestionGradingState`` (``claimed_at``
is the claim's token: the run's ``now``) and keeps the claim alive with a heartbeat: a thread of
the run stamps ``heartbeat_at`` every HINDSIGHT_GRADING_HEARTBEAT_SECONDS while it grades. A claim
whose heartbeat is older than HINDSIGHT_GRADING_CLAIM_STALE_SECONDS belongs to a run that died (a
worker killed mid-run), and the next run that asks takes it over: a redelivered or swept task
grades the question within a minute instead of waiting for a long timeout. A worker killed with
its whole process group leaves no task for Celery to redeliver before the broker's visibility
timeout; the recovery task (``recover_abandoned_grading``, every HINDSIGHT_GRADING_RECOVERY_SECONDS)
finds its abandoned claims and sends their questions to be graded again. Heartbeats use the wall
clock, not the run's ``now`` (which a caller may fix), because liveness is about real time.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError, connection, connections
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from leaderboard.models import QuestionGradingState
from leaderboard.selectors.grading_claims import abandoned_claim

logger = logging.getLogger(__name__)


def _claimable(question_id: int) -> Q:
    """Free, or held by a run whose last sign of life (heartbeat, else the claim) is older than the stale limit."""
    return Q(question_id=question_id) & (Q(claimed_at__isnull=True) | abandoned_claim())


def grading_claim(*, question_id: int, now: datetime) -> bool:
    """Take the question for this run; False when a live run holds it."""
    claim = QuestionGradingState.objects.filter(_claimable(question_id))
    # Computed per claim: a prefork pool's children share the parent's imports, not its pid.
    values = {"claimed_at": now, "heartbeat_at": timezone.now(), "claimed_by": f"{socket.gethostname()}:{os.getpid()}"}
    if claim.update(**values) == 1:
        return True
    # No state row yet (the question's first run), or a live claim by another run: create the row
    # if it is missing (a no-op when it exists) and try once more.
    QuestionGradingState.objects.bulk_create([QuestionGradingState(question_id=question_id)], ignore_conflicts=True)
    return claim.update(**values) == 1


def released(claimed_at: datetime) -> Case:
    """``claimed_at`` after releasing our claim: NULL if it is still ours, else untouched (taken over)."""
    return Case(When(claimed_at=claimed_at, then=Value(None)), default=F("claimed_at"))


@contextmanager
def claims_kept_alive(question_ids: Sequence[int], *, claimed_at: datetime) -> Iterator[None]:
    """Stamp the heartbeat of our claims on these questions until the block ends.

    Inside a caller's transaction the claims are invisible to other runs until it commits, so
    there is nothing to keep alive (and a second connection would wait on the caller's locks).
    """
    if connection.in_atomic_block or not question_ids:
        yield
        return
    stop = threading.Event()
    interval = max(0.1, float(settings.HINDSIGHT_GRADING_HEARTBEAT_SECONDS))

    def beat() -> None:
        try:
            while not stop.wait(interval):
                try:
                    QuestionGradingState.objects.filter(
                        question_id__in=list(question_ids), claimed_at=claimed_at
                    ).update(heartbeat_at=timezone.now())
                except DatabaseError:
                    logger.warning("grading heartbeat failed for questions %s; retrying", list(question_ids))
        finally:
            connections.close_all()  # this thread's connection

    thread = threading.Thread(target=beat, name="grading-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
