"""The project's one tokenizer and stop-word list (ingestion.text), and token F1."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grading.scoring.text import token_f1
from ingestion.text import STOPWORDS, normalise_text, tokenize


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("The Fed raises rates.", ["fed", "raises", "rates"]),
        ("U.S. sanctions on Iran", ["us", "sanctions", "iran"]),
        ("Biden's veto", ["bidens", "veto"]),
        ("Biden\u2019s veto", ["bidens", "veto"]),
        ("Israel-Hamas ceasefire", ["israel", "hamas", "ceasefire"]),
        ("GDP grew 3.5% in Q2", ["gdp", "grew", "3", "5", "q2"]),
        ("\uff26\uff45\uff44 \uff32\uff21\uff29\uff33\uff25\uff33", ["fed", "raises"]),  # NFKC full-width
        ("Straße", ["strasse"]),  # casefold
        ("Talks will not resume", ["talks", "not", "resume"]),  # negation kept
        ("Oil prices go up", ["oil", "prices", "go", "up"]),  # direction kept
        ("Oil prices go down again", ["oil", "prices", "go", "down", "again"]),
        ("Strike ends after talks, not before", ["strike", "ends", "after", "talks", "not", "before"]),
        ("Rates fall further below target", ["rates", "fall", "further", "below", "target"]),
        ("Minister said he also says so", ["minister"]),  # reporting verbs are stop words
        ("", []),
        ("!!! ...", []),
    ],
)
def test_tokenize(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_tokenize_keeping_stopwords() -> None:
    assert tokenize("The Fed and the ECB", drop_stopwords=False) == ["the", "fed", "and", "the", "ecb"]


def test_normalise_text() -> None:
    assert normalise_text("U.K.'s PM") == "uk s pm"


def test_token_f1() -> None:
    assert token_f1(["a", "b"], ["a", "c"]) == 0.5
    assert token_f1(["a", "a", "b"], ["a", "b", "b"]) == pytest.approx(2 / 3)  # multiset overlap 2
    assert token_f1([], ["a"]) == 0.0
    assert token_f1([], []) == 0.0
    assert token_f1(["x"], ["x"]) == 1.0


tokens = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=8)


@given(tokens, tokens)
def test_token_f1_symmetric_and_bounded(a: list[str], b: list[str]) -> None:
    assert 0.0 <= token_f1(a, b) <= 1.0
    assert token_f1(a, b) == token_f1(b, a)
    if a:
        assert token_f1(a, a) == 1.0


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_fast_path_matches_regex_tokenizer(text: str) -> None:
    assert tokenize(text, drop_stopwords=False) == re.findall(r"[^\W_]+", normalise_text(text))


@given(st.text())
def test_tokens_are_alphanumeric(text: str) -> None:
    for token in tokenize(text, drop_stopwords=False):
        assert token and all(ch.isalnum() for ch in token)


def test_direction_negation_and_sequence_words_are_not_stop_words() -> None:
    kept = "up down over under above below against off out more most few further no not nor after before again once until then"
    assert not set(kept.split()) & STOPWORDS
