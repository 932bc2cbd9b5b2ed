"""JSON nested thousands deep (or deeper than any forecast): 400, nothing stored, no recursion crash."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from leaderboard.models import Agent
from tests.leaderboard.hostile_requests import DEPTH_PROBES, Probe, assert_refused, stored
from tests.leaderboard.hostile_world import hostile_world

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("probe", DEPTH_PROBES, ids=lambda p: p.name)
def test_refused_with_a_named_4xx_and_nothing_stored(probe: Probe, agent: Agent, agent_http: httpx.Client) -> None:
    world: dict[str, Any] = hostile_world(agent)
    before = stored()
    assert_refused(probe, probe.send(agent_http, world))
    assert stored() == before
