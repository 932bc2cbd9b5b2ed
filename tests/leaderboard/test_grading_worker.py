"""Integration: a real Celery worker (two processes) grades 1,000 forecasts through every change.

Resolve (the announcement enqueues a regrade) and deliver the regrade twice more, amend the
resolution, reject a hindsight event: each step ends with exactly one current grade per forecast,
and the history holds exactly one version per step.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import Group

from grading.models import HindsightEvent
from grading.review_services import event_review
from grading.signals import reference_changed
from ingestion.models import Question
from ingestion.services.questions import question_resolve
from leaderboard.models import Agent, Forecast, Grade, QuestionGradingState, Team
from leaderboard.tasks import regrade_question
from tests.celery_worker import running_worker, wait_until
from tests.factories import T0, UserFactory
from tests.leaderboard.grading_support import RESOLVED_AT, RefEvent, articles, day, make_question, make_reference

N_AGENTS = 200
PER_AGENT = 5
TITLES = [
    "Parliament passes budget bill",
    "Central bank cuts interest rates",
    "Unemployment falls to record low",
    "Prime minister resigns",
    "Snap election called",
    "Trade deal signed with neighbours",
]
GRAPH = {
    "events": [
        {"id": "a", "title": TITLES[0], "description": "", "date": day(10).isoformat()},
        {"id": "b", "title": TITLES[1], "description": "", "date": day(20).isoformat()},
    ],
    "edges": [{"source": "a", "target": "b", "relation": "Causes", "strength": 0.5, "confidence": 0.7}],
}


def _state(question: Question) -> QuestionGradingState | None:
    return QuestionGradingState.objects.filter(question=question).first()


def _settled(question: Question, checks: int, version: int) -> bool:
    state = _state(question)
    return (
        state is not None
        and state.checks >= checks
        and state.claimed_at is None
        and Grade.objects.filter(forecast__question=question, is_current=True, version=version).count()
        == N_AGENTS * PER_AGENT
    )


def test_worker_grades_1000_forecasts_through_every_change(transactional_db: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("HINDSIGHT_LLM_MODEL", "")
    # Sources published long before t0 lie outside the hindsight builder's window, so the
    # automatic build finds no articles and the constructed reference stays current.
    src = articles(6, start=T0 - timedelta(days=200))
    question = make_question("binary")
    graph = make_reference(
        question,
        [
            RefEvent(f"e{i + 1}", t, day(10 * (i + 1)), 0.9 - 0.1 * i, 1.0, sources=[src[i]])
            for i, t in enumerate(TITLES)
        ],
    )
    team = Team.objects.create(name="Bulk", slug="bulk")
    agents = Agent.objects.bulk_create(
        Agent(team=team, name=f"A{i}", slug=f"bulk-{i}", knowledge_cutoff=day(40) if i % 4 == 0 else None)
        for i in range(N_AGENTS)
    )
    rows = [
        Forecast(
            agent=a,
            question=question,
            received_at=T0 + timedelta(days=1 + k),
            prediction={"probability": round(0.1 + 0.2 * k, 2)},  # 0.1 .. 0.9; the last (0.9) counts
            graph=GRAPH if i % 2 == 0 else None,
        )
        for i, a in enumerate(agents)
        for k in range(PER_AGENT)
    ]
    Forecast.objects.bulk_create(rows)
    Forecast.cited_articles.through.objects.bulk_create(
        Forecast.cited_articles.through(forecast_id=f.pk, article_id=src[0].pk) for f in rows
    )
    total = N_AGENTS * PER_AGENT

    with running_worker(queues="grade,default", concurrency=2):
        # 1. Resolve: the announcement enqueues one regrade; deliver the same task twice more.
        question_resolve(question=question, outcome=True, resolved_at=RESOLVED_AT, now=RESOLVED_AT)
        regrade_question.delay(question.pk)
        regrade_question.delay(question.pk)
        assert wait_until(lambda: _settled(question, 1, 1), timeout=120), _state(question)
        assert Grade.objects.filter(forecast__question=question).count() == total

        # 2. Amend the resolution.
        question.refresh_from_db()
        question_resolve(question=question, outcome=False, note="Amended")
        assert wait_until(lambda: _settled(question, 2, 2), timeout=120), _state(question)

        # 3. A reviewer rejects key event e2 (announced on commit).
        reviewer = UserFactory(username="reviewer")
        reviewer.groups.add(Group.objects.get_or_create(name="annotators")[0])
        event_review(event=HindsightEvent.objects.get(graph=graph, key="e2"), reviewer=reviewer,
                     decision="reject", reason="Noise")  # fmt: skip
        assert wait_until(lambda: _settled(question, 3, 3), timeout=120), _state(question)
        # A late duplicate of the review announcement finds nothing to do.
        checks = _state(question).checks  # type: ignore[union-attr]
        reference_changed.send(sender=None, question_id=question.pk, graph_id=graph.pk, version=graph.version)
        assert wait_until(lambda: (_state(question) or QuestionGradingState()).checks > checks, timeout=60)

    grades = Grade.objects.filter(forecast__question=question)
    assert grades.count() == 3 * total
    assert grades.filter(is_current=True).count() == total
    assert set(grades.filter(is_current=True).values_list("version", flat=True)) == {3}
    assert grades.filter(is_current=True, counts=True).count() == N_AGENTS
    for version, outcome in ((1, True), (2, False), (3, False)):
        high = grades.filter(version=version, forecast__prediction__probability__gt=0.5)
        assert not high.exclude(correct=outcome).exists()
        # 0.5 makes no call: not correct, whichever way the question resolved.
        assert not grades.filter(version=version, forecast__prediction__probability=0.5, correct=True).exists()
        assert grades.filter(version=version, resolution_version=1 if version == 1 else 2).count() == total
    with_graph = grades.filter(forecast__graph__isnull=False)
    for version, ker in ((1, 2 / 5), (2, 2 / 5), (3, 1 / 5)):
        values = {round(v, 9) for v in with_graph.filter(version=version).values_list("key_event_recall", flat=True)}
        assert values == {round(ker, 9)}
    # No graph, no reasoning score: null, not 0.
    assert set(grades.filter(forecast__graph__isnull=True).values_list("key_event_recall", flat=True)) == {None}
    # Source precision: the only cited article is e1's source, in C^H throughout.
    assert set(grades.values_list("source_precision", flat=True)) == {1.0}
    assert grades.filter(is_current=True, contaminated=True).count() == (N_AGENTS // 4) * PER_AGENT
    state = _state(question)
    assert state is not None and state.runs == 3 and state.checks >= 4 and not state.rerun_requested
