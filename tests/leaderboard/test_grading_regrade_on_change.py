"""Grades follow every change: amended resolution, annulment, un-resolution, hindsight review."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group

from grading.models import HindsightEvent
from grading.review_services import event_review
from ingestion.models import Question
from ingestion.services.questions import question_annul, question_resolve, question_unresolve
from leaderboard.models import Agent, Grade
from leaderboard.services.grade_runs import grade_question
from tests.factories import AgentFactory, UserFactory
from tests.leaderboard.grading_support import (
    RESOLVED_AT,
    RefEvent,
    add_forecast,
    articles,
    current,
    day,
    make_question,
    make_reference,
    resolve,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_llm(settings: Any) -> None:
    settings.LLM_MODEL = ""


def _fresh(question: Question) -> Question:
    question.refresh_from_db()
    return question


def test_resolution_amend_annul_unresolve_drive_new_versions(
    agent: Agent, django_capture_on_commit_callbacks: Any
) -> None:
    question = make_question("binary")
    f = add_forecast(agent, question, {"probability": 0.8})
    with django_capture_on_commit_callbacks(execute=True):
        question_resolve(question=_fresh(question), outcome=True, resolved_at=RESOLVED_AT, now=RESOLVED_AT)
    v1 = current(f)
    assert v1.version == 1 and v1.correct is True and v1.resolution_version == 1

    with django_capture_on_commit_callbacks(execute=True):
        question_resolve(question=_fresh(question), outcome=False, note="Amended: the source was wrong")
    v2 = current(f)
    assert v2.version == 2 and v2.correct is False and v2.resolution_version == 2
    assert v2.brier == pytest.approx(0.64)

    with django_capture_on_commit_callbacks(execute=True):
        question_annul(question=_fresh(question), reason="The event was cancelled")
    v3 = current(f)
    assert v3.version == 3 and v3.void is True and v3.resolution_version == 3
    assert v3.correct is None and v3.brier is None and v3.log_score is None and v3.leaks is None

    with django_capture_on_commit_callbacks(execute=True):
        question_unresolve(question=_fresh(question), note="Reopened")
    assert not Grade.objects.filter(forecast=f, is_current=True).exists()

    with django_capture_on_commit_callbacks(execute=True):
        question_resolve(question=_fresh(question), outcome=True)
    v4 = current(f)
    assert v4.version == 4 and v4.correct is True and v4.resolution_version == 5
    history = list(Grade.objects.filter(forecast=f).order_by("version").values_list("version", "void", "correct"))
    assert history == [(1, False, True), (2, False, False), (3, True, None), (4, False, True)]


def test_review_rejection_changes_the_key_events(agent: Agent, django_capture_on_commit_callbacks: Any) -> None:
    question = make_question("binary")
    src = articles(6)
    titles = [
        "Parliament passes budget bill",
        "Central bank cuts interest rates",
        "Unemployment falls to record low",
        "Prime minister resigns",
        "Snap election called",
        "Trade deal signed with neighbours",
    ]
    make_reference(
        question,
        [
            RefEvent(f"e{i + 1}", t, day(10 * (i + 1)), 0.9 - 0.1 * i, 1.0, sources=[src[i]])
            for i, t in enumerate(titles)
        ],
    )
    # The forecast finds e1 and e6: one key event out of five (e6 is sixth by impact).
    graph = {
        "events": [
            {"id": "a", "title": titles[0], "description": "", "date": day(10).isoformat()},
            {"id": "b", "title": titles[5], "description": "", "date": day(60).isoformat()},
        ],
        "edges": [],
    }
    f = add_forecast(agent, question, {"probability": 0.6}, graph=graph, cited=[src[0], src[1]])
    other = add_forecast(AgentFactory(), question, {"probability": 0.3})
    resolve(question, True)
    grade_question(question_id=question.pk)
    before = current(f)
    assert before.key_event_recall == pytest.approx(1 / 5)
    assert before.source_precision == 1.0

    reviewer = UserFactory(username="reviewer")
    reviewer.groups.add(Group.objects.get_or_create(name="annotators")[0])
    rejected = HindsightEvent.objects.get(graph__question=question, key="e2")
    with django_capture_on_commit_callbacks(execute=True):
        event_review(event=rejected, reviewer=reviewer, decision="reject", reason="Fabricated")

    after = current(f)
    assert after.version == 2 and after.reference_version == before.reference_version
    # e2 left the reference: e6 becomes a key event, and src[1] left C^H.
    assert after.key_event_recall == pytest.approx(2 / 5)
    assert after.source_precision == pytest.approx(1 / 2)
    assert str(rejected.pk) not in after.details["reasoning"]["key_events"]
    assert current(other).version == 2
    assert before.inputs_key != after.inputs_key

    # Approving an event changes nothing that grading reads: no new version.
    kept = HindsightEvent.objects.get(graph__question=question, key="e1")
    with django_capture_on_commit_callbacks(execute=True):
        event_review(event=kept, reviewer=reviewer, decision="approve")
    grade_question(question_id=question.pk)
    assert current(f).version == 2
