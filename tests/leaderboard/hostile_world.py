"""The world the hostile-request tests run in: a live question, a replay session, some evidence.

The agent already forecasts the live question, so the gateway serves it as-of-now evidence while its
replay session is open (an agent in a replay session reads now only for live questions it forecasts).
"""

from __future__ import annotations

from typing import Any

from leaderboard.models import Agent
from leaderboard.services.forecasts import forecast_submit
from leaderboard.services.replay_sessions import replay_session_open
from tests.factories import ArticleFactory
from tests.leaderboard.api_support import live_question, replay_question


def hostile_world(agent: Agent) -> dict[str, Any]:
    live = live_question()
    forecast_submit(agent=agent, question_id=live.pk, prediction={"probability": 0.5})
    session, _ = replay_session_open(agent=agent, question_id=replay_question().pk)
    for i in range(3):
        ArticleFactory(title=f"Budget talks {i}")
    return {"live": live.pk, "session": str(session.pk)}
