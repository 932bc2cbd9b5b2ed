"""resolve_question / unresolve_question / annul_question: versioned, announced, safe to repeat."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ingestion.models import Question, Resolution
from ingestion.signals import resolution_changed
from tests.factories import QuestionFactory

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def announcements() -> Any:
    seen: list[dict[str, Any]] = []

    def receiver(sender: Any, **kwargs: Any) -> None:
        seen.append(kwargs)

    resolution_changed.connect(receiver, weak=False)
    yield seen
    resolution_changed.disconnect(receiver)


def test_resolve_amend_unresolve_annul_each_add_a_version(announcements: list[dict[str, Any]]) -> None:
    question = QuestionFactory(external_id="q-1")
    assert "v1 resolve" in run("resolve_question", "q-1", "--outcome", "true", "--note", "Announced on TV")
    assert "nothing changed" in run("resolve_question", str(question.pk), "--outcome", "true")
    assert "v2 amend" in run("resolve_question", "q-1", "--outcome", "false")
    assert "v3 unresolve" in run("unresolve_question", "q-1")
    question.refresh_from_db()
    assert question.status == Question.Status.OPEN
    assert "v4 annul" in run("annul_question", "q-1", "--reason", "The event was cancelled")
    assert "already annulled" in run("annul_question", "q-1", "--reason", "again")
    rows = list(Resolution.objects.filter(question=question).values_list("version", "kind", "outcome", "note"))
    assert rows == [
        (1, "resolve", True, "Announced on TV"),
        (2, "amend", False, ""),
        (3, "unresolve", None, ""),
        (4, "annul", None, "The event was cancelled"),
    ]
    question.refresh_from_db()
    assert question.status == Question.Status.ANNULLED
    assert [a["version"] for a in announcements] == [1, 2, 3, 4]
    assert all(a["question_id"] == question.pk for a in announcements)


def test_bad_outcomes_and_unknown_questions_fail_with_a_reason_and_change_nothing() -> None:
    QuestionFactory(external_id="q-2")
    with pytest.raises(CommandError, match="not valid JSON"):
        run("resolve_question", "q-2", "--outcome", "yes")
    with pytest.raises(CommandError, match="binary outcome is true or false"):
        run("resolve_question", "q-2", "--outcome", '"maybe"')
    with pytest.raises(CommandError, match="No question"):
        run("resolve_question", "nope", "--outcome", "true")
    with pytest.raises(CommandError, match="reason"):
        run("annul_question", "q-2", "--reason", "  ")
    assert Resolution.objects.count() == 0


def test_multiple_choice_outcome_must_be_an_option() -> None:
    QuestionFactory(external_id="q-3", type=Question.Type.MULTIPLE_CHOICE, options=["A", "B"])
    with pytest.raises(CommandError, match="not one of the options"):
        run("resolve_question", "q-3", "--outcome", '"C"')
    assert "v1 resolve" in run("resolve_question", "q-3", "--outcome", '"B"')
