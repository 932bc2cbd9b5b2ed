"""Fixtures of the endpoint tests: a local agent server, an agent with a registered endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from endpoints.services.registration import IssuedSecret, endpoint_register
from tests.endpoints.agent_server import AgentServer


@pytest.fixture
def agent_server() -> Iterator[AgentServer]:
    """A forecasting agent's endpoint on 127.0.0.1 (see tests/endpoints/agent_server.py)."""
    server = AgentServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fast_deliveries(settings: Any) -> Any:
    """Short timeouts and backoffs, so failing and slow agents are quick to test."""
    settings.HINDSIGHT_DELIVERY_TIMEOUT_SECONDS = 1.0
    settings.HINDSIGHT_DELIVERY_BACKOFF_BASE_SECONDS = 10.0
    settings.HINDSIGHT_DELIVERY_BACKOFF_MAX_SECONDS = 600.0
    settings.HINDSIGHT_DELIVERY_MAX_ATTEMPTS = 3
    return settings


@pytest.fixture
def endpoint(agent: Any, owner: Any, agent_server: AgentServer, fast_deliveries: Any) -> IssuedSecret:
    """The owner's agent with an endpoint at the local agent server, which knows the secret."""
    issued = endpoint_register(agent=agent, url=agent_server.url, created_by=owner)
    agent_server.secret = issued.secret
    return issued
