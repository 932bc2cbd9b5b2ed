"""Token counts for prompt budgets (pure; no Django).

A model's own tokenizer is not available to the platform (the model sits behind an HTTP API and
tokenizers differ by model), so prompts are measured with a conservative estimate that must never
count fewer tokens than the real tokenizers do: every digit and every punctuation mark counts as a
token (Gemma and Llama split numbers into single digits), a run of letters counts one token per
four bytes of UTF-8 (a common English word is one real token, a rare name or a non-Latin word a
few), and a run of whitespace counts as one unless it is a single space before a word (which the
tokenizers fold into the word). On real news and market text this overcounts Gemma 3's tokenizer
by 0-150% (median about 45%), which costs some evidence per prompt but never sends a prompt over
the window.
``tests/ingestion/test_llm_token_estimate.py`` checks the estimate against counts recorded from a
real tokenizer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

_PIECE = re.compile(r"[^\W\d_]+|\d|\s+|.", re.DOTALL)
# Chat templates wrap each message in role markers and separators.
MESSAGE_OVERHEAD = 8
CONVERSATION_OVERHEAD = 8


def estimate_tokens(text: str) -> int:
    """An upper estimate of the tokens ``text`` takes in a BPE/SentencePiece tokenizer."""
    count = 0
    for match in _PIECE.finditer(text):
        piece = match.group()
        first = piece[0]
        if first.isspace():
            following = text[match.end() : match.end() + 1]
            count += 0 if piece == " " and following.isalpha() else 1
        elif first.isdigit() or len(piece) == 1:
            count += 1
        else:
            count += -(-len(piece.encode("utf-8")) // 4)
    return count


def estimate_message_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """Estimated prompt tokens of a chat conversation (contents plus the template's markers)."""
    total = CONVERSATION_OVERHEAD
    for message in messages:
        total += MESSAGE_OVERHEAD + estimate_tokens(str(message.get("content") or ""))
        for call in message.get("tool_calls") or ():
            function = call.get("function", {})
            total += MESSAGE_OVERHEAD + estimate_tokens(f"{function.get('name', '')} {function.get('arguments', '')}")
    return total


def longest_prefix(items: Sequence[T], *, budget: int, cost: Callable[[T], int]) -> list[T]:
    """The longest prefix of ``items`` (ranked best first) whose summed cost fits ``budget``."""
    kept: list[T] = []
    spent = 0
    for item in items:
        spent += cost(item)
        if spent > budget:
            break
        kept.append(item)
    return kept


def truncate_to_tokens(text: str, budget: int) -> str:
    """``text`` cut at a word boundary so that its estimate fits ``budget`` (empty when it cannot)."""
    if estimate_tokens(text) <= budget:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest prefix whose estimate fits
        middle = (low + high + 1) // 2
        if estimate_tokens(text[:middle]) + 1 <= budget:
            low = middle
        else:
            high = middle - 1
    cut = text[:low]
    space = cut.rfind(" ")
    if space > low // 2:
        cut = cut[:space]
    return (cut.rstrip() + "…") if cut.strip() else ""


def fit_ranked(
    items: Sequence[T], *, room: int, render: Callable[[T, int], str], detail_steps: Sequence[int], want: int
) -> tuple[list[T], list[str]]:
    """The best-ranked items whose lines fit ``room`` tokens, with their lines.

    ``render(item, detail)`` writes one item's line at a level of detail (e.g. summary characters);
    detail is lowered step by step before items are dropped, until at least ``want`` items (or all)
    fit; otherwise the step that fits the most items wins.
    """
    best: tuple[list[T], list[str]] = ([], [])
    for detail in detail_steps:
        lines = [(item, render(item, detail)) for item in items]
        kept = longest_prefix(lines, budget=room, cost=lambda pair: estimate_tokens(pair[1]) + 1)
        if len(kept) > len(best[0]):
            best = ([item for item, _ in kept], [line for _, line in kept])
        if len(kept) == len(items) or len(kept) >= want:
            break
    return best
