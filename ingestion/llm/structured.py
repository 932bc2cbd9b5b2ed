"""Structured answers: the JSON schema a stage asks for, how it is asked, and reading the answer.

Three ways to ask a server for JSON that follows a schema, best first:

- ``json_schema``: ``response_format={"type": "json_schema", ...}`` (OpenAI, vLLM, llama.cpp's
  server; llama.cpp and vLLM enforce it with a grammar while decoding);
- ``tools``: one forced function call whose parameters are the schema (OpenAI-style tool calling;
  llama-cpp-python enforces the schema with a grammar here);
- ``text``: the schema is written into the prompt and the JSON is read from the plain answer.

Which one a server supports is detected once per server and model (see ``LLMClient``) and kept
in the cache, or fixed by ``HINDSIGHT_LLM_STRUCTURED_OUTPUT``. Whatever the method, every answer
is parsed here and then validated by the stage, whose problems go back to the model as a correction.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache

logger = logging.getLogger(__name__)

DETECTION_CACHE_SECONDS = 24 * 3600
_detected: dict[str, str] = {}


@dataclass(frozen=True)
class JsonSchema:
    name: str
    description: str
    schema: dict[str, Any]

    def response_format(self) -> dict[str, Any]:
        return {"type": "json_schema", "json_schema": {"name": self.name, "schema": self.schema, "strict": True}}

    def tool(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.schema},
        }

    def tool_choice(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name}}

    def instructions(self) -> str:
        """What text mode appends to the prompt: the schema itself, compactly."""
        return (
            "Answer with one JSON object only (no prose, no Markdown), valid against this JSON schema:\n"
            + json.dumps(self.schema, separators=(",", ":"))
        )


def _cache_key(base_url: str, model: str) -> str:
    digest = hashlib.sha256(f"{base_url}|{model}".encode()).hexdigest()[:24]
    return f"hindsight:llm-structured:{digest}"


def remembered_mode(base_url: str, model: str) -> str | None:
    key = _cache_key(base_url, model)
    if key in _detected:
        return _detected[key]
    try:
        value = cache.get(key)
    except Exception:  # a cache outage only costs a new detection
        logger.warning("the cache is unavailable; detecting the LLM's structured output again")
        return None
    if isinstance(value, str):
        _detected[key] = value
        return value
    return None


def remember_mode(base_url: str, model: str, mode: str) -> None:
    key = _cache_key(base_url, model)
    _detected[key] = mode
    try:
        cache.set(key, mode, DETECTION_CACHE_SECONDS)
    except Exception:
        logger.warning("the cache is unavailable; the detected structured output is kept in this process only")


def forget_mode(base_url: str, model: str) -> None:
    key = _cache_key(base_url, model)
    _detected.pop(key, None)
    try:
        cache.delete(key)
    except Exception:
        logger.warning("the cache is unavailable; could not forget the detected structured output")
