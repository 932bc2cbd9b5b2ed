"""Staff see what an LLM build cost, per stage, and which graph stood in for a failed one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from grading.models import GraphBuildAttempt
from grading.services import hindsight_build
from tests.grading.corpus import make_corpus, make_question, resolve
from tests.grading.fake_llm import fake_llm

pytestmark = pytest.mark.django_db


def test_attempt_and_question_pages_show_the_stage_records(client: Client, staff: Any, settings: Any) -> None:
    settings.LLM_MODEL, settings.LLM_STRUCTURED_OUTPUT, settings.LLM_TIMEOUT_SECONDS = "staff-model", "text", 2.0
    settings.HINDSIGHT_GRAPH_BUDGET = 2
    question = make_question()
    make_corpus()
    resolve(question)
    # The model explains, then answers with JSON that is not a graph: the offline builder stands in.
    with fake_llm([{"content": "The committee approved the draft and the Senate passed it."}, {"content": "[]"}]) as (
        _,
        url,
    ):
        settings.LLM_BASE_URL = url
        graph = hindsight_build(question_id=question.pk)
    assert graph is not None and graph.fallback_reason
    failed = GraphBuildAttempt.objects.get(question=question, builder="llm")
    client.force_login(staff)
    page = client.get(f"/admin/grading/graphbuildattempt/{failed.pk}/change/").content.decode()
    assert "staff-model" in page and "hindsight_explanation" in page and "hindsight_graph" in page
    assert '<table class="llm-stages">' in page and "malformed_output" in page
    listing = client.get("/admin/grading/graphbuildattempt/").content.decode()
    assert "staff-model" in listing
    question_page = client.get(f"/admin/grading/questionhindsight/{question.pk}/change/").content.decode()
    assert "The LLM build failed (malformed_output)" in question_page and "llm-stages" in question_page
    assert json.loads(json.dumps(failed.stages))[1]["valid_first_try"] is False
