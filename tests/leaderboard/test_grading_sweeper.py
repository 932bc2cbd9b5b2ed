"""The sweeper finds questions whose grades are missing or stale and enqueues them."""

from __future__ import annotations

from typing import Any

import pytest

from grading.models import HindsightEvent
from ingestion.models import Question, Resolution
from leaderboard.models import Grade
from leaderboard.selectors.grade_keys import questions_needing_grading
from leaderboard.services.grade_runs import grade_question
from leaderboard.tasks import sweep_pending_grading
from tests.factories import AgentFactory
from tests.leaderboard.grading_support import RefEvent, add_forecast, day, make_question, make_reference, resolve

pytestmark = pytest.mark.django_db


def test_sweeper_finds_missing_and_stale_grades_and_regrades_them(settings: Any) -> None:
    settings.LLM_MODEL = ""
    ungraded = make_question("binary")
    add_forecast(AgentFactory(), ungraded, {"probability": 0.4})
    resolve(ungraded, True)
    reviewed = make_question("binary")
    make_reference(reviewed, [RefEvent("e1", "Budget passes", day(10), 0.5)])
    add_forecast(AgentFactory(), reviewed, {"probability": 0.4})
    resolve(reviewed, True)
    grade_question(question_id=reviewed.pk)
    open_question = make_question("binary")
    add_forecast(AgentFactory(), open_question, {"probability": 0.4})

    assert questions_needing_grading() == [ungraded.pk]

    # A review whose announcement was lost: the reference state no longer matches the grades.
    HindsightEvent.objects.filter(graph__question=reviewed).update(review_status="Rejected")
    assert questions_needing_grading() == [ungraded.pk, reviewed.pk]

    assert sweep_pending_grading.delay().get() == [ungraded.pk, reviewed.pk]  # eager: the regrades ran
    assert questions_needing_grading() == []
    assert Grade.objects.filter(forecast__question=reviewed, is_current=True).get().version == 2

    # Un-resolved without an announcement: its grades must be withdrawn.
    Resolution.objects.create(question=ungraded, version=2, kind="unresolve", created_at=ungraded.open_at)
    Question.objects.filter(pk=ungraded.pk).update(status=Question.Status.CLOSED)
    assert questions_needing_grading() == [ungraded.pk]
    sweep_pending_grading.delay().get()
    assert not Grade.objects.filter(forecast__question=ungraded, is_current=True).exists()
    assert questions_needing_grading() == []
