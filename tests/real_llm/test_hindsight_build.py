"""A hindsight build against the real small model ends with a stored graph within its time budget:
the model's, or (labelled, with the reason) the offline builder's."""

from __future__ import annotations

import time
from typing import Any

import pytest

from grading.models import GraphBuildAttempt, HindsightGraph
from grading.services import hindsight_build
from tests.real_llm.conftest import MODEL, assert_estimates_cover_the_real_counts
from tests.real_llm.storyline import make_water_bill_question

pytestmark = [pytest.mark.real_llm, pytest.mark.django_db]
# The stage budgets of the suite (explanation 240 s + graph 480 s) and the offline fallback.
BUILD_BUDGET_SECONDS = 240 + 480 + 60


def test_build_on_a_resolved_storyline_stores_a_graph(settings: Any, real_llm: str, measured: Any) -> None:
    settings.HINDSIGHT_GRAPH_BUDGET = 3  # the explanation and two graph rounds
    question = make_water_bill_question()
    started = time.monotonic()
    graph = hindsight_build(question_id=question.pk, builder="llm")
    elapsed = time.monotonic() - started
    assert elapsed < BUILD_BUDGET_SECONDS
    attempt = GraphBuildAttempt.objects.get(question=question, builder="llm")
    graph_problems = [p for entry in attempt.log if entry["stage"] == "hindsight_graph" for p in entry["problems"]]
    measured(attempt.stages, [f"build: {attempt.reason}: {attempt.error}", *graph_problems[:3]])
    assert attempt.model_name == MODEL and attempt.stages and attempt.prompts
    assert {s["stage"] for s in attempt.stages} >= {"hindsight_explanation"}
    for stage in attempt.stages:
        assert stage["seconds"] <= stage["budget_seconds"] + 5
        for call in stage["per_call"]:
            assert call["completion_tokens"] <= stage["max_output_tokens"]
    assert_estimates_cover_the_real_counts(attempt.stages)
    assert graph is not None, attempt.error
    assert HindsightGraph.objects.get(question=question, is_current=True) == graph
    if graph.builder == "llm":
        assert graph.model_name == MODEL and graph.fallback_reason == ""
    else:
        # The model's graph was unusable: the fallback is labelled and the failure recorded.
        assert graph.fallback_reason and attempt.reason in {
            "malformed_output",
            "timeout",
            "quality_failed",
            "context_exceeded",
            "server_error",
        }
        assert GraphBuildAttempt.objects.get(graph=graph).fallback_of == attempt
    assert graph.events.filter(is_outcome=True).count() == 1
