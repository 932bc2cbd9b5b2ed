"""The reference agent stopped in the middle of its replay questions (an interrupt after the first
forecast) leaves no replay session open: the sessions it opened and did not forecast in are closed
on the way out, so the agent is not shut out of evidence as of now afterwards."""

from __future__ import annotations

from typing import Any

import pytest

from hindsight_client import Client
from leaderboard.baselines import reference_agent_module
from leaderboard.models import Agent, Forecast, ReplaySession
from tests.factories import ArticleFactory
from tests.leaderboard.api_support import live_question, replay_question

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_interrupted_run_closes_the_sessions_it_did_not_forecast_in(
    live_server: Any, agent: Agent, agent_key: str
) -> None:
    replays = [replay_question("binary", title=f"Will the canal lock {n} reopen?") for n in range(3)]
    live = live_question("binary", title="Will the canal ferry sail?")
    ArticleFactory(title="Canal ferry timetable published")
    lines: list[str] = []

    def interrupt_after_the_first_question(line: str) -> None:
        lines.append(line)
        if len(lines) == 1:
            raise KeyboardInterrupt

    agent_module = reference_agent_module()
    with pytest.raises(KeyboardInterrupt):
        agent_module.run(live_server.url, agent_key, log=interrupt_after_the_first_question)

    sessions = ReplaySession.objects.filter(agent=agent)
    assert sessions.count() == 3
    forecast = Forecast.objects.get(agent=agent)
    assert forecast.question_id in {q.pk for q in replays}
    assert set(sessions.filter(closed_at__isnull=True).values_list("pk", flat=True)) == {forecast.session_id}
    assert sum(line.startswith("Closed replay session") for line in lines) == 2
    with Client(live_server.url, agent_key) as hs:
        assert hs.search_articles("ferry", question=live.pk).count == 1  # no session holds it back
