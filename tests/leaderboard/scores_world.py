"""A graded world with every question type, live and replay, for the score consistency tests.

Two teams' agents and the platform's always-half baseline agent forecast a live and a replay question
of each type (binary, multiple choice, quantity, timeframe, relation, open-ended); the real grader
grades them, a hindsight reference gives one question evidence and reasoning scores, replay forecasts
are made at simulated dates months before the server received them, one replay question opened before
the agents' declared cutoff (so the contamination filter changes the standings), and the standings are
rebuilt. The forecasts are chosen so a reader can check some scores by hand (see ``HAND``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from ingestion.models import Question
from ingestion.services.questions import question_publish_outcome
from leaderboard.models import Agent, Forecast, ReplaySession
from leaderboard.services.grade_runs import grade_question
from leaderboard.services.standings import standings_rebuild
from tests.factories import T0, AgentFactory, TeamFactory
from tests.leaderboard.api_support import replay_question
from tests.leaderboard.grading_support import RefEvent, add_forecast, articles, make_question, make_reference, resolve

# The outcome of each type's live and replay question.
OUTCOMES: dict[str, tuple[Any, Any]] = {
    "binary": (True, False),
    "multiple_choice": ("No", "Yes"),
    "quantity": (15.0, 105.0),
    "timeframe": ("2026-Q3", "2026-Q3"),
    "relation": ({"relations": {"04": ["042"], "05": []}}, {"relations": {"19": ["190"]}}),
    "open_ended": (["Ceasefire signed", "Talks fail"], ["Elections called for June"]),
}
# What each agent forecasts: (live, replay) per type.
FORECASTS: dict[str, dict[str, tuple[dict[str, Any], dict[str, Any]]]] = {
    "alba": {
        "binary": ({"probability": 0.8}, {"probability": 0.5}),
        "multiple_choice": (
            {"probabilities": {"Yes": 0.5, "No": 0.3, "Maybe": 0.2}},
            {"probabilities": {"Yes": 0.4, "No": 0.4, "Maybe": 0.2}},
        ),
        "quantity": ({"interval": [10, 20]}, {"value": 100}),
        "timeframe": ({"period": "2026-Q3"}, {"period": "2026-Q2"}),
        "relation": ({"relations": {"04": ["042", "043"], "05": []}}, {"relations": {"19": ["190"]}}),
        "open_ended": ({"events": ["Ceasefire signed"]}, {"answer": "Elections called for June"}),
    },
    "brest": {
        "binary": ({"probability": 0.3}, {"probability": 0.1}),
        "multiple_choice": (
            {"probabilities": {"Yes": 0.1, "No": 0.8, "Maybe": 0.1}},
            # Confidently wrong: Brier's 1950 sum would be 1.82, above the one scale's top.
            {"probabilities": {"Yes": 0.0, "No": 0.9, "Maybe": 0.1}},
        ),
        "quantity": ({"quantiles": {"0.1": 5, "0.5": 14, "0.9": 30}}, {"interval": [150, 200]}),
        "timeframe": ({"period": "2026-Q4"}, {"period": "2026-Q3"}),
        "relation": ({"relations": {"01": ["010"]}}, {"relations": {"19": ["190"], "04": []}}),
        "open_ended": ({"events": ["Talks fail", "Stock market crashes"]}, {"events": ["Nothing happens"]}),
    },
    "always-half": {
        "binary": ({"probability": 0.5}, {"probability": 0.5}),
        "multiple_choice": (
            {"probabilities": {"Yes": 1 / 3, "No": 1 / 3, "Maybe": 1 / 3}},
            {"probabilities": {"Yes": 1 / 3, "No": 1 / 3, "Maybe": 1 / 3}},
        ),
    },
}
# Scores a careful reader works out by hand, per agent: (metric, expected, standings view "all" off).
HAND = {
    # Binary: 0.8 on YES (0.04) and 0.5 on NO (0.25); multiple choice: half of 0.25 + 0.49 + 0.04 and
    # half of 0.36 + 0.16 + 0.04, as in the 1950 sum halved.
    "alba": {"brier": (0.04 + 0.25 + 0.39 + 0.28) / 4},
    # 0.5 and a uniform vector make no call: never right. Brier 0.25 twice, and twice half of 2/3 (the
    # uniform vector over three options: (2/3)^2 + (1/3)^2 + (1/3)^2).
    "always-half": {"brier": (0.25 + 0.25 + 1 / 3 + 1 / 3) / 4, "accuracy": 0.0},
}
REPLAY_SIMULATED = datetime(2025, 6, 15, tzinfo=UTC)  # the replay sessions' date: June 2025
RECEIVED_LIVE = T0 + timedelta(days=5)  # January 2026
RECEIVED_REPLAY = T0 + timedelta(days=40)  # February 2026: the server got the replay forecasts later


@dataclass
class ScoresWorld:
    agents: dict[str, Agent]
    questions: list[Question]
    forecasts: dict[str, list[Forecast]]


def _replay(qtype: str, outcome: Any, *, open_at: datetime) -> Question:
    return replay_question(
        qtype,
        outcome=outcome,
        title=f"Replay {qtype} question",
        open_at=open_at,
        close_at=open_at + timedelta(days=90),
        resolve_by=open_at + timedelta(days=120),
    )


def build_scores_world(agents: dict[str, Agent]) -> ScoresWorld:
    """``agents`` holds "alba" and "brest" (with tokens, made by the caller); the baseline agent is added."""
    baselines = TeamFactory(name="Hindsight baselines", slug="hindsight-baselines")
    half = AgentFactory(team=baselines, name="always-half", slug="always-half", knowledge_cutoff=date(2000, 1, 1))
    half.is_baseline = True
    half.save(update_fields=["is_baseline"])
    everyone = {**agents, "always-half": half}
    sources = articles(2)
    questions: list[Question] = []
    forecasts: dict[str, list[Forecast]] = {name: [] for name in everyone}
    for k, (qtype, (live_outcome, replay_outcome)) in enumerate(OUTCOMES.items()):
        live = make_question(qtype, title=f"Live {qtype} question")
        # The relation replay question opened before the agents' declared cutoff: contaminated.
        opened = datetime(2024, 6, 1, tzinfo=UTC) if qtype == "relation" else datetime(2025, 2, 1, tzinfo=UTC)
        replay = _replay(qtype, replay_outcome, open_at=opened)
        for name, agent in everyone.items():
            chosen = FORECASTS[name].get(qtype)
            if chosen is None:
                continue
            extra: dict[str, Any] = {}
            if qtype == "binary" and name == "alba":
                # Cites the reference's source and names its key event: evidence and reasoning scores.
                extra = {
                    "cited": sources[:1],
                    "graph": {"events": [{"id": "e1", "title": "Parliament passes the budget", "date": "2026-01-04"}]},
                }
            forecasts[name].append(add_forecast(agent, live, chosen[0], received_at=RECEIVED_LIVE, **extra))
            session = ReplaySession.objects.create(
                agent=agent,
                question=replay,
                simulated_at=REPLAY_SIMULATED + timedelta(days=k),
                created_at=RECEIVED_REPLAY,
            )
            forecasts[name].append(add_forecast(agent, replay, chosen[1], received_at=RECEIVED_REPLAY, session=session))
        if qtype == "binary":
            make_reference(
                live,
                [
                    RefEvent(
                        "e1",
                        "Parliament passes the budget",
                        (T0 + timedelta(days=3)).date(),
                        0.9,
                        1.0,
                        sources=sources[:1],
                    ),
                    RefEvent(
                        "e2",
                        "Ratings agency upgrades the country",
                        (T0 + timedelta(days=4)).date(),
                        0.7,
                        1.0,
                        sources=sources[1:],
                    ),
                ],
            )
        resolve(live, live_outcome)
        questions += [live, replay]
    for question in questions:
        grade_question(question_id=question.pk)
    for question in questions:
        if question.track == Question.Track.REPLAY:
            question_publish_outcome(question=Question.objects.get(pk=question.pk))
    standings_rebuild()
    return ScoresWorld(agents=everyone, questions=questions, forecasts=forecasts)
