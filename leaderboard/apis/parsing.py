"""The API's only request body parser: JSON, refused whole when it could not be stored as text.

Python's JSON decoder accepts what the database cannot hold: a ``\\u0000`` escape (PostgreSQL text
and jsonb refuse NUL) and a lone UTF-16 surrogate such as ``"\\ud800"`` (not encodable as UTF-8).
It also recurses once per nesting level. Each of these is a 400 naming where the problem sits,
raised before any view sees the body, so nothing is stored.
"""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.parsers import JSONParser

# Forecast bodies need about six levels (batch list, body, graph, events, event, value).
MAX_JSON_DEPTH = 32


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character (\\u0000), which text may not hold"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone UTF-16 surrogate (such as \\ud800), which is not valid Unicode text"
    return None


def _child(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def check_json_value(data: Any) -> None:
    """Raise a 400 for text that cannot be stored, or for nesting deeper than ``MAX_JSON_DEPTH``.

    Iterative, so that checking a deep document cannot itself exhaust the stack.
    """
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            problem = _text_problem(value)
            if problem:
                raise exceptions.ValidationError({path or "body": [problem]}, code="invalid_text")
        elif isinstance(value, dict | list):
            if depth >= MAX_JSON_DEPTH:
                raise exceptions.ParseError(
                    f"JSON parse error - {path or 'the body'} is nested more than {MAX_JSON_DEPTH} levels deep."
                )
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, child in items:
                if isinstance(key, str):
                    problem = _text_problem(key)
                    if problem:
                        raise exceptions.ValidationError(
                            {path or "body": [f"has a key that {problem}"]}, code="invalid_text"
                        )
                stack.append((child, _child(path, key), depth + 1))


class CheckedJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise exceptions.ParseError(
                f"JSON parse error - the body is nested more than {MAX_JSON_DEPTH} levels deep."
            ) from exc
        check_json_value(data)
        return data
