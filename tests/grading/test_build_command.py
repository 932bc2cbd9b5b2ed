"""python manage.py build_hindsight ID [--builder offline|llm]"""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from grading.models import GraphBuildAttempt, HindsightGraph
from tests.grading.corpus import make_corpus, make_question, resolve
from tests.grading.fake_llm import closed_port_url

pytestmark = pytest.mark.django_db


def test_builds_by_external_id_and_is_safe_to_rerun() -> None:
    question = make_question(external_id="artemis-2026")
    make_corpus()
    resolve(question)
    out = StringIO()
    call_command("build_hindsight", "artemis-2026", "--builder", "offline", stdout=out)
    assert "Built hindsight graph v1" in out.getvalue() and "passed the quality thresholds" in out.getvalue()
    call_command("build_hindsight", str(question.pk), "--builder", "offline", stdout=out)
    assert "v2" in out.getvalue()
    assert HindsightGraph.objects.filter(question=question, is_current=True).get().version == 2


def test_unknown_question_fails_with_one_line() -> None:
    with pytest.raises(CommandError, match="No question with id or external id 'nope'"):
        call_command("build_hindsight", "nope")


def test_unresolved_question_fails_with_the_reason() -> None:
    question = make_question()
    with pytest.raises(CommandError, match="not_resolved"):
        call_command("build_hindsight", str(question.pk), "--builder", "offline")
    assert GraphBuildAttempt.objects.get(question=question).reason == "not_resolved"


def test_bad_builder_is_refused() -> None:
    question = make_question()
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("build_hindsight", str(question.pk), "--builder", "magic")


def test_an_llm_build_that_fails_says_the_offline_builder_stood_in(settings: Any) -> None:
    settings.LLM_MODEL, settings.LLM_BASE_URL, settings.LLM_STRUCTURED_OUTPUT = "m", closed_port_url(), "tools"
    question = make_question()
    make_corpus()
    resolve(question)
    out = StringIO()
    call_command("build_hindsight", str(question.pk), "--builder", "llm", stdout=out)
    assert "(Offline builder" in out.getvalue()
    assert "stood in for the LLM build: The LLM build failed (server_down)" in out.getvalue()
