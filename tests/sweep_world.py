"""A small world with one of everything a page can show, for the page sweep and the phone-width tests.

Every question type in every status (draft, open, closed, resolved, annulled) on the live track,
replay questions with sessions (outcome published and not), forecasts carrying graphs from a
member's agent and a rival's, a question with a built hindsight graph, grades from the real
grader, standings, a long team name, a curation draft and a market with prices.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.contrib.auth.models import User

from grading.services import hindsight_build
from ingestion.models import Market, PricePoint, Question
from ingestion.services.questions import question_annul, question_publish_outcome, question_resolve
from leaderboard.models import Agent, Forecast, ReplaySession
from leaderboard.services.grade_runs import grade_question
from leaderboard.services.standings import standings_rebuild
from leaderboard.services.teams import agent_create, team_add_member, team_create, token_create
from tests.factories import QuestionFactory, UserFactory
from tests.grading.corpus import make_corpus, make_question
from tests.leaderboard.api_support import TYPE_FIELDS, VALID_PREDICTIONS

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NOW = datetime(2026, 6, 1, tzinfo=UTC)
LONG_TEAM = "The Extraordinarily Long-Named Forecasting Collective of Northern Lowlands Research Institutes"
LONG_AGENT = "Retrieval-augmented-ensemble-with-calibrated-temperature-scaling-and-news-search-v12"

OUTCOMES: dict[str, Any] = {
    "binary": True,
    "multiple_choice": "Maybe",
    "quantity": 15.0,
    "timeframe": "2026-Q3",
    "relation": {"relations": {"04": ["042"]}},
    "open_ended": ["Ceasefire signed"],
}


@dataclass
class SweepWorld:
    member: User
    staff: User
    agent: Agent
    rival_agent: Agent
    graph_question: Question


def _graph(day: date) -> dict[str, Any]:
    return {
        "events": [
            {"id": "e1", "title": "Committee approves the draft budget", "date": day.isoformat()},
            {"id": "e2", "title": "Senate approves the budget", "date": (day + timedelta(days=20)).isoformat()},
        ],
        "edges": [{"source": "e1", "target": "e2", "relation": "Causes", "strength": 0.7, "confidence": 0.8}],
    }


def _forecast(agent: Agent, question: Question, prediction: dict[str, Any], **extra: Any) -> Forecast:
    at = extra.pop("received_at", question.open_at + timedelta(days=2))
    return Forecast.objects.create(
        agent=agent,
        question=question,
        received_at=at,
        prediction=prediction,
        rationale="Because the committee approved the draft.",
        sources=["https://news.example.org/story/1"],
        graph=_graph(at.date()),
        **extra,
    )


def _market(question: Question) -> None:
    market = Market.objects.create(platform=Market.Platform.SAMPLE, external_id=f"sweep-{question.pk}", title="Sweep")
    outcomes = question.options or ["Yes"]
    for day, p in ((1, 0.3), (20, 0.5), (40, 0.7)):
        for k, outcome in enumerate(outcomes):
            PricePoint.objects.create(
                market=market, outcome=outcome, time=T0 + timedelta(days=day), probability=round(p / (k + 1), 3)
            )
    question.market = market
    question.save(update_fields=["market"])


def build_sweep_world() -> SweepWorld:
    member = UserFactory(username="member")
    staff = UserFactory(username="staffer", is_staff=True, is_superuser=True)
    team = team_create(name=LONG_TEAM, owner=member)
    rival_team = team_create(name="Rivals", owner=UserFactory(username="rival"))
    agent = agent_create(team=team, name=LONG_AGENT, model_name="m", knowledge_cutoff=date(2025, 1, 1))
    rival = agent_create(team=rival_team, name="Rival agent", model_name="m", knowledge_cutoff=date(2025, 1, 1))
    token_create(agent=agent, issued_by="command")
    team_add_member(team=rival_team, user=staff)

    # The binary question with a news corpus and a built hindsight graph.
    graph_question = make_question(title="Will the Senate approve the Artemis lunar budget by March 2026?")
    make_corpus()
    _market(graph_question)
    for a, p in ((agent, 0.8), (rival, 0.4)):
        _forecast(a, graph_question, {"probability": p})
    question_resolve(question=graph_question, outcome=True, resolved_at=T0 + timedelta(days=59), now=NOW)
    hindsight_build(question_id=graph_question.pk, builder="offline")

    for qtype, fields in TYPE_FIELDS.items():
        for status in Question.Status.values:
            question = QuestionFactory(
                title=f"{qtype} question, {status}",
                type=qtype,
                status=Question.Status.DRAFT if status == Question.Status.DRAFT else Question.Status.OPEN,
                open_at=T0,
                close_at=NOW + timedelta(days=30) if status in ("draft", "open") else T0 + timedelta(days=60),
                domain="economy" if qtype in ("quantity", "timeframe") else "politics",
                **fields,
            )
            if status == Question.Status.DRAFT:
                continue
            if qtype in ("binary", "multiple_choice"):
                _market(question)
            _forecast(agent, question, VALID_PREDICTIONS[qtype])
            _forecast(rival, question, VALID_PREDICTIONS[qtype])
            if status == Question.Status.CLOSED:
                question.status = status
                question.save(update_fields=["status"])
            elif status == Question.Status.RESOLVED:
                question_resolve(
                    question=question, outcome=OUTCOMES[qtype], resolved_at=T0 + timedelta(days=61), now=NOW
                )
            elif status == Question.Status.ANNULLED:
                question_annul(question=question, reason="The event was cancelled.", now=NOW)

        # Replay questions: one whose outcome is published, one still hidden.
        for published in (True, False):
            replay = QuestionFactory(
                title=f"{qtype} replay question{'' if published else ' (outcome hidden)'}",
                type=qtype,
                track=Question.Track.REPLAY,
                status=Question.Status.OPEN,
                open_at=T0,
                close_at=T0 + timedelta(days=60),
                **fields,
            )
            for a in (agent, rival):
                simulated = T0 + timedelta(days=20)
                session = ReplaySession.objects.create(
                    agent=a, question=replay, simulated_at=simulated, created_at=NOW - timedelta(days=1)
                )
                _forecast(a, replay, VALID_PREDICTIONS[qtype], session=session, received_at=NOW - timedelta(days=1))
            question_resolve(question=replay, outcome=OUTCOMES[qtype], resolved_at=T0 + timedelta(days=61), now=NOW)
            if published:
                question_publish_outcome(question=replay, now=NOW)

    for question in Question.objects.filter(status=Question.Status.RESOLVED):
        grade_question(question_id=question.pk, now=NOW)
    standings_rebuild(now=NOW)
    return SweepWorld(member=member, staff=staff, agent=agent, rival_agent=rival, graph_question=graph_question)
