"""Contamination data on every grade: the agent's declared cutoff against the question's t0."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest

from leaderboard.models import Standing
from leaderboard.services.grade_runs import grade_question
from leaderboard.services.standings import standings_rebuild
from leaderboard.services.teams import agent_update
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


def test_changing_the_declared_cutoff_updates_current_grades_and_standings(
    django_capture_on_commit_callbacks: Any,
) -> None:
    early, late = make_question("binary"), make_question("binary", open_at=datetime(2026, 2, 1, tzinfo=UTC))
    agent = AgentFactory(knowledge_cutoff=date(2025, 6, 1))
    forecasts = [
        add_forecast(agent, q, {"probability": 0.5}, received_at=datetime(2026, 2, 5, tzinfo=UTC))
        for q in (early, late)
    ]
    for question in (early, late):
        resolve(question, True)
        grade_question(question_id=question.pk)
    assert [current(f).contaminated for f in forecasts] == [False, False]
    before = {f.pk: current(f).version for f in forecasts}
    standings_rebuild()
    overall = {"agent": agent, "track": "all", "contamination_filter": True, "question_type": "", "domain": ""}
    overall |= {"origin": "", "horizon": ""}
    assert Standing.objects.get(**overall).n == 2

    with django_capture_on_commit_callbacks(execute=True):
        agent_update(agent=agent, name=agent.name, knowledge_cutoff=date(2026, 1, 15))

    # t0 of the early question (2026-01-01) precedes the new cutoff; the late one's (2026-02-01) does not.
    assert [current(f).contaminated for f in forecasts] == [True, False]
    assert all(current(f).version == before[f.pk] for f in forecasts)  # flags only, no new version
    # The standings that leave contaminated questions out no longer count the early question.
    assert Standing.objects.get(**overall).n == 1

    agent_update(agent=agent, name=agent.name, knowledge_cutoff=None)
    assert [(current(f).contaminated, current(f).cutoff_declared) for f in forecasts] == [(False, False)] * 2
