"""Several questions graded in one run: same grades as one at a time, and one bad question holds back no other."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from ingestion.models import Question
from ingestion.services.questions import question_annul
from leaderboard.models import Agent, Grade, QuestionGradingState
from leaderboard.services import grade_scoring, grade_writer
from leaderboard.services.grade_runs import grade_question, grade_questions
from tests.factories import AgentFactory
from tests.leaderboard.grading_support import RESOLVED_AT, add_forecast, make_question, resolve

pytestmark = [pytest.mark.django_db, pytest.mark.dual_db]

COMPARED = ("correct", "brier", "log_score", "reduced_correct", "leaks", "void", "counts", "inputs_key", "version")


def _world(agents: list[Agent]) -> list[Question]:
    """A binary, a multiple-choice, an annulled and a never-resolved question, forecast by every agent."""
    binary = make_question("binary")
    choice = make_question("multiple_choice")
    annulled = make_question("binary")
    open_question = make_question("binary")
    options = list(choice.options)
    for i, agent in enumerate(agents):
        p = 0.1 + 0.2 * i
        add_forecast(agent, binary, {"probability": p})
        add_forecast(agent, annulled, {"probability": p})
        add_forecast(agent, open_question, {"probability": p})
        rest = (1 - p) / (len(options) - 1)
        add_forecast(agent, choice, {"probabilities": {o: (p if k == 0 else rest) for k, o in enumerate(options)}})
    resolve(binary, True)
    resolve(choice, options[0])
    annulled.refresh_from_db()
    question_annul(question=annulled, reason="Ambiguous", author_label="test", now=RESOLVED_AT)
    return [binary, choice, annulled, open_question]


def _grades(question: Question) -> list[tuple[Any, ...]]:
    rows = Grade.objects.filter(forecast__question=question, is_current=True).order_by("forecast__agent__name")
    return [tuple(getattr(g, f) for f in COMPARED) for g in rows]


def test_a_joint_run_writes_what_one_question_at_a_time_writes(settings: Any) -> None:
    settings.HINDSIGHT_GRADING_BATCH_SIZE = 3  # batches that span questions
    agents = [AgentFactory(name=f"agent {i}") for i in range(4)]
    together, alone = _world(agents), _world(agents)

    reports = grade_questions(question_ids=[q.pk for q in together])
    for question in alone:
        grade_question(question_id=question.pk)

    assert [r.question_id for r in reports] == [q.pk for q in together]
    assert [r.status for r in reports] == ["graded", "graded", "graded", "withdrawn"]
    assert [r.graded for r in reports] == [4, 4, 4, 0]
    for mine, theirs in zip(together, alone, strict=True):
        assert _grades(mine) == _grades(theirs)
    assert all(row[COMPARED.index("void")] for row in _grades(together[2]))
    assert not _grades(together[3])
    states = QuestionGradingState.objects.filter(question__in=together)
    assert all(s.claimed_at is None and s.last_error == "" for s in states)


def test_missing_and_busy_questions_are_reported_and_the_rest_graded() -> None:
    agents = [AgentFactory() for _ in range(2)]
    binary, choice, *_ = _world(agents)
    now = timezone.now()
    QuestionGradingState.objects.create(question=choice, claimed_at=now - timedelta(seconds=5))

    reports = grade_questions(question_ids=[binary.pk, 999_999, choice.pk], now=now)

    assert [(r.question_id, r.status) for r in reports] == [
        (binary.pk, "graded"),
        (999_999, "missing"),
        (choice.pk, "busy"),
    ]
    assert Grade.objects.filter(forecast__question=binary).count() == 2
    assert not Grade.objects.filter(forecast__question=choice).exists()
    assert QuestionGradingState.objects.get(question=choice).rerun_requested


def test_a_question_that_cannot_be_graded_holds_back_no_other(monkeypatch: pytest.MonkeyPatch) -> None:
    agents = [AgentFactory() for _ in range(3)]
    binary, choice, *_ = _world(agents)
    real_init = grade_scoring.QuestionGrader.__init__

    def broken_for_choice(self: grade_scoring.QuestionGrader, **kwargs: Any) -> None:
        if kwargs["question"].pk == choice.pk:
            raise RuntimeError("reference unreadable")
        real_init(self, **kwargs)

    monkeypatch.setattr(grade_scoring.QuestionGrader, "__init__", broken_for_choice)

    with pytest.raises(RuntimeError, match="reference unreadable"):
        grade_questions(question_ids=[choice.pk, binary.pk])

    assert Grade.objects.filter(forecast__question=binary, is_current=True).count() == 3
    assert not Grade.objects.filter(forecast__question=choice).exists()
    failed = QuestionGradingState.objects.get(question=choice)
    assert failed.claimed_at is None and "reference unreadable" in failed.last_error
    done = QuestionGradingState.objects.get(question=binary)
    assert done.claimed_at is None and done.last_error == "" and done.runs == 1

    monkeypatch.setattr(grade_scoring.QuestionGrader, "__init__", real_init)
    retry = grade_questions(question_ids=[choice.pk, binary.pk])
    assert [r.status for r in retry] == ["graded", "up_to_date"]
    assert QuestionGradingState.objects.get(question=choice).last_error == ""


def _ungraded_world() -> list[Question]:
    """``_world`` with the grades its resolutions triggered (committed, so announced) removed."""
    questions = _world([AgentFactory() for _ in range(4)])
    Grade.objects.all().delete()
    QuestionGradingState.objects.all().delete()
    return questions


@pytest.mark.django_db(transaction=True)
def test_batches_written_in_the_background_all_land_before_the_run_ends(settings: Any) -> None:
    settings.HINDSIGHT_GRADING_BATCH_SIZE = 3  # several batches per run, each written by the writer thread
    questions = _ungraded_world()

    reports = grade_questions(question_ids=[q.pk for q in questions])

    assert [r.graded for r in reports] == [4, 4, 4, 0]
    # Claims are released only after the last batch is stored: every grade is there at return.
    assert Grade.objects.filter(is_current=True).count() == 12
    assert all(s.claimed_at is None for s in QuestionGradingState.objects.all())


@pytest.mark.django_db(transaction=True)
def test_a_failed_batch_write_is_redone_and_leaves_one_grade_per_forecast(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.HINDSIGHT_GRADING_BATCH_SIZE = 3
    questions = _ungraded_world()
    real_write = grade_writer.write_grade_batch
    calls = {"n": 0}

    def second_write_fails(**kwargs: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("connection lost")
        real_write(**kwargs)

    monkeypatch.setattr(grade_writer, "write_grade_batch", second_write_fails)

    reports = grade_questions(question_ids=[q.pk for q in questions])

    # The joint run failed on its second batch; each question was then run on its own.
    assert calls["n"] > 2
    assert [r.status for r in reports] == ["graded", "graded", "graded", "withdrawn"]
    current = Grade.objects.filter(is_current=True)
    assert current.count() == 12
    assert set(current.values_list("version", flat=True)) == {1}
    assert Grade.objects.count() == 12
    assert all(s.claimed_at is None and s.last_error == "" for s in QuestionGradingState.objects.all())
