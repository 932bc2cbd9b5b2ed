"""Resolution announcements enqueue a hindsight build on the grade queue; duplicates do nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings

from grading.models import HindsightBuildRequest, HindsightGraph
from grading.tasks import build_hindsight
from ingestion.services.questions import question_annul, question_resolve, question_unresolve
from tests.celery_worker import running_worker, wait_until
from tests.grading.corpus import T_RES, make_corpus, make_question, resolve


def test_tasks_are_routed_to_the_grade_queue() -> None:
    assert settings.CELERY_TASK_ROUTES["grading.tasks.*"] == {"queue": "grade"}
    assert build_hindsight.name == "grading.tasks.build_hindsight"


@pytest.mark.django_db
def test_resolve_and_amend_build_but_unresolve_and_annul_do_not(
    settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.LLM_MODEL = ""
    question = make_question()
    make_corpus()
    with django_capture_on_commit_callbacks(execute=True):
        resolve(question)
    assert HindsightGraph.objects.filter(question=question).count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        question_unresolve(question=question, author_label="test", now=T_RES)
    assert HindsightGraph.objects.filter(question=question).count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        question_resolve(question=question, outcome=False, resolved_at=T_RES, author_label="test", now=T_RES)
    assert HindsightGraph.objects.filter(question=question).count() == 2
    current = HindsightGraph.objects.get(question=question, is_current=True)
    assert current.resolution_version == 3
    assert "resolved No" in current.explanation
    with django_capture_on_commit_callbacks(execute=True):
        question_annul(question=question, reason="cancelled", author_label="test", now=T_RES)
    assert HindsightGraph.objects.filter(question=question).count() == 2


@pytest.mark.django_db
def test_duplicate_delivery_builds_once(settings: Any) -> None:
    settings.LLM_MODEL = ""
    question = make_question()
    make_corpus()
    resolve(question)
    first = build_hindsight(question.pk, 1)
    second = build_hindsight(question.pk, 1)
    assert first is not None and second is None
    assert HindsightGraph.objects.filter(question=question).count() == 1
    assert HindsightBuildRequest.objects.get(question=question).finished_at is not None


@pytest.mark.celery_worker
def test_a_real_worker_builds_after_resolution(transactional_db: Any) -> None:
    # running_worker switches the Celery app to sending over Redis, and back afterwards.
    question = make_question()
    make_corpus()
    with running_worker(queues="grade"):
        resolve(question)
        assert wait_until(
            lambda: HindsightGraph.objects.filter(question=question, is_current=True).exists(), timeout=60
        )
    graph = HindsightGraph.objects.get(question=question, is_current=True)
    assert graph.builder == "offline" and graph.graph_built
