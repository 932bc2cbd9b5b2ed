"""Reading the JSON object out of a model's answer (pure; no Django)."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_json_object(text: str | None) -> tuple[dict[str, Any] | None, str]:
    """The JSON object in a model's answer, or (None, why not).

    Tolerates what models wrap around JSON in plain-text answers: a Markdown code fence, or prose
    before and after the outermost braces.
    """
    if not text or not text.strip():
        return None, "The answer is empty."
    body = text.strip()
    fence = _FENCE.search(body)
    if fence:
        body = fence.group(1).strip()
    try:
        value = json.loads(body)
    except ValueError as exc:
        start, end = body.find("{"), body.rfind("}")
        value = None
        if start != -1 and end > start:
            try:
                value = json.loads(body[start : end + 1])
            except ValueError:
                value = None
        if value is None:
            return None, f"The answer is not valid JSON ({exc})."
    if not isinstance(value, dict):
        return None, f"The answer must be a JSON object, not {type(value).__name__}."
    return value, ""
