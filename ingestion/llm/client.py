"""One client for every LLM path: bounded calls, prompts within the window, structured answers.

``LLMClient`` wraps the openai client for one job (a hindsight build, a news cluster, one
question's judging). Work is done in named stages (``client.stage("hindsight_graph")``); each
stage has its limits from ``ingestion.llm.config``:

- every call sends ``max_tokens`` (the stage's answer budget);
- a prompt is estimated before it is sent (``ingestion.llm.tokens``) and refused with
  ``context_exceeded`` if it would not leave the answer budget inside the context window, so a
  server never sees an over-long prompt; callers assemble prompts with ``Stage.room`` first;
- all calls of a stage share one wall-clock budget: each call's timeout is what is left of it;
- instructions are sent in the first user turn, not as a system message, since some chat
  templates (Gemma's among them) drop or reject the system role.

Each stage keeps a record (calls, prompt and answer tokens, seconds, the structured-output method,
whether the first structured answer was valid) that the caller stores for staff.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import openai

from ingestion.llm.config import STRUCTURED_MODES, LLMConfig
from ingestion.llm.jsontext import parse_json_object
from ingestion.llm.structured import JsonSchema, remember_mode, remembered_mode
from ingestion.llm.tokens import estimate_message_tokens, estimate_tokens

logger = logging.getLogger(__name__)

# Kept free of the estimate for template tokens and tokenizers that split more finely than it assumes.
RESERVE_FRACTION = 0.04
RESERVE_MIN = 48
PROBE = JsonSchema(
    name="probe",
    description="Say whether you can answer.",
    schema={
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    },
)
# A request the probe schema would not be the natural answer to, so a server that ignores the
# schema is caught answering in prose.
PROBE_MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "Say hello."}]


class LLMError(Exception):
    """A call that produced no answer. ``reason``: timeout, server_error, server_down, context_exceeded."""

    def __init__(self, reason: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.status = status


@dataclass
class CallRecord:
    estimated_prompt_tokens: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    finish_reason: str = ""
    structured_output: str = ""
    usage_reported: bool = True


@dataclass
class StageRecord:
    stage: str
    max_output_tokens: int
    prompt_budget_tokens: int
    budget_seconds: float
    calls: list[CallRecord] = field(default_factory=list)
    structured_output: str = ""
    valid_first_try: bool | None = None
    outcome: str = ""

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls)

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.calls)

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.calls)

    def as_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "calls": len(self.calls),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 2),
            "max_output_tokens": self.max_output_tokens,
            "prompt_budget_tokens": self.prompt_budget_tokens,
            "budget_seconds": self.budget_seconds,
            "structured_output": self.structured_output,
            "valid_first_try": self.valid_first_try,
            "outcome": self.outcome,
            "per_call": [asdict(c) | {"seconds": round(c.seconds, 2)} for c in self.calls],
        }


@dataclass
class Reply:
    text: str
    finish_reason: str
    mode: str = ""
    payload: dict[str, Any] | None = None
    problem: str = ""

    @property
    def cut_off(self) -> bool:
        return self.finish_reason == "length"

    def as_history(self) -> dict[str, Any]:
        """The answer as an assistant turn any server accepts (plain content, no tool-call protocol)."""
        return {"role": "assistant", "content": self.text}


def merge_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """System instructions folded into the first user turn."""
    system = [str(m.get("content") or "") for m in messages if m.get("role") == "system"]
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    if system:
        instructions = "\n\n".join(system)
        if rest and rest[0].get("role") == "user":
            rest[0]["content"] = f"{instructions}\n\n{rest[0].get('content') or ''}"
        else:
            rest.insert(0, {"role": "user", "content": instructions})
    return rest


class LLMClient:
    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.openai = openai.OpenAI(
            base_url=config.base_url or None, api_key=config.api_key, timeout=config.call_timeout, max_retries=0
        )
        self.records: list[StageRecord] = []
        self.prompts: list[dict[str, Any]] = []
        self._mode: str | None = None if config.structured_output == "auto" else config.structured_output

    @property
    def model(self) -> str:
        return self.config.model

    def stage(self, name: str) -> Stage:
        return Stage(self, name)

    def stages(self) -> list[dict[str, Any]]:
        return [r.as_dict() for r in self.records]

    def usage(self) -> dict[str, int]:
        prompt = sum(r.prompt_tokens for r in self.records)
        completion = sum(r.completion_tokens for r in self.records)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def structured_mode(self) -> str:
        """The structured-output method: the setting, else what was detected for this server and model."""
        if self._mode is None:
            self._mode = remembered_mode(self.config.base_url, self.model) or self._detect()
        return self._mode

    def downgrade(self, failed: str) -> str | None:
        """After the server refused ``failed`` mid-job: the next method (remembered), or None."""
        if self.config.structured_output != "auto" or failed == "text":
            return None
        following = STRUCTURED_MODES[STRUCTURED_MODES.index(failed) + 1]
        self._mode = following
        remember_mode(self.config.base_url, self.model, following)
        return following

    def _detect(self) -> str:
        probe = self.stage("probe")
        for mode in ("json_schema", "tools"):
            try:
                reply = probe.structured_once(PROBE_MESSAGES, PROBE, mode)
            except LLMError as exc:
                if exc.status is not None:  # the server refused the method: try the next one
                    continue
                probe.record.outcome = exc.reason
                raise
            if reply.payload is not None and isinstance(reply.payload.get("ok"), bool):
                probe.record.outcome = f"detected {mode}"
                remember_mode(self.config.base_url, self.model, mode)
                return mode
        # Neither method is enforced; the server must still answer plainly before text mode is kept.
        probe.text(PROBE_MESSAGES)
        probe.record.outcome = "detected text"
        remember_mode(self.config.base_url, self.model, "text")
        return "text"


class Stage:
    """One named stage of a job: its token and time limits and its record."""

    def __init__(self, client: LLMClient, name: str) -> None:
        config = client.config
        limits = config.limits(name)
        self.client = client
        self.name = name
        self.reserve = max(RESERVE_MIN, int(config.context_tokens * RESERVE_FRACTION))
        self.max_output_tokens = max(1, min(limits.max_output_tokens, config.context_tokens // 2))
        self.prompt_budget = config.context_tokens - self.max_output_tokens - self.reserve
        self.budget_seconds = limits.seconds
        self.deadline = time.monotonic() + limits.seconds
        self.record = StageRecord(
            stage=name,
            max_output_tokens=self.max_output_tokens,
            prompt_budget_tokens=self.prompt_budget,
            budget_seconds=limits.seconds,
        )
        client.records.append(self.record)

    # -- budgets
    def remaining_seconds(self) -> float:
        return self.deadline - time.monotonic()

    def overhead(self, schema: JsonSchema | None, mode: str) -> int:
        """Prompt tokens a structured method adds beyond the messages."""
        if schema is None or mode == "json_schema":
            return 0
        if mode == "tools":  # many chat templates print the tool definitions into the prompt
            return estimate_tokens(json.dumps(schema.tool()))
        return estimate_tokens(schema.instructions()) + 2

    def room(self, messages: list[dict[str, Any]], schema: JsonSchema | None = None) -> int:
        """Tokens left for more prompt text after ``messages`` (and the structured method's share)."""
        mode = self.client.structured_mode() if schema is not None else ""
        return self.prompt_budget - estimate_message_tokens(messages) - self.overhead(schema, mode)

    def note_validity(self, valid: bool) -> None:
        """Whether the stage's first structured answer passed validation (later calls do not change it)."""
        if self.record.valid_first_try is None:
            self.record.valid_first_try = valid

    # -- calls
    def text(self, messages: list[dict[str, Any]]) -> Reply:
        response, _ = self._call(merge_system(messages), mode="")
        message = response.choices[0].message
        return Reply(text=message.content or "", finish_reason=response.choices[0].finish_reason or "")

    def structured(self, messages: list[dict[str, Any]], schema: JsonSchema) -> Reply:
        """A JSON answer by the server's structured-output method; ``payload`` or ``problem`` is set."""
        mode = self.client.structured_mode()
        while True:
            try:
                return self.structured_once(messages, schema, mode)
            except LLMError as exc:
                following = self.client.downgrade(mode) if exc.status in (400, 404, 422) else None
                if following is None:
                    raise
                logger.warning("the LLM server refused %s structured output (%s); using %s", mode, exc, following)
                mode = following

    def structured_once(self, messages: list[dict[str, Any]], schema: JsonSchema, mode: str) -> Reply:
        self.record.structured_output = mode
        sent = merge_system(messages)
        extra: dict[str, Any] = {}
        if mode == "json_schema":
            extra["response_format"] = schema.response_format()
        elif mode == "tools":
            extra["tools"] = [schema.tool()]
            extra["tool_choice"] = schema.tool_choice()
        else:
            last = sent[-1]
            sent[-1] = {**last, "content": f"{last.get('content') or ''}\n\n{schema.instructions()}"}
        # Text mode's instructions are already part of ``sent``; the other methods add theirs.
        overhead = 0 if mode == "text" else self.overhead(schema, mode)
        response, call = self._call(sent, mode=mode, overhead=overhead, **extra)
        choice = response.choices[0]
        message = choice.message
        finish = choice.finish_reason or ""
        # Some servers report a forced tool call as finished even when the token limit cut it.
        if call.usage_reported and call.completion_tokens >= self.max_output_tokens:
            finish = "length"
        reply = Reply(text=message.content or "", finish_reason=finish, mode=mode)
        calls = getattr(message, "tool_calls", None) or []
        if mode == "tools" and calls:
            call = calls[0]
            if call.function.name != schema.name:
                reply.problem = f"The answer called {call.function.name!r}; call {schema.name}."
                return reply
            reply.text = call.function.arguments or ""
        reply.payload, reply.problem = parse_json_object(reply.text)
        if reply.payload is None and reply.cut_off:
            reply.problem = (
                f"The answer was cut off at the {self.max_output_tokens}-token limit before the JSON was complete; "
                "answer with less (fewer items, shorter texts)."
            )
        return reply

    def _call(
        self, messages: list[dict[str, Any]], *, mode: str, overhead: int = 0, **extra: Any
    ) -> tuple[Any, CallRecord]:
        remaining = self.remaining_seconds()
        if remaining <= 0:
            self.record.outcome = "timeout"
            raise LLMError("timeout", f"The {self.name} stage used its {self.budget_seconds:g} s budget.")
        estimate = estimate_message_tokens(messages) + overhead
        if estimate > self.prompt_budget:
            self.record.outcome = "context_exceeded"
            raise LLMError(
                "context_exceeded",
                f"The {self.name} prompt needs about {estimate} tokens but only {self.prompt_budget} fit beside a "
                f"{self.max_output_tokens}-token answer in the {self.client.config.context_tokens}-token context "
                "(HINDSIGHT_LLM_CONTEXT_TOKENS).",
            )
        timeout = min(self.client.config.call_timeout, remaining)
        call = CallRecord(estimated_prompt_tokens=estimate, structured_output=mode)
        self.record.calls.append(call)
        if len(self.record.calls) == 1:
            self.client.prompts.append({"stage": self.name, "messages": messages})
        elif self.name != "probe":
            self.client.prompts.append({"stage": self.name, "call": len(self.record.calls), "messages": messages[-2:]})
        started = time.monotonic()
        try:
            response = self.client.openai.chat.completions.create(
                model=self.client.model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=self.max_output_tokens,
                temperature=0,
                timeout=timeout,
                **extra,
            )
        except openai.APITimeoutError as exc:
            self.record.outcome = "timeout"
            raise LLMError(
                "timeout", f"The model did not answer within {round(timeout, 1):g} s ({self.name} stage)."
            ) from exc
        except openai.APIConnectionError as exc:
            self.record.outcome = "server_down"
            raise LLMError(
                "server_down",
                f"The LLM server at {self.client.config.base_url or 'the default URL'} is unreachable ({exc}).",
            ) from exc
        except openai.APIStatusError as exc:
            detail = str(getattr(exc, "message", exc))[:300]
            reason = "context_exceeded" if "context" in detail.lower() and "token" in detail.lower() else "server_error"
            self.record.outcome = reason
            raise LLMError(
                reason, f"The LLM server answered HTTP {exc.status_code}: {detail}", status=exc.status_code
            ) from exc
        except openai.OpenAIError as exc:
            self.record.outcome = "server_error"
            raise LLMError("server_error", f"The LLM call failed: {exc}") from exc
        finally:
            call.seconds = time.monotonic() - started
        if not getattr(response, "choices", None):
            self.record.outcome = "server_error"
            raise LLMError("server_error", "The LLM server's response had no choices.")
        usage = getattr(response, "usage", None)
        choice = response.choices[0]
        call.finish_reason = choice.finish_reason or ""
        if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
            call.prompt_tokens = int(usage.prompt_tokens or 0)
            call.completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        else:
            call.usage_reported = False
            call.prompt_tokens = estimate
            answer = choice.message.content or "".join(
                c.function.arguments or "" for c in (getattr(choice.message, "tool_calls", None) or [])
            )
            call.completion_tokens = estimate_tokens(answer)
        self.record.outcome = "ok"
        return response, call
