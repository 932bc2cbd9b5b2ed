"""Whether a JSON value can be stored as it is: the one check the API's body parser, the MCP tools
and the news archive import make before anything reaches the database.

Python's JSON decoder accepts what no database column can hold: a ``\\u0000`` escape (PostgreSQL
text and jsonb refuse NUL) and a lone UTF-16 surrogate such as ``"\\ud800"`` (not encodable as
UTF-8). It also recurses once per nesting level, so nesting is bounded too. Pure: no database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Forecast bodies need about six levels (batch list, body, graph, events, event, value).
MAX_JSON_DEPTH = 32


def text_problem(text: str) -> str | None:
    """What in ``text`` no database can store, in words, or None."""
    if "\x00" in text:
        return "contains a NUL character (\\u0000), which text may not hold"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone UTF-16 surrogate (such as \\ud800), which is not valid Unicode text"
    return None


@dataclass(frozen=True)
class Unstorable:
    """The first place in a JSON value that cannot be stored: ``path`` (``a.b[2]``, "" for the value
    itself) and ``problem`` in words; ``in_key`` when an object key holds it, ``too_deep`` when the
    value is nested more than the limit there."""

    path: str
    problem: str
    in_key: bool = False
    too_deep: bool = False


def _child(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def unstorable_part(data: Any, *, max_depth: int = MAX_JSON_DEPTH) -> Unstorable | None:
    """The first string or key of ``data`` no database can store, or the first level nested deeper
    than ``max_depth``; None when all of it can be stored. Iterative, so that checking a deep value
    cannot itself exhaust the stack."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            problem = text_problem(value)
            if problem:
                return Unstorable(path=path, problem=problem)
        elif isinstance(value, dict | list):
            if depth >= max_depth:
                return Unstorable(path=path, problem=f"is nested more than {max_depth} levels deep", too_deep=True)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, child in items:
                if isinstance(key, str):
                    problem = text_problem(key)
                    if problem:
                        return Unstorable(path=path, problem=f"has a key that {problem}", in_key=True)
                stack.append((child, _child(path, key), depth + 1))
    return None
