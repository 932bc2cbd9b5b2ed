"""Huge, negative, non-numeric or over-the-maximum paging on every list: 400 naming the parameter."""

from __future__ import annotations

import httpx
import pytest

from leaderboard.models import Agent
from tests.leaderboard.hostile_requests import LISTS, PAGING_PROBES, Probe, refused_storing_nothing
from tests.leaderboard.hostile_world import hostile_world

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("probe", PAGING_PROBES, ids=lambda p: p.name)
def test_refused_with_a_named_4xx_and_nothing_stored(probe: Probe, agent: Agent, agent_http: httpx.Client) -> None:
    refused_storing_nothing(probe, agent, agent_http)


@pytest.mark.parametrize("name", sorted(LISTS))
def test_the_documented_maximum_is_served(name: str, agent: Agent, agent_http: httpx.Client) -> None:
    world = hostile_world(agent)
    path, params = LISTS[name]
    maximum = {"articles": 50}.get(name, 200)
    query = {k: v.format(**world) for k, v in params.items()}
    response = agent_http.get(path, params={**query, "limit": maximum, "offset": 1_000_000_000})
    assert response.status_code == 200, response.text
    assert agent_http.get(path, params={**query, "limit": maximum + 1}).status_code == 400
