"""Grading claims seen from outside: which claims belong to runs that died.

A run's claim stays alive while its heartbeat does (``leaderboard.services.claims``); a claim whose
last sign of life (the heartbeat, else the claim itself) is older than
HINDSIGHT_GRADING_CLAIM_STALE_SECONDS was left by a run that died, such as a worker killed with
its whole process group, whose task message Redis will not hand out again before the visibility
timeout.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from leaderboard.models import QuestionGradingState


def abandoned_claim() -> Q:
    """Claims silent for longer than the stale limit (wall clock: liveness is about real time)."""
    stale = timezone.now() - timedelta(seconds=settings.HINDSIGHT_GRADING_CLAIM_STALE_SECONDS)
    return Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True, claimed_at__lt=stale)


def questions_with_abandoned_claims(*, limit: int) -> list[int]:
    """Questions claimed by a run that died, oldest claim first."""
    rows = (
        QuestionGradingState.objects.filter(Q(claimed_at__isnull=False) & abandoned_claim())
        .order_by("claimed_at")
        .values_list("question_id", flat=True)[:limit]
    )
    return list(rows)
