"""A graded world with every kind of score the leaderboard shows: binary and multiple-choice Brier,
MIRAI and open-ended F1, SrcP, KER with its coverage, leaks, and agents that skipped questions
(grades written directly; the scores are what a grader could give)."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta

from ingestion.models import Question
from leaderboard.models import Agent, Forecast, Grade
from tests.factories import AgentFactory, QuestionFactory, TeamFactory
from tests.leaderboard.api_support import TYPE_FIELDS
from tests.leaderboard.standings_data import resolve

T0 = datetime(2026, 1, 1, tzinfo=UTC)
AGENTS = (
    # name, skill (added to every Brier), share of questions answered, carries graphs
    ("Cassandra ensemble (GPT-class, retrieval)", 0.04, 1.0, True),
    ("Delphi Oracle v2", 0.08, 1.0, True),
    ("Pythia small", 0.12, 0.6, False),
    ("Tiresias with news search", 0.10, 0.9, True),
    ("Sibyl zero-shot", 0.22, 1.0, False),
    ("Nostradamus-7B", 0.30, 0.5, False),
)


def _grade(agent: Agent, question: Question, at: datetime, **scores: object) -> None:
    forecast = Forecast.objects.create(agent=agent, question=question, received_at=at, prediction={})
    Grade.objects.create(
        forecast=forecast,
        version=1,
        grader_version="2.0",
        resolution_version=1,
        cutoff_declared=agent.knowledge_cutoff is not None,
        created_at=question.close_at,
        **scores,
    )


def build_mixed_world(questions_per_type: int = 14) -> list[Agent]:
    team = TeamFactory(name="Oracles", slug="oracles")
    agents = [
        AgentFactory(team=team, name=name, slug=f"oracle-{k}", knowledge_cutoff=date(2025, 1, 1))
        for k, (name, *_) in enumerate(AGENTS)
    ]
    baselines = TeamFactory(name="Hindsight baselines", slug="hindsight-baselines")
    half = AgentFactory(team=baselines, name="always-half", slug="always-half", model_name="constant 0.5")
    half.is_baseline = True
    half.save(update_fields=["is_baseline"])
    k = 0
    for qtype in ("binary", "multiple_choice", "relation", "open_ended"):
        for i in range(questions_per_type):
            k += 1
            question = QuestionFactory(
                title=f"{qtype} question {i}",
                type=qtype,
                open_at=T0 + timedelta(days=k),
                close_at=T0 + timedelta(days=k + 20),
                domain="politics" if i % 2 else "economy",
                **TYPE_FIELDS[qtype],
            )
            resolve(question, True, T0 + timedelta(days=k + 25))
            difficulty = 0.1 * ((i % 5) - 2) / 2
            for j, (agent, (_, skill, share, graphs)) in enumerate(zip(agents, AGENTS, strict=True)):
                if (i * 7 + j * 3) % 10 >= share * 10:
                    continue
                brier = min(1.0, max(0.0, skill + difficulty + 0.05))
                scores: dict[str, object] = {
                    "source_precision": max(0.0, 0.8 - skill),
                    "leaks": 1 if j == 5 and i % 4 == 0 else 0,
                    "carried_graph": graphs,
                    "key_event_recall": max(0.0, 0.9 - 2 * skill) if graphs else None,
                }
                if qtype == "binary":
                    p = 1 - math.sqrt(brier)
                    scores.update(brier=brier, log_score=math.log(p), correct=p >= 0.5)
                elif qtype == "multiple_choice":
                    scores.update(brier=brier, log_score=math.log(1 - math.sqrt(brier)), correct=brier < 0.25)
                elif qtype == "relation":
                    scores.update(second_level_f1=max(0.0, 0.9 - 2 * skill))
                else:
                    scores.update(open_f1=max(0.0, 0.8 - 2 * skill))
                _grade(agent, question, question.open_at + timedelta(days=1), **scores)
            if qtype == "binary":
                _grade(
                    half,
                    question,
                    question.open_at + timedelta(days=1),
                    brier=0.25,
                    log_score=math.log(0.5),
                    correct=False,  # 0.5 makes no call
                )
    return agents
