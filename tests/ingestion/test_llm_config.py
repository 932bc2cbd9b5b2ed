"""LLM settings: context window, answer cap, per-stage limits and the structured-output method."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from ingestion.llm.config import DEFAULT_STAGE_LIMITS, StageLimits, llm_config, parse_stage_limits


def configure(settings: Any, **overrides: Any) -> None:
    settings.LLM_MODEL = "m"
    settings.LLM_CONTEXT_TOKENS = 8192
    settings.LLM_MAX_OUTPUT_TOKENS = 4096
    settings.LLM_STAGE_LIMITS = ""
    settings.LLM_STRUCTURED_OUTPUT = "auto"
    for name, value in overrides.items():
        setattr(settings, name, value)


def test_no_model_means_no_llm(settings: Any) -> None:
    configure(settings, LLM_MODEL=" ")
    assert llm_config() is None


def test_stage_limits_override_the_defaults_and_the_cap_applies(settings: Any) -> None:
    configure(settings, LLM_STAGE_LIMITS="hindsight_graph=3000/600, judge=/30", LLM_MAX_OUTPUT_TOKENS=2048)
    config = llm_config()
    assert config is not None
    assert config.limits("hindsight_graph") == StageLimits(2048, 600.0)  # capped by the answer maximum
    assert config.limits("judge") == StageLimits(DEFAULT_STAGE_LIMITS["judge"].max_output_tokens, 30.0)
    assert config.limits("question_scoring") == DEFAULT_STAGE_LIMITS["question_scoring"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("graph=100/10", "unknown stage 'graph'"),
        ("judge=many/10", "is not stage=tokens/seconds"),
        ("judge=0/10", "needs tokens >= 1 and seconds > 0"),
    ],
)
def test_bad_stage_limits_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=message):
        parse_stage_limits(text)


@pytest.mark.parametrize(("window", "cap"), [(2048, 1024), (8192, 4096), (32768, 4096)])
def test_only_the_window_set_derives_the_answer_cap(settings: Any, window: int, cap: int) -> None:
    configure(settings, LLM_CONTEXT_TOKENS=window, LLM_MAX_OUTPUT_TOKENS=0)
    config = llm_config()
    assert config is not None and config.max_output_tokens == cap
    assert config.limits("hindsight_graph").max_output_tokens <= cap


def test_bad_window_or_method_is_refused(settings: Any) -> None:
    configure(settings, LLM_MAX_OUTPUT_TOKENS=9000)
    with pytest.raises(
        ImproperlyConfigured, match=r"MAX_OUTPUT_TOKENS \(9000\) must be smaller than .* leave it unset"
    ):
        llm_config()
    configure(settings, LLM_CONTEXT_TOKENS=256, LLM_MAX_OUTPUT_TOKENS=0)
    with pytest.raises(ImproperlyConfigured, match="must be at least 512"):
        llm_config()
    configure(settings, LLM_STRUCTURED_OUTPUT="grammar")
    with pytest.raises(ImproperlyConfigured, match="use auto, json_schema, tools, text"):
        llm_config()
