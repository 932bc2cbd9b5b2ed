"""Reads: which deliveries are due, an agent's endpoint, whether it still works, and its delivery log."""

from __future__ import annotations

import uuid
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db.models import Count, Prefetch, QuerySet

from endpoints.models import AgentEndpoint, Delivery, DeliveryAttempt
from leaderboard.models import Agent
from leaderboard.selectors.agent_access import AccessRefusal, agent_access_refusal


def endpoint_access_refusal(*, endpoint: AgentEndpoint, agent: Agent) -> AccessRefusal | None:
    """Why the platform may no longer deliver to this endpoint (the agent is retired, or whoever
    registered it was deleted, deactivated or left the team), or None: the access rule tokens follow.
    A person always registers an endpoint, so one without ``created_by`` lost its registrant."""
    holder = get_user_model().objects.filter(pk=endpoint.created_by_id).first() if endpoint.created_by_id else None
    return agent_access_refusal(agent=agent, holder=holder, credential="endpoint", holder_deleted=holder is None)


def endpoint_for_agent(*, agent: Agent) -> AgentEndpoint | None:
    return AgentEndpoint.objects.filter(agent=agent).select_related("created_by").first()


def deliveries_due(*, now: datetime, limit: int) -> list[uuid.UUID]:
    """Due waiting deliveries, oldest first, at most as many per agent as it has free slots."""
    candidates = list(
        Delivery.objects.filter(status=Delivery.Status.PENDING, next_attempt_at__lte=now)
        .order_by("next_attempt_at", "created_at")
        .values_list("pk", "agent_id")[: limit * 4]
    )
    if not candidates:
        return []
    agent_ids = {agent_id for _, agent_id in candidates}
    sending = dict(
        Delivery.objects.filter(agent_id__in=agent_ids, status=Delivery.Status.SENDING)
        .values("agent_id")
        .annotate(n=Count("pk"))
        .values_list("agent_id", "n")
    )
    free = {
        agent_id: max(0, slots - sending.get(agent_id, 0))
        for agent_id, slots in AgentEndpoint.objects.filter(agent_id__in=agent_ids).values_list(
            "agent_id", "max_concurrency"
        )
    }
    picked: list[uuid.UUID] = []
    for pk, agent_id in candidates:
        if agent_id not in free:
            picked.append(pk)  # no endpoint any more: the claim cancels it
        elif free[agent_id] > 0:
            free[agent_id] -= 1
            picked.append(pk)
        if len(picked) >= limit:
            break
    return picked


def delivery_next_due_for_agent(*, agent_id: int, now: datetime) -> uuid.UUID | None:
    return (
        Delivery.objects.filter(agent_id=agent_id, status=Delivery.Status.PENDING, next_attempt_at__lte=now)
        .order_by("next_attempt_at", "created_at")
        .values_list("pk", flat=True)
        .first()
    )


def delivery_log_for_agent(*, agent: Agent) -> QuerySet[Delivery]:
    """The agent's deliveries, newest first, each with its attempts in order."""
    return (
        Delivery.objects.filter(agent=agent)
        .select_related("question", "requested_by")
        .prefetch_related(Prefetch("attempt_log", queryset=DeliveryAttempt.objects.order_by("number")))
        .order_by("-created_at", "-pk")
    )
