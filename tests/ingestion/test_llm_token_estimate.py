"""The prompt-budget token estimate never counts fewer tokens than a real tokenizer (pure)."""

from __future__ import annotations

import json
from pathlib import Path

from ingestion.llm.tokens import (
    estimate_message_tokens,
    estimate_tokens,
    fit_ranked,
    longest_prefix,
    truncate_to_tokens,
)

RECORDED = json.loads((Path(__file__).parent / "fixtures" / "llm" / "gemma3_token_counts.json").read_text())


def test_never_below_the_real_tokenizer_on_recorded_text() -> None:
    cases = RECORDED["cases"]
    assert len(cases) >= 50 and {c["source"] for c in cases} >= {"forecastbench-2026-05-10", "edge-case"}
    under = [
        (c["tokens"], estimate_tokens(c["text"]), c["text"][:60])
        for c in cases
        if estimate_tokens(c["text"]) < c["tokens"]
    ]
    assert under == []


def test_overcount_stays_moderate() -> None:
    real = sum(c["tokens"] for c in RECORDED["cases"])
    estimated = sum(estimate_tokens(c["text"]) for c in RECORDED["cases"])
    # Conservative, but not so much that prompts lose most of their evidence.
    assert real <= estimated <= 2 * real


def test_digits_punctuation_and_spaces() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("2026-03-14") == 10  # every digit and the dashes
    assert estimate_tokens("the vote") == 2  # a space before a word is part of the word
    assert estimate_tokens("a\n\nb") == 3
    assert estimate_tokens("东京") == 2  # one per three-byte character
    messages = [{"role": "user", "content": "the vote"}]
    assert estimate_message_tokens(messages) > estimate_tokens("the vote")


def test_longest_prefix_and_truncation() -> None:
    assert longest_prefix([3, 3, 3], budget=7, cost=lambda x: x) == [3, 3]
    assert longest_prefix([9, 1], budget=7, cost=lambda x: x) == []
    text = "The parliament passed the water bill after six weeks of debate."
    cut = truncate_to_tokens(text, 6)
    assert estimate_tokens(cut) <= 6 and cut.endswith("…") and text.startswith(cut[:-1])
    assert truncate_to_tokens(text, 1000) == text
    assert truncate_to_tokens(text, 1) == ""


def test_fit_ranked_shortens_detail_before_dropping_items() -> None:
    items = list(range(10))

    def render(item: int, detail: int) -> str:
        return f"item {item} " + "word " * detail

    full = sum(estimate_tokens(render(i, 20)) + 1 for i in items)
    kept, lines = fit_ranked(items, room=full, render=render, detail_steps=(20, 5, 0), want=10)
    assert kept == items and all(line.count("word") == 20 for line in lines)
    kept, lines = fit_ranked(items, room=full // 2, render=render, detail_steps=(20, 5, 0), want=10)
    assert kept == items and all(line.count("word") == 5 for line in lines)
    # Not even the shortest lines fit all: the best-ranked ones that do are kept.
    kept, _ = fit_ranked(items, room=12, render=render, detail_steps=(20, 5, 0), want=10)
    assert kept == items[: len(kept)] and 0 < len(kept) < 10
