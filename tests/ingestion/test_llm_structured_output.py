"""The shared LLM client against a local OpenAI-compatible server: how JSON is asked for (detected
once per server and model, or set), bounded calls, stage time budgets and what each stage records."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from ingestion.llm.client import LLMClient, LLMError
from ingestion.llm.config import llm_config
from ingestion.llm.structured import JsonSchema
from tests.grading.fake_llm import closed_port_url, fake_llm

SCHEMA = JsonSchema(
    name="submit_answer",
    description="The answer.",
    schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["answer"],
        "properties": {"answer": {"type": "string"}},
    },
)
ASK = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture
def configure(settings: Any) -> Any:
    def point(url: str, mode: str = "auto", **overrides: Any) -> LLMClient:
        settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY = url, "test-model", "k"
        settings.LLM_TIMEOUT_SECONDS = 2.0
        settings.LLM_CONTEXT_TOKENS, settings.LLM_MAX_OUTPUT_TOKENS = 4096, 1024
        settings.LLM_STAGE_LIMITS, settings.LLM_STRUCTURED_OUTPUT = "", mode
        for name, value in overrides.items():
            setattr(settings, name, value)
        config = llm_config()
        assert config is not None
        return LLMClient(config)

    return point


def by_method(json_schema: bool, tools: bool) -> Any:
    """A server that enforces the schema only through the methods it supports, and answers prose otherwise."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        if "response_format" in body:
            if not json_schema:
                return {"status": 400, "body": {"error": {"message": "response_format is not supported"}}}
            return {"content": json.dumps({"ok": True} if "probe" in json.dumps(body) else {"answer": "Paris"})}
        if "tools" in body:
            if not tools:
                return {"content": "Hello! How can I help?"}
            name = body["tools"][0]["function"]["name"]
            return {
                "tool_args": json.dumps({"ok": True} if name == "probe" else {"answer": "Paris"}),
                "tool_name": name,
            }
        text = body["messages"][-1]["content"]
        return {"content": '```json\n{"answer": "Paris"}\n```' if "JSON schema" in text else "Hello there."}

    return respond


def test_json_schema_is_preferred_and_remembered(configure: Any) -> None:
    with fake_llm(by_method(json_schema=True, tools=True)) as (fake, url):
        client = configure(url)
        reply = client.stage("question_scoring").structured(ASK, SCHEMA)
        assert reply.payload == {"answer": "Paris"} and reply.mode == "json_schema"
        sent = fake.requests[-1]
        assert sent["response_format"]["json_schema"]["schema"] == SCHEMA.schema
        assert sent["max_tokens"] == 512
        # The system instructions were folded into the first user turn.
        assert [m["role"] for m in sent["messages"]] == ["user"]
        assert sent["messages"][0]["content"].startswith("Be brief.\n\nWhat is the capital")
        probes = len(fake.requests) - 1
        assert probes == 1
        # A second job against the same server and model asks no probe again.
        again = configure(url)
        again.stage("question_scoring").structured(ASK, SCHEMA)
        assert len(fake.requests) == probes + 2
        assert sorted(r["stage"] for r in client.stages()) == ["probe", "question_scoring"]


def test_a_server_without_response_format_gets_a_forced_tool_call(configure: Any) -> None:
    with fake_llm(by_method(json_schema=False, tools=True)) as (fake, url):
        client = configure(url)
        reply = client.stage("question_scoring").structured(ASK, SCHEMA)
        assert reply.payload == {"answer": "Paris"} and reply.mode == "tools"
        assert fake.requests[-1]["tool_choice"] == {"type": "function", "function": {"name": "submit_answer"}}
        # The rejected answer goes back as plain assistant content, not as a tool-call turn.
        assert reply.as_history() == {"role": "assistant", "content": json.dumps({"answer": "Paris"})}


def test_a_server_that_ignores_both_gets_the_schema_in_the_prompt(configure: Any) -> None:
    with fake_llm(by_method(json_schema=False, tools=False)) as (fake, url):
        client = configure(url)
        reply = client.stage("question_scoring").structured(ASK, SCHEMA)
        assert reply.payload == {"answer": "Paris"} and reply.mode == "text"
        prompt = fake.requests[-1]["messages"][-1]["content"]
        assert "valid against this JSON schema" in prompt and '"required":["answer"]' in prompt
        assert "response_format" not in fake.requests[-1] and "tools" not in fake.requests[-1]


def test_the_setting_skips_detection(configure: Any) -> None:
    with fake_llm(by_method(json_schema=True, tools=True)) as (fake, url):
        client = configure(url, mode="tools")
        assert client.stage("question_scoring").structured(ASK, SCHEMA).mode == "tools"
        assert len(fake.requests) == 1


def test_a_refusal_mid_job_moves_to_the_next_method(configure: Any) -> None:
    state = {"schema_ok": True}

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        if "response_format" in body and not state["schema_ok"]:
            return {"status": 400, "body": {"error": {"message": "unsupported schema keyword"}}}
        return by_method(json_schema=True, tools=True)(body)

    with fake_llm(respond) as (_, url):
        client = configure(url)
        client.structured_mode()
        state["schema_ok"] = False
        reply = client.stage("question_scoring").structured(ASK, SCHEMA)
        assert reply.payload == {"answer": "Paris"} and reply.mode == "tools"
        assert configure(url).structured_mode() == "tools"


def test_a_server_down_during_detection_is_an_error_and_not_remembered(configure: Any) -> None:
    url = closed_port_url()
    client = configure(url)
    with pytest.raises(LLMError) as failure:
        client.stage("question_scoring").structured(ASK, SCHEMA)
    assert failure.value.reason == "server_down"
    with fake_llm(by_method(json_schema=False, tools=False)) as (_, up):
        assert configure(up).structured_mode() == "text"


def test_a_cut_off_answer_says_so(configure: Any) -> None:
    with fake_llm([{"content": '{"answer": "Par', "finish_reason": "length"}]) as (_, url):
        reply = configure(url, mode="json_schema").stage("question_scoring").structured(ASK, SCHEMA)
    assert reply.payload is None and "cut off at the 512-token limit" in reply.problem


def test_a_prompt_over_the_window_is_never_sent(configure: Any) -> None:
    with fake_llm([{"content": "ok"}]) as (fake, url):
        client = configure(url, LLM_CONTEXT_TOKENS=1024, LLM_MAX_OUTPUT_TOKENS=512)
        stage = client.stage("question_scoring")
        long = [{"role": "user", "content": "word " * 2000}]
        assert stage.room(long) < 0
        with pytest.raises(LLMError) as failure:
            stage.text(long)
    assert failure.value.reason == "context_exceeded" and "1024-token context" in failure.value.message
    assert fake.requests == []


def test_a_stage_stops_when_its_time_is_spent(configure: Any) -> None:
    with fake_llm([{"hang": True}]) as (fake, url):
        client = configure(url, LLM_STAGE_LIMITS="judge=64/0.5")
        stage = client.stage("judge")
        started = time.monotonic()
        with pytest.raises(LLMError) as failure:
            stage.text([{"role": "user", "content": "Yes or no?"}])
        assert time.monotonic() - started < 2  # the stage's 0.5 s, not the 2 s call timeout
        assert failure.value.reason == "timeout" and "within 0.5 s (judge stage)" in failure.value.message
        with pytest.raises(LLMError, match=r"used its 0\.5 s budget"):
            stage.text([{"role": "user", "content": "Yes or no?"}])
        assert len(fake.requests) == 1
    assert client.stages()[0]["outcome"] == "timeout"


def test_usage_is_recorded_and_estimated_when_the_server_reports_none(configure: Any) -> None:
    with fake_llm([{"content": "Paris"}, {"content": "Paris is the capital.", "usage": None}]) as (_, url):
        client = configure(url)
        stage = client.stage("judge")
        stage.text([{"role": "user", "content": "Capital of France?"}])
        stage.text([{"role": "user", "content": "Capital of France?"}])
    record = client.stages()[0]
    assert record["calls"] == 2 and record["max_output_tokens"] == 64
    first, second = record["per_call"]
    assert first["prompt_tokens"] == 101 and first["usage_reported"] is True
    assert second["usage_reported"] is False and second["prompt_tokens"] == second["estimated_prompt_tokens"]
    assert second["completion_tokens"] > 0
    assert client.usage()["total_tokens"] == record["prompt_tokens"] + record["completion_tokens"]


def test_an_answer_that_used_the_whole_budget_counts_as_cut_off(configure: Any) -> None:
    # llama-cpp-python reports a forced tool call as "tool_calls" even when max_tokens cut it.
    step = {
        "tool_args": '{"answer": "Par',
        "tool_name": "submit_answer",
        "usage": {"prompt_tokens": 50, "completion_tokens": 512, "total_tokens": 562},
    }
    with fake_llm([step]) as (_, url):
        reply = configure(url, mode="tools").stage("question_scoring").structured(ASK, SCHEMA)
    assert reply.payload is None and reply.cut_off and "cut off at the 512-token limit" in reply.problem
