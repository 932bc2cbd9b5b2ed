"""Registering, changing, pausing and removing an agent's endpoint; its secret is shown once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from endpoints.addresses import endpoint_url_check
from endpoints.models import AgentEndpoint, Delivery
from endpoints.secret_box import SHOWN_PREFIX_LENGTH, secret_encrypt, secret_generate
from leaderboard.models import Agent


@dataclass(frozen=True)
class IssuedSecret:
    endpoint: AgentEndpoint
    secret: str  # shown once; stored encrypted


def _clean(*, url: str, max_concurrency: int | None) -> tuple[str, int]:
    errors: dict[str, str] = {}
    try:
        url = endpoint_url_check(url, allow_loopback=settings.HINDSIGHT_DELIVERY_ALLOW_LOOPBACK)
    except ValidationError as exc:
        errors.update({k: v[0] for k, v in exc.message_dict.items()})
    if len(url) > 2000:
        errors["url"] = "The URL is longer than 2000 characters."
    limit = settings.HINDSIGHT_DELIVERY_MAX_CONCURRENCY
    concurrency = settings.HINDSIGHT_DELIVERY_CONCURRENCY if max_concurrency is None else max_concurrency
    if not 1 <= concurrency <= limit:
        errors["max_concurrency"] = f"Allow between 1 and {limit} deliveries in flight at once."
    if errors:
        raise ValidationError(errors)
    return url, min(concurrency, limit)


def _cancel_waiting(*, agent: Agent, reason: str, now: datetime) -> int:
    """Cancel the agent's deliveries not yet sent (one being sent finishes and is logged)."""
    return Delivery.objects.filter(agent=agent, status=Delivery.Status.PENDING).update(
        status=Delivery.Status.CANCELLED, finished_at=now, last_error=reason, next_attempt_at=None
    )


@transaction.atomic
def endpoint_register(
    *,
    agent: Agent,
    url: str,
    max_concurrency: int | None = None,
    offer_live: bool = True,
    created_by: AbstractBaseUser,
    now: datetime | None = None,
) -> IssuedSecret:
    """Register the agent's endpoint with a new signing secret (returned once). A person registers
    it: deliveries stop when that person's account is deleted or deactivated, or they leave the team."""
    now = now or timezone.now()
    if agent.retired_at is not None:
        raise ValidationError({"url": f"{agent.name} is retired: the platform delivers nothing to it."})
    url, concurrency = _clean(url=url, max_concurrency=max_concurrency)
    if AgentEndpoint.objects.filter(agent=agent).exists():
        raise ValidationError({"url": f"{agent.name} already has an endpoint; change it or remove it first."})
    secret = secret_generate()
    endpoint = AgentEndpoint.objects.create(
        agent=agent,
        url=url,
        secret_ciphertext=secret_encrypt(secret),
        secret_prefix=secret[:SHOWN_PREFIX_LENGTH],
        max_concurrency=concurrency,
        offer_live=offer_live,
        created_by=created_by,  # type: ignore[misc]
        created_at=now,
        secret_rotated_at=now,
    )
    return IssuedSecret(endpoint=endpoint, secret=secret)


@transaction.atomic
def endpoint_update(
    *, endpoint: AgentEndpoint, url: str, max_concurrency: int | None = None, offer_live: bool = True
) -> AgentEndpoint:
    """Change the address or limits; the secret stays."""
    url, concurrency = _clean(url=url, max_concurrency=max_concurrency)
    endpoint.url = url
    endpoint.max_concurrency = concurrency
    endpoint.offer_live = offer_live
    endpoint.save(update_fields=["url", "max_concurrency", "offer_live"])
    return endpoint


@transaction.atomic
def endpoint_rotate_secret(*, endpoint: AgentEndpoint, now: datetime | None = None) -> IssuedSecret:
    """A new secret, effective for every attempt from now on (the old one stops at once)."""
    now = now or timezone.now()
    secret = secret_generate()
    endpoint.secret_ciphertext = secret_encrypt(secret)
    endpoint.secret_prefix = secret[:SHOWN_PREFIX_LENGTH]
    endpoint.secret_rotated_at = now
    endpoint.save(update_fields=["secret_ciphertext", "secret_prefix", "secret_rotated_at"])
    return IssuedSecret(endpoint=endpoint, secret=secret)


@transaction.atomic
def endpoint_pause(*, endpoint: AgentEndpoint, now: datetime | None = None) -> AgentEndpoint:
    """Stop calling the endpoint: waiting deliveries are cancelled, new questions are not offered."""
    now = now or timezone.now()
    if endpoint.paused_at is None:
        endpoint.paused_at = now
        endpoint.save(update_fields=["paused_at"])
        _cancel_waiting(agent=endpoint.agent, reason="the team paused the endpoint", now=now)
    return endpoint


@transaction.atomic
def endpoint_resume(*, endpoint: AgentEndpoint) -> AgentEndpoint:
    if endpoint.paused_at is not None:
        endpoint.paused_at = None
        endpoint.save(update_fields=["paused_at"])
    return endpoint


@transaction.atomic
def endpoint_remove(*, endpoint: AgentEndpoint, now: datetime | None = None) -> None:
    """Forget the endpoint and its secret; the delivery log stays."""
    now = now or timezone.now()
    _cancel_waiting(agent=endpoint.agent, reason="the team removed the endpoint", now=now)
    endpoint.delete()
