"""Many questions resolved together (a bulk import) get their hindsight builds in one task per
chunk: a question with no article in its evidence window is recorded without running a builder,
one with news is built, a question whose build fails records the failure while the others go on,
and the new graphs are regraded together."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import DatabaseError

import grading.batch_builds as batch_builds
from grading.models import GraphBuildAttempt, HindsightBuildRequest, HindsightGraph
from ingestion.models import Question
from ingestion.services.questions import NewResolution, questions_resolve_many
from leaderboard.models import Grade
from tests.factories import AgentFactory
from tests.grading.corpus import T0, T_RES, make_corpus, make_question
from tests.leaderboard.grading_support import add_forecast

pytestmark = [pytest.mark.django_db, pytest.mark.dual_db]


def _resolve_together(questions: list[Question], *, at: dict[int, Any] | None = None) -> None:
    questions_resolve_many(
        items=[NewResolution(question=q, outcome=True, resolved_at=(at or {}).get(q.pk, T_RES)) for q in questions],
        author_label="test",
        now=T_RES,
    )


def _old_question(n: int) -> Question:
    """Opened and resolved a year before the corpus: nothing was published in its window."""
    return make_question(
        title=f"Will the harbour bridge {n} reopen by March 2025?",
        external_id=f"old-{n}",
        open_at=T0 - timedelta(days=400),
        close_at=T_RES - timedelta(days=366),
    )


def test_a_batch_builds_where_there_is_news_and_records_the_rest_without_a_builder(
    settings: Any, django_capture_on_commit_callbacks: Any, tasks_run: list[str]
) -> None:
    settings.LLM_MODEL = ""
    settings.HINDSIGHT_BUILD_QUESTIONS_PER_TASK = 50
    covered = make_question()
    make_corpus()
    old = [_old_question(n) for n in range(30)]
    agent = AgentFactory()
    add_forecast(agent, covered, {"probability": 0.8})
    add_forecast(agent, old[0], {"probability": 0.3}, received_at=old[0].open_at + timedelta(days=1))

    with django_capture_on_commit_callbacks(execute=True):
        _resolve_together([covered, *old], at={q.pk: T_RES - timedelta(days=365) for q in old})

    # One build task for the 31 questions, never a task per question.
    assert tasks_run.count("grading.tasks.build_hindsight_batch") == 1
    assert "grading.tasks.build_hindsight" not in tasks_run
    assert "leaderboard.tasks.regrade_question" not in tasks_run
    graph = HindsightGraph.objects.get(question=covered, is_current=True)
    assert graph.builder == "offline" and graph.graph_built
    attempts = GraphBuildAttempt.objects.filter(question__in=old)
    assert attempts.count() == 30
    assert set(attempts.values_list("reason", flat=True)) == {"no_articles"}
    assert all("no builder ran" in a.error for a in attempts)
    assert not HindsightGraph.objects.filter(question__in=old).exists()
    assert HindsightBuildRequest.objects.filter(finished_at=None).count() == 0
    # Regrades: the two questions with forecasts after the resolutions (one run), and the one
    # with a new graph after the batch (one run); the 29 without forecasts need none.
    assert tasks_run.count("leaderboard.tasks.regrade_questions") == 2
    grade = Grade.objects.get(forecast__question=covered, is_current=True)
    assert grade.reference_version == graph.version and grade.source_precision is not None
    assert Grade.objects.filter(forecast__question=old[0], is_current=True).count() == 1


def test_one_failing_build_is_recorded_and_the_batch_goes_on(
    settings: Any, django_capture_on_commit_callbacks: Any, monkeypatch: Any
) -> None:
    settings.LLM_MODEL = ""
    first, failing, last = (
        make_question(external_id="first"),
        make_question(external_id="failing", title="Will the Senate approve the Artemis lunar budget?"),
        make_question(external_id="last"),
    )
    make_corpus()
    real_build = batch_builds.hindsight_build

    def build(*, question_id: int, **kwargs: Any) -> Any:
        if question_id == failing.pk:
            raise DatabaseError("server closed the connection unexpectedly")
        return real_build(question_id=question_id, **kwargs)

    monkeypatch.setattr(batch_builds, "hindsight_build", build)
    with django_capture_on_commit_callbacks(execute=True):
        _resolve_together([first, failing, last])

    assert HindsightGraph.objects.filter(question__in=[first, last], is_current=True).count() == 2
    assert not HindsightGraph.objects.filter(question=failing).exists()
    attempt = GraphBuildAttempt.objects.get(question=failing)
    assert attempt.reason == "error" and "server closed the connection" in attempt.error
    # Released, so a retry may claim the build again.
    request = HindsightBuildRequest.objects.get(question=failing)
    assert request.claimed_at is None and request.finished_at is None
