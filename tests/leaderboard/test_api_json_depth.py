"""JSON nested thousands deep (or deeper than any forecast): 400, nothing stored, no recursion crash."""

from __future__ import annotations

import httpx
import pytest

from leaderboard.models import Agent
from tests.leaderboard.hostile_requests import DEPTH_PROBES, Probe, refused_storing_nothing

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("probe", DEPTH_PROBES, ids=lambda p: p.name)
def test_refused_with_a_named_4xx_and_nothing_stored(probe: Probe, agent: Agent, agent_http: httpx.Client) -> None:
    refused_storing_nothing(probe, agent, agent_http)
