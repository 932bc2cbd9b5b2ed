"""The LLM builder against a local OpenAI-compatible server (the real openai client, real HTTP):
malformed answers a real model rarely gives, corrections, failures and the offline fallback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from grading.models import GraphBuildAttempt, HindsightGraph
from grading.services import hindsight_build
from tests.grading.corpus import STORYLINES, make_corpus, make_question, resolve
from tests.grading.fake_llm import closed_port_url, fake_llm
from tests.grading.graphs import mutate, valid_payload

pytestmark = pytest.mark.django_db
EXPLANATION = "The Senate committee approved the draft [1], support grew, and the final vote passed [2]."


@pytest.fixture
def world(settings: Any) -> Iterator[tuple[Any, list[int]]]:
    settings.LLM_MODEL = "test-model"
    settings.LLM_API_KEY = "test-key"
    settings.LLM_TIMEOUT_SECONDS = 1.0
    settings.HINDSIGHT_GRAPH_BUDGET = 3
    # The scripted server answers with tool calls; the other methods have their own tests.
    settings.LLM_STRUCTURED_OUTPUT = "tools"
    # Room for every article of the corpus (the context budget has its own tests).
    settings.LLM_CONTEXT_TOKENS = 32768
    question = make_question()
    articles = make_corpus()
    resolve(question)
    ids = sorted(a.pk for a in articles if "example" in a.url and "/noise/" not in a.url)
    yield question, ids


def good(ids: list[int]) -> dict[str, Any]:
    return {"tool_args": json.dumps(valid_payload(ids))}


def run(settings: Any, question: Any, script: list[dict[str, Any]]) -> tuple[HindsightGraph | None, Any]:
    with fake_llm(script) as (fake, url):
        settings.LLM_BASE_URL = url
        graph = hindsight_build(question_id=question.pk)
    return graph, fake


def llm_attempt(question: Any) -> GraphBuildAttempt:
    return GraphBuildAttempt.objects.get(question=question, builder="llm")


def assert_fallback(question: Any, reason: str) -> HindsightGraph:
    """The offline builder stood in: its graph is current, labelled, and its attempt names the failed one."""
    graph = HindsightGraph.objects.get(question=question, is_current=True)
    assert graph.builder == "offline" and f"({reason})" in graph.fallback_reason
    fallback = GraphBuildAttempt.objects.get(graph=graph)
    assert fallback.builder == "offline" and fallback.fallback_of == llm_attempt(question)
    return graph


def test_valid_answer_is_stored_with_prompts_model_and_usage(settings: Any, world: Any) -> None:
    question, ids = world
    graph, fake = run(settings, question, [{"content": EXPLANATION}, good(ids)])
    assert graph is not None and graph.graph_built, graph and graph.quality
    assert graph.builder == "llm" and graph.model_name == "test-model" and graph.builder_version.startswith("llm-")
    assert graph.fallback_reason == ""
    assert graph.explanation == EXPLANATION
    assert graph.events.count() == 12 and graph.links.count() == 11
    assert graph.events.get(is_outcome=True).event_type == "Outcome"
    assert [p["stage"] for p in graph.prompts] == ["hindsight_explanation", "hindsight_graph"]
    assert graph.token_usage == {"prompt_tokens": 203, "completion_tokens": 40, "total_tokens": 243}
    # Stage 2 forces the submit_graph tool, whose schema lists only the evidence ids shown.
    graph_request = fake.requests[1]
    assert graph_request["tools"][0]["function"]["name"] == "submit_graph"
    assert graph_request["tool_choice"]["function"]["name"] == "submit_graph"
    source_ids = graph_request["tools"][0]["function"]["parameters"]["properties"]["events"]["items"]
    assert set(ids) <= set(source_ids["properties"]["source_ids"]["items"]["enum"])
    # Every call bounds its answer; instructions travel in the first user turn (no system role).
    assert [r["max_tokens"] for r in fake.requests] == [1024, 4096]
    assert all(m["role"] != "system" for r in fake.requests for m in r["messages"])
    # Stage 1 evidence comes from the corpus, as of the resolution plus the window.
    stage1 = fake.requests[0]["messages"][0]["content"]
    assert "You are a HindsightAgent" in stage1 and f"[{ids[0]}]" in stage1 and "football" not in stage1
    attempt = GraphBuildAttempt.objects.get(graph=graph)
    assert attempt.succeeded and attempt.reason == "built" and attempt.builder == "llm"
    # The attempt keeps the build's record for staff: model, method, prompts, tokens, seconds per stage.
    assert attempt.model_name == "test-model" and attempt.structured_output == "tools"
    assert attempt.token_usage == graph.token_usage and len(attempt.prompts) == 2
    stages = {s["stage"]: s for s in attempt.stages}
    assert set(stages) == {"hindsight_explanation", "hindsight_graph"}
    assert stages["hindsight_graph"]["calls"] == 1 and stages["hindsight_graph"]["valid_first_try"] is True
    assert stages["hindsight_graph"]["prompt_tokens"] == 102 and stages["hindsight_graph"]["completion_tokens"] == 20
    assert stages["hindsight_explanation"]["seconds"] >= 0 and stages["hindsight_graph"]["structured_output"] == "tools"


MALFORMED = {
    "bad_json": lambda ids: {"tool_args": '{"events": [ {"id": '},
    "wrong_types": lambda ids: {
        "tool_args": json.dumps(mutate(valid_payload(ids), lambda p: p["events"][0].update(title=7)))
    },
    "out_of_range": lambda ids: {
        "tool_args": json.dumps(mutate(valid_payload(ids), lambda p: p["links"][0].update(confidence=1.7)))
    },
    "unknown_ids": lambda ids: {
        "tool_args": json.dumps(mutate(valid_payload(ids), lambda p: p["links"][0].update(target="ghost")))
    },
    "unknown_article": lambda ids: {
        "tool_args": json.dumps(mutate(valid_payload(ids), lambda p: p["events"][0].update(source_ids=[10**9])))
    },
    "cycle": lambda ids: {
        "tool_args": json.dumps(
            mutate(valid_payload(ids), lambda p: p["links"].append(dict(p["links"][0], source="ev4", target="ev1")))
        )
    },
    "neutral_magnitude": lambda ids: {
        "tool_args": json.dumps(
            mutate(
                valid_payload(ids),
                lambda p: p["events"][0].update(impact={"direction": "Neutral", "magnitude": 0.6, "confidence": 0.5}),
            )
        )
    },
    "date_outside_window": lambda ids: {
        "tool_args": json.dumps(mutate(valid_payload(ids), lambda p: p["events"][0].update(date="2026-05-01")))
    },
    "no_tool_call": lambda ids: {"content": ""},
}
EXPECTED = {
    "bad_json": "not valid JSON",
    "wrong_types": "title",
    "out_of_range": "outside [0, 1]",
    "unknown_ids": "'ghost' is not the id of an event",
    "unknown_article": "is not one of the evidence articles",
    "cycle": "cycle",
    "neutral_magnitude": "Neutral impact has magnitude <= 0.3",
    "date_outside_window": "outside the allowed window",
    "no_tool_call": "The answer is empty",
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_output_within_budget_records_the_reason_and_falls_back(settings: Any, world: Any, case: str) -> None:
    question, ids = world
    bad = MALFORMED[case](ids)
    graph, fake = run(settings, question, [{"content": EXPLANATION}, bad, bad])
    attempt = llm_attempt(question)
    assert attempt.reason == "malformed_output" and not attempt.succeeded
    assert EXPECTED[case] in attempt.error
    assert attempt.stages[1]["valid_first_try"] is False and attempt.stages[1]["calls"] == 2
    # The first problem went back to the model as a correction before the retry.
    correction = fake.requests[2]["messages"][-1]
    assert correction["role"] == "user" and EXPECTED[case] in correction["content"]
    assert len(fake.requests) == 3
    # The question is not left without a graph: the offline builder stood in, labelled.
    assert graph is not None and graph == assert_fallback(question, "malformed_output")
    assert graph.graph_built


def test_correction_then_success(settings: Any, world: Any) -> None:
    question, ids = world
    cyclic = MALFORMED["cycle"](ids)
    graph, fake = run(settings, question, [{"content": EXPLANATION}, cyclic, good(ids)])
    assert graph is not None and graph.graph_built and graph.builder == "llm"
    # The rejected answer goes back as a plain assistant turn, the problems as the user's reply:
    # no tool-call protocol, so chat templates without a tool role accept it too.
    previous, correction = fake.requests[2]["messages"][-2:]
    assert previous == {"role": "assistant", "content": cyclic["tool_args"]}
    assert correction["role"] == "user" and "cycle" in correction["content"]
    attempt = GraphBuildAttempt.objects.get(graph=graph)
    assert [entry["problems"] != [] for entry in attempt.log if entry["stage"] == "hindsight_graph"] == [True, False]
    assert attempt.stages[1]["valid_first_try"] is False


def test_quality_failure_asks_for_intermediate_causes_then_succeeds(settings: Any, world: Any) -> None:
    question, ids = world
    thin = {"tool_args": json.dumps(valid_payload(ids[:4], events=2))}
    graph, fake = run(settings, question, [{"content": EXPLANATION}, thin, good(ids)])
    assert graph is not None and graph.graph_built and graph.builder == "llm"
    assert "add intermediate cause events" in fake.requests[2]["messages"][-1]["content"]


def test_quality_never_met_falls_back_to_an_offline_graph_that_passes(settings: Any, world: Any) -> None:
    question, ids = world
    thin = {"tool_args": json.dumps(valid_payload(ids[:4], events=2))}
    graph, _ = run(settings, question, [{"content": EXPLANATION}, thin, thin])
    assert graph is not None and graph.graph_built
    assert graph.builder == "offline" and "missed the quality thresholds" in graph.fallback_reason
    attempt = llm_attempt(question)
    assert attempt.reason == "quality_failed" and not attempt.succeeded and attempt.graph is None
    assert GraphBuildAttempt.objects.get(graph=graph).fallback_of == attempt


def test_quality_never_met_by_either_builder_keeps_the_llm_graph(settings: Any) -> None:
    settings.LLM_MODEL, settings.LLM_TIMEOUT_SECONDS, settings.LLM_STRUCTURED_OUTPUT = "test-model", 1.0, "tools"
    settings.HINDSIGHT_GRAPH_BUDGET = 2
    question = make_question()
    articles = make_corpus(STORYLINES[:4], outlets=("herald.example.org",))
    resolve(question)
    ids = sorted(a.pk for a in articles)
    thin = {"tool_args": json.dumps(valid_payload(ids, events=2))}
    graph, _ = run(settings, question, [{"content": EXPLANATION}, thin])
    assert graph is not None and graph.is_current and graph.graph_built is False
    assert graph.builder == "llm" and graph.fallback_reason == ""
    assert GraphBuildAttempt.objects.get(graph=graph).reason == "quality_failed"


def test_timeout_is_recorded_and_falls_back(settings: Any, world: Any) -> None:
    question, _ = world
    graph, _ = run(settings, question, [{"hang": True}])
    attempt = llm_attempt(question)
    assert attempt.reason == "timeout" and "did not answer within 1 s" in attempt.error
    assert attempt.stages[0]["outcome"] == "timeout"
    assert graph is not None and graph == assert_fallback(question, "timeout")


def test_http_500_is_recorded_and_falls_back(settings: Any, world: Any) -> None:
    question, _ = world
    body = {"error": {"message": "model overloaded", "type": "server_error"}}
    graph, _ = run(settings, question, [{"content": EXPLANATION}, {"status": 500, "body": body}])
    attempt = llm_attempt(question)
    assert attempt.reason == "server_error" and "HTTP 500" in attempt.error
    assert graph is not None and graph == assert_fallback(question, "server_error")


def test_server_down_is_recorded_and_falls_back(settings: Any, world: Any) -> None:
    question, _ = world
    settings.LLM_BASE_URL = closed_port_url()
    graph = hindsight_build(question_id=question.pk)
    attempt = llm_attempt(question)
    assert attempt.reason == "server_down" and "unreachable" in attempt.error
    assert graph is not None and graph == assert_fallback(question, "server_down")


def test_failed_rebuild_keeps_the_current_graph(settings: Any, world: Any) -> None:
    question, ids = world
    first, _ = run(settings, question, [{"content": EXPLANATION}, good(ids)])
    second, _ = run(settings, question, [{"status": 503}])
    assert first is not None and second is None
    # A current graph that passed the thresholds beats any fallback: nothing else is built.
    assert HindsightGraph.objects.get(question=question, is_current=True).pk == first.pk
    assert not GraphBuildAttempt.objects.filter(question=question, fallback_of__isnull=False).exists()


def test_llm_requested_without_a_model(settings: Any, world: Any) -> None:
    question, _ = world
    settings.LLM_MODEL = ""
    assert hindsight_build(question_id=question.pk, builder="llm") is None
    assert GraphBuildAttempt.objects.get(question=question).reason == "not_configured"
    # With no model configured the default builder is the offline one.
    graph = hindsight_build(question_id=question.pk)
    assert graph is not None and graph.builder == "offline" and graph.fallback_reason == ""
