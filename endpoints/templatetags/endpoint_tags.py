"""``{% agent_endpoint_section %}``: the endpoint and delivery log on an agent's page."""

from __future__ import annotations

from typing import Any

from django import template

from endpoints.forms import DeliveryRequestForm, EndpointForm
from endpoints.selectors import delivery_log_for_agent, endpoint_access_refusal, endpoint_for_agent

register = template.Library()

LOG_ROWS = 25


@register.inclusion_tag("endpoints/_agent_section.html", takes_context=True)
def agent_endpoint_section(context: template.Context) -> dict[str, Any]:
    agent = context["agent"]
    endpoint = endpoint_for_agent(agent=agent)
    form = None
    if endpoint is not None:
        form = EndpointForm(
            initial={
                "url": endpoint.url,
                "max_concurrency": endpoint.max_concurrency,
                "offer_live": endpoint.offer_live,
            }
        )
    deliveries = list(delivery_log_for_agent(agent=agent)[:LOG_ROWS])
    for delivery in deliveries:
        attempts = list(delivery.attempt_log.all())
        delivery.last_attempt = attempts[-1] if attempts else None  # type: ignore[attr-defined]
    return {
        "agent": agent,
        "team": context["team"],
        "access": context["access"],
        "csrf_token": context.get("csrf_token"),
        "endpoint": endpoint,
        # Why the platform no longer delivers to it (retired agent, registrant gone), or None.
        "endpoint_ended": endpoint_access_refusal(endpoint=endpoint, agent=agent) if endpoint is not None else None,
        "endpoint_form": form or EndpointForm(),
        "delivery_form": DeliveryRequestForm(),
        "deliveries": deliveries,
        "log_rows": LOG_ROWS,
    }
