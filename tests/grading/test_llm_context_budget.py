"""The LLM builder inside a small context window: evidence is ranked and cut to fit, nothing is sent
over the limit, every call bounds its answer; a window too small for any evidence falls back."""

from __future__ import annotations

import json
from typing import Any

import pytest

from grading.models import GraphBuildAttempt, HindsightGraph
from grading.services import hindsight_build
from ingestion.llm.tokens import estimate_message_tokens
from tests.grading.corpus import make_corpus, make_question, resolve
from tests.grading.fake_llm import fake_llm
from tests.grading.graphs import valid_payload

pytestmark = pytest.mark.django_db
EXPLANATION = "The committee approved the draft, support grew, and the final vote passed."


@pytest.fixture
def small_window(settings: Any) -> Any:
    settings.LLM_MODEL, settings.LLM_API_KEY, settings.LLM_TIMEOUT_SECONDS = "small-model", "k", 2.0
    settings.LLM_STRUCTURED_OUTPUT = "json_schema"
    settings.LLM_CONTEXT_TOKENS, settings.LLM_MAX_OUTPUT_TOKENS = 4096, 1536
    settings.LLM_STAGE_LIMITS = "hindsight_explanation=400/60,hindsight_graph=1536/60"
    settings.HINDSIGHT_GRAPH_BUDGET = 2
    question = make_question()
    make_corpus()
    resolve(question)
    return question


def shown_ids(text: str) -> list[int]:
    return [int(line[1 : line.index("]")]) for line in text.splitlines() if line.startswith("[") and "]" in line]


def test_evidence_is_cut_to_fit_and_nothing_goes_over(settings: Any, small_window: Any) -> None:
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        if "response_format" not in body:
            return {"content": EXPLANATION}
        ids = shown_ids(body["messages"][0]["content"])
        return {"content": json.dumps(valid_payload(ids))}

    with fake_llm(respond) as (fake, url):
        settings.LLM_BASE_URL = url
        graph = hindsight_build(question_id=small_window.pk)
    explanation, drawing = fake.requests
    # Each prompt, as the server received it, fits beside the stage's answer budget.
    for request in fake.requests:
        assert estimate_message_tokens(request["messages"]) + request["max_tokens"] <= 4096
    assert [r["max_tokens"] for r in fake.requests] == [400, 1536]
    # The 36 articles did not all fit: the best-ranked ones were kept, with shortened summaries.
    stage1_ids = shown_ids(explanation["messages"][0]["content"])
    stage2_ids = shown_ids(drawing["messages"][0]["content"])
    assert 20 <= len(stage2_ids) < 36 and len(stage1_ids) >= len(stage2_ids)
    # Only the ids shown may be cited: the schema's enum says so.
    source_ids = drawing["response_format"]["json_schema"]["schema"]["properties"]["events"]["items"]
    assert sorted(source_ids["properties"]["source_ids"]["items"]["enum"]) == sorted(stage2_ids)
    assert graph is not None and graph.builder == "llm" and graph.graph_built
    attempt = GraphBuildAttempt.objects.get(graph=graph)
    budgets = {s["stage"]: s["prompt_budget_tokens"] for s in attempt.stages}
    assert budgets == {"hindsight_explanation": 4096 - 400 - 163, "hindsight_graph": 4096 - 1536 - 163}


def test_a_window_too_small_for_any_evidence_sends_nothing_and_falls_back(settings: Any, small_window: Any) -> None:
    settings.LLM_CONTEXT_TOKENS, settings.LLM_MAX_OUTPUT_TOKENS = 600, 512
    settings.LLM_STAGE_LIMITS = "hindsight_explanation=300/60"
    with fake_llm([{"content": EXPLANATION}]) as (fake, url):
        settings.LLM_BASE_URL = url
        graph = hindsight_build(question_id=small_window.pk)
    assert fake.requests == []
    attempt = GraphBuildAttempt.objects.get(question=small_window, builder="llm")
    assert attempt.reason == "context_exceeded" and "raise HINDSIGHT_LLM_CONTEXT_TOKENS" in attempt.error
    assert graph is not None and graph.builder == "offline" and "(context_exceeded)" in graph.fallback_reason
    assert HindsightGraph.objects.get(question=small_window, is_current=True) == graph
