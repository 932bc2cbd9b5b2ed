"""Contamination data on every grade: the agent's declared cutoff against the question's t0."""

from __future__ import annotations

from datetime import date

import pytest

from leaderboard.services.grading import grade_question
from tests.factories import AgentFactory
from tests.leaderboard.grading_support import add_forecast, current, make_question, resolve

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("cutoff", "contaminated", "declared"),
    [
        (date(2026, 3, 1), True, True),  # t0 (2026-01-01) precedes the cutoff: the model may know the answer
        (date(2026, 1, 2), True, True),
        (date(2026, 1, 1), False, True),  # cutoff on t0's day: t0 does not precede it
        (date(2025, 6, 1), False, True),
        (None, False, False),  # no declared cutoff: labelled, not marked contaminated
    ],
)
def test_contamination_flags(cutoff: date | None, contaminated: bool, declared: bool) -> None:
    question = make_question("binary")
    f = add_forecast(AgentFactory(knowledge_cutoff=cutoff), question, {"probability": 0.5})
    resolve(question, True)
    grade_question(question_id=question.pk)
    g = current(f)
    assert g.contaminated is contaminated
    assert g.cutoff_declared is declared


def test_annulled_question_keeps_contamination_data() -> None:
    from ingestion.services.questions import question_annul

    question = make_question("binary")
    f = add_forecast(AgentFactory(knowledge_cutoff=date(2026, 6, 1)), question, {"probability": 0.5})
    resolve(question, True)
    question.refresh_from_db()
    question_annul(question=question, reason="Cancelled")
    grade_question(question_id=question.pk)
    g = current(f)
    assert g.void is True and g.contaminated is True and g.brier is None
