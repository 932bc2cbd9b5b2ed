"""The client and the gateway's replay rule: while a replay session of the agent's is open, evidence
as of now for a live question it does not forecast raises ``Forbidden`` with the API's code and
message naming the session; ``close_replay`` closes the session (``closed_at``, closing again
changes nothing), after which that evidence answers and the session takes no forecast."""

from __future__ import annotations

from typing import Any

import pytest

from hindsight_client import Client, Conflict, Forbidden, NotFound, ReplaySession
from leaderboard.models import Forecast
from leaderboard.models import ReplaySession as SessionRow
from tests.factories import ArticleFactory
from tests.leaderboard.api_support import live_question, replay_question

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_open_session_forbids_as_of_now_evidence_until_closed(
    live_server: Any, agent_key: str, rival_key: str
) -> None:
    replay = replay_question("binary", title="Will the levee hold?")
    live = live_question("binary", title="Will the ferry sail?")
    ArticleFactory(title="Ferry timetable published")
    with Client(live_server.url, agent_key) as hs:
        session = hs.open_replay(replay.pk)
        assert session.closed_at is None and not session.closed

        with pytest.raises(Forbidden) as refused:
            hs.search_articles("ferry", question=live.pk)
        error = refused.value
        assert (error.status, error.code) == (403, "permission_denied")
        assert f"replay question {replay.pk}" in error.message and session.id in error.message
        with pytest.raises(Forbidden):
            hs.prices(live.pk)

        with Client(live_server.url, rival_key) as rival, pytest.raises(NotFound):
            rival.close_replay(session)  # only its own agent closes it
        closed = hs.close_replay(session)
        assert isinstance(closed, ReplaySession) and closed.id == session.id and closed.closed
        assert closed.closed_at is not None and closed.simulated_date == session.simulated_date
        assert hs.close_replay(session.id).closed_at == closed.closed_at
        assert hs.open_replay(replay.pk).closed_at == closed.closed_at

        assert [hit.title for hit in hs.search_articles("ferry", question=live.pk).results] == [
            "Ferry timetable published"
        ]
        with pytest.raises(Conflict) as no_more:
            hs.submit_forecast(replay.pk, {"probability": 0.5}, session=session)
        assert "was closed" in no_more.value.message
        with pytest.raises(ValueError, match="not a replay session id"):
            hs.close_replay("../questions")
    assert SessionRow.objects.get().closed_at == closed.closed_at
    assert not Forecast.objects.exists()
