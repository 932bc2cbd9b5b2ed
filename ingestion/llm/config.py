"""The configured LLM: server, model, context window and the limits of each stage.

Every stage of every LLM path has two limits: the most tokens one answer may take (sent as
``max_tokens`` on every call) and a wall-clock budget for all of the stage's calls together.
Defaults below; ``HINDSIGHT_LLM_STAGE_LIMITS`` overrides them as ``stage=tokens/seconds`` pairs
separated by commas (either part may be left empty), and ``HINDSIGHT_LLM_MAX_OUTPUT_TOKENS`` caps
every stage's tokens; unset, that cap is derived from the context window (:func:`derived_max_output`),
so a small window such as 2,048 tokens works with no other setting.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

STRUCTURED_MODES = ("json_schema", "tools", "text")


@dataclass(frozen=True)
class StageLimits:
    max_output_tokens: int
    seconds: float


DEFAULT_STAGE_LIMITS: dict[str, StageLimits] = {
    # Hindsight builder: the causal explanation, then the graph (all correction rounds together).
    "hindsight_explanation": StageLimits(1024, 300.0),
    "hindsight_graph": StageLimits(4096, 900.0),
    # Question generator: questions for one news cluster, then the review score of each question.
    "question_generation": StageLimits(1536, 300.0),
    "question_scoring": StageLimits(512, 120.0),
    # LRAE judge: one short verdict per call; the seconds cover one question's judging in a run.
    "judge": StageLimits(64, 600.0),
    # Detecting which structured-output method the server supports (a few tiny calls, once).
    "probe": StageLimits(16, 60.0),
}


@dataclass(frozen=True)
class LLMConfig:
    model: str
    base_url: str
    api_key: str
    call_timeout: float
    context_tokens: int
    max_output_tokens: int
    structured_output: str
    stage_limits: dict[str, StageLimits]

    def limits(self, stage: str) -> StageLimits:
        base = self.stage_limits.get(stage) or DEFAULT_STAGE_LIMITS[stage]
        return StageLimits(min(base.max_output_tokens, self.max_output_tokens), base.seconds)


def parse_stage_limits(text: str) -> dict[str, StageLimits]:
    """``stage=tokens/seconds,...`` over the defaults; ImproperlyConfigured names a bad entry."""
    limits = dict(DEFAULT_STAGE_LIMITS)
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        name, _, value = entry.partition("=")
        name = name.strip()
        if name not in DEFAULT_STAGE_LIMITS:
            raise ImproperlyConfigured(
                f"HINDSIGHT_LLM_STAGE_LIMITS: unknown stage {name!r}; stages are {', '.join(DEFAULT_STAGE_LIMITS)}."
            )
        tokens_text, _, seconds_text = value.partition("/")
        current = limits[name]
        try:
            tokens = int(tokens_text) if tokens_text.strip() else current.max_output_tokens
            seconds = float(seconds_text) if seconds_text.strip() else current.seconds
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"HINDSIGHT_LLM_STAGE_LIMITS: {entry!r} is not stage=tokens/seconds (e.g. hindsight_graph=3000/600)."
            ) from exc
        if tokens < 1 or seconds <= 0:
            raise ImproperlyConfigured(f"HINDSIGHT_LLM_STAGE_LIMITS: {entry!r} needs tokens >= 1 and seconds > 0.")
        limits[name] = StageLimits(tokens, seconds)
    return limits


DEFAULT_MAX_OUTPUT_TOKENS = 4096


def derived_max_output(context: int) -> int:
    """The answer cap when none is set: half the window (the prompt keeps the other half), at most
    DEFAULT_MAX_OUTPUT_TOKENS."""
    return min(DEFAULT_MAX_OUTPUT_TOKENS, context // 2)


def llm_config() -> LLMConfig | None:
    """The configured LLM from settings, or None when no model is set (every LLM path is off)."""
    model = (settings.LLM_MODEL or "").strip()
    if not model:
        return None
    mode = (settings.LLM_STRUCTURED_OUTPUT or "auto").strip()
    if mode != "auto" and mode not in STRUCTURED_MODES:
        raise ImproperlyConfigured(
            f"HINDSIGHT_LLM_STRUCTURED_OUTPUT is {mode!r}; use auto, {', '.join(STRUCTURED_MODES)}."
        )
    context = int(settings.LLM_CONTEXT_TOKENS)
    max_output = int(settings.LLM_MAX_OUTPUT_TOKENS or 0)
    if context < 512:
        raise ImproperlyConfigured(f"HINDSIGHT_LLM_CONTEXT_TOKENS ({context}) must be at least 512.")
    if max_output <= 0:
        max_output = derived_max_output(context)
    elif max_output >= context:
        raise ImproperlyConfigured(
            f"HINDSIGHT_LLM_MAX_OUTPUT_TOKENS ({max_output}) must be smaller than HINDSIGHT_LLM_CONTEXT_TOKENS "
            f"({context}); leave it unset to derive it from the window ({derived_max_output(context)})."
        )
    return LLMConfig(
        model=model,
        base_url=settings.LLM_BASE_URL or "",
        api_key=settings.LLM_API_KEY or "not-needed",
        call_timeout=float(settings.LLM_TIMEOUT_SECONDS),
        context_tokens=context,
        max_output_tokens=max_output,
        structured_output=mode,
        stage_limits=parse_stage_limits(settings.LLM_STAGE_LIMITS or ""),
    )
