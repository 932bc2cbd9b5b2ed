"""Leaks of a replay forecast: what the agent knew of the world after its simulated date.

A replay forecast is made as of its session's simulated date (MIRAI's relation rule can move that
earlier: ``evidence.relation_cutoff``). It leaks every item it cites that is dated at or after that
date, and every item the gateway served its agent, through any scope (another session, a live
question), at or before the moment the forecast was received and dated at or after that date:
search results, articles read, structured events, price points, and aggregate answers given as of
a later date. Reads are attributed to the agent, not to the question they were made for, because
nothing can show which question a read informed; so no order of reading earns clean credit.

Live forecasts cannot leak through reads (the gateway never serves anything dated after the
moment of the request); their citations are checked against the time they were received.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from datetime import datetime

from ingestion.models import Question
from leaderboard.models import ReplaySession
from leaderboard.selectors.evidence import ServedItem, served_items
from leaderboard.selectors.grade_inputs import ForecastHead
from leaderboard.services.evidence import relation_cutoff


def forecast_as_of(question: Question, *, simulated_at: datetime | None, received_at: datetime) -> datetime:
    """The date a forecast stands at: the session's simulated date (with MIRAI's relation rule) for a
    replay forecast, the time it was received for a live one."""
    if simulated_at is None:
        return received_at
    cutoff = relation_cutoff(question)
    return min(simulated_at, cutoff) if cutoff is not None else simulated_at


class ServedIndex:
    """Everything the gateway served each agent with a replay forecast in a grading run, by time."""

    def __init__(self, served: dict[int, list[ServedItem]]) -> None:
        self._items = served
        self._times = {agent_id: [item.at for item in items] for agent_id, items in served.items()}

    @classmethod
    def for_questions(cls, questions: Sequence[Question], heads: dict[int, Sequence[ForecastHead]]) -> ServedIndex:
        """Load what may leak into the replay forecasts (``heads`` by question id) of ``questions``."""
        replay = {q.pk: q for q in questions if q.track == Question.Track.REPLAY and heads.get(q.pk)}
        until: dict[int, datetime] = {}  # agent id -> its latest replay forecast of the run
        for question_id in replay:
            for head in heads[question_id]:
                if head.session_id is not None:
                    until[head.agent_id] = max(head.received_at, until.get(head.agent_id, head.received_at))
        as_of = [
            forecast_as_of(replay[question_id], simulated_at=simulated_at, received_at=simulated_at)
            for question_id, simulated_at in ReplaySession.objects.filter(
                question_id__in=list(replay), agent_id__in=list(until)
            ).values_list("question_id", "simulated_at")
        ]
        if not until or not as_of:
            return cls({})
        return cls(served_items(agent_ids=until.keys(), after=min(as_of), until=max(until.values())))

    def leaked(self, *, agent_id: int, until: datetime, as_of: datetime) -> list[int | str]:
        """Keys of the items served to the agent at or before ``until`` that are dated at or after
        ``as_of``, each once, in the order they were first served."""
        items = self._items.get(agent_id)
        if not items:
            return []
        found: dict[int | str, None] = {}
        for item in items[: bisect_right(self._times[agent_id], until)]:
            if item.latest >= as_of:
                found.setdefault(item.key)
        return list(found)
