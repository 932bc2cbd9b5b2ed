"""The whole loop on a tiny sample world, shared by the end-to-end and browser tests.

Two extra agents are handed the hidden truth: ``oracle`` submits the true outcome of every question
(and nothing else); ``citer`` forecasts uninformatively but cites the articles that reported the
true key events and submits the hidden graph's events as its forecast graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import httpx

from grading.models import GraphBuildAttempt
from ingestion.models import Article, Question
from leaderboard.baselines import baselines_run
from leaderboard.models import Agent, Forecast, Grade
from leaderboard.services.grade_runs import grade_question
from leaderboard.services.standings import standings_rebuild
from leaderboard.services.teams import agent_create, team_ensure, token_create
from sampleworld.management.commands.sample_world import advance_to_end, sample_world_run
from sampleworld.publish import SampleWorldRun, WorldParams, event_article_ids, storyline_question
from sampleworld.world import Storyline, World
from tests.celery_worker import wait_until


@dataclass
class LoopResult:
    world: World
    agents: dict[str, Agent]


def _agent(name: str) -> tuple[Agent, str]:
    team, _ = team_ensure(name="Ground truth")
    agent = agent_create(team=team, name=name, model_name="hidden graph", knowledge_cutoff=date(2000, 1, 1))
    return agent, token_create(agent=agent, issued_by="command").key


def _prediction(question: dict[str, Any], outcome: Any) -> dict[str, Any]:
    qtype = question["type"]
    if qtype == "binary":
        return {"probability": 1.0 if outcome else 0.0}
    if qtype == "multiple_choice":
        return {"probabilities": {o: (1.0 if o == outcome else 0.0) for o in question["options"]}}
    if qtype == "quantity":
        return {"value": outcome}
    if qtype == "timeframe":
        return {"period": outcome}
    if qtype == "relation":
        return {"relations": outcome["relations"]}
    return {"events": list(outcome)}


def _uninformed(question: dict[str, Any], story: Storyline) -> dict[str, Any]:
    qtype = question["type"]
    if qtype == "binary":
        return {"probability": 0.5}
    if qtype == "multiple_choice":
        n = len(question["options"])
        probs = {o: round(1 / n, 6) for o in question["options"]}
        probs[question["options"][0]] = round(1 - sum(list(probs.values())[1:]), 6)
        return {"probabilities": probs}
    if qtype == "quantity":
        return {"value": float(story.params["base"])}
    if qtype == "timeframe":
        return {"period": question["close_at"][:7]}
    if qtype == "relation":
        return {"relations": {"04": ["042"]}}
    return {"events": ["Talks continue"]}


def _submit_truth(base_url: str, world: World, oracle_key: str, citer_key: str, *, track: str) -> None:
    for key, role in ((oracle_key, "oracle"), (citer_key, "citer")):
        api = httpx.Client(base_url=f"{base_url}/api/v1", headers={"Authorization": f"Token {key}"}, timeout=60)
        for story in world.storylines:
            if story.track != track:
                continue
            question = storyline_question(world=world, story=story)
            assert question is not None, story.key
            q = api.get(f"/questions/{question.pk}/").raise_for_status().json()
            session = (
                api.post("/replays/", json={"question": q["id"]}).raise_for_status().json()
                if track == "replay"
                else None
            )
            body: dict[str, Any] = {"question": q["id"], "session": session["id"] if session else None}
            if role == "oracle":
                body["prediction"] = _prediction(q, story.outcome)
                body["rationale"] = "Handed the true outcome."
            else:
                body["prediction"] = _uninformed(q, story)
                sources = sorted(
                    {
                        a
                        for e in story.key_events()
                        for a in event_article_ids(world=world, story=story, event_key=e.key)
                    }
                )
                body["sources"] = sources
                body["rationale"] = "Cites the reports of the true key events."
                events = [e for e in story.events if not e.is_outcome]
                body["graph"] = {
                    "events": [
                        {"id": f"h{i}", "title": e.title, "description": e.description, "date": e.day.isoformat()}
                        for i, e in enumerate(events[:50])
                    ],
                    "edges": [],
                }
            response = api.post("/forecasts/", json=body)
            assert response.status_code == 201, (story.key, role, response.text)


def _settled(world: World) -> bool:
    questions = [storyline_question(world=world, story=s) for s in world.storylines]
    if any(q is None or q.status != Question.Status.RESOLVED for q in questions):
        return False
    ids = [q.pk for q in questions if q is not None]
    # Every question's build was attempted (a build may fail and leave no graph: outcome-only grades).
    if GraphBuildAttempt.objects.filter(question_id__in=ids, finished_at__isnull=False).values(
        "question_id"
    ).distinct().count() < len(ids):
        return False
    # Forecasts on replay questions arrive after their resolution: the periodic sweeper grades
    # those (the loop calls grade_question for it below); live ones are graded on resolution.
    live = [q.pk for q in questions if q is not None and q.track == Question.Track.LIVE]
    forecasts = Forecast.objects.filter(question_id__in=live).count()
    return Grade.objects.filter(forecast__question_id__in=live, is_current=True).count() >= forecasts


def run_loop(base_url: str, *, seed: int = 7) -> LoopResult:
    """Publish a tiny world, forecast (baselines + oracle + citer), resolve, grade, rank."""
    run = SampleWorldRun.start(params=WorldParams(size="tiny", seed=seed, end=datetime.now(UTC)))
    try:
        sample_world_run(run, until="present", log=lambda m: None)
        baselines_run(base_url=base_url)
        _, oracle_key = _agent("oracle")
        _, citer_key = _agent("citer")
        _submit_truth(base_url, run.world, oracle_key, citer_key, track="live")
        _submit_truth(base_url, run.world, oracle_key, citer_key, track="replay")
        # The live citer could only cite what existed before the clock moved on.
        advance_to_end(
            run,
            report=__import__("sampleworld.publish", fromlist=["PublishReport"]).PublishReport(),
            log=lambda m: None,
        )
    finally:
        run.disable_sources()
        run.stop()
    if not wait_until(lambda: _settled(run.world), timeout=240, interval=1.0):
        qs = [storyline_question(world=run.world, story=s) for s in run.world.storylines]
        state = [
            (
                q.pk,
                q.status,
                Forecast.objects.filter(question=q).count(),
                Grade.objects.filter(forecast__question=q, is_current=True).count(),
                GraphBuildAttempt.objects.filter(question=q).count(),
            )
            for q in qs
            if q
        ]
        raise AssertionError(f"the worker did not finish grading: {state}")
    # Settle any regrade still queued behind a graph build: grading is idempotent.
    for story in run.world.storylines:
        question = storyline_question(world=run.world, story=story)
        assert question is not None
        assert wait_until(lambda q=question: grade_question(question_id=q.pk).status != "busy", timeout=60)
    ids = [q.pk for q in (storyline_question(world=run.world, story=s) for s in run.world.storylines) if q]
    graded = Grade.objects.filter(forecast__question_id__in=ids, is_current=True).count()
    assert graded == Forecast.objects.filter(question_id__in=ids).count()
    standings_rebuild()
    agents = {a.name: a for a in Agent.objects.all()}
    assert Article.objects.exists()
    return LoopResult(world=run.world, agents=agents)
