"""Batch scoring gives exactly what one forecast at a time gives (ReferenceIndex.score_many, tokenize_many)."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from grading.scoring import reasoning
from grading.scoring.matching import Event, MatcherSettings
from grading.scoring.reasoning import ReferenceIndex
from ingestion.text import SEPARATOR, token_stream, tokenize, tokenize_many

WORDS = ["budget", "vote", "bank", "rates", "the", "of", "U.S.", "don't", "Straße", "café", "a.b.", "3.5", "x", "rates"]
D0 = dt.date(2026, 1, 1)

text = st.lists(st.sampled_from(WORDS), max_size=10).map(" ".join)
raw_text = st.text(alphabet=st.sampled_from(list("abZ .'`-U.S\x00\u2019é\uff26ß09\t,")), max_size=14)
day = st.one_of(st.none(), st.integers(0, 40).map(lambda d: D0 + dt.timedelta(days=d)))


@st.composite
def reference(draw: st.DrawFn) -> list[Event]:
    n = draw(st.integers(0, 8))
    return [
        Event(
            id=f"r{i}",
            title=draw(text),
            description=draw(text),
            date=draw(day),
            magnitude=draw(st.floats(0, 1)),
            confidence=draw(st.floats(0, 1)),
            has_impact=draw(st.booleans()),
            rejected=draw(st.booleans()),
        )
        for i in range(n)
    ]


@st.composite
def forecast(draw: st.DrawFn, ref: list[Event]) -> list[Event]:
    events = []
    for k in range(draw(st.integers(0, 6))):
        if ref and draw(st.booleans()):
            r = draw(st.sampled_from(ref))
            events.append(Event(id=f"f{k}", title=r.title, description=draw(st.sampled_from([r.description, ""])),
                                date=draw(day)))  # fmt: skip
        else:
            events.append(Event(id=f"f{k}", title=draw(text), description=draw(text), date=draw(day)))
    return events


@st.composite
def case(draw: st.DrawFn) -> tuple[list[Event], list[list[Event]], MatcherSettings]:
    ref = draw(reference())
    forecasts = draw(st.lists(forecast(ref), max_size=6))
    matcher = MatcherSettings(
        threshold=draw(st.sampled_from([0.0, 0.3, 0.45])),
        bm25_normalisation=draw(st.sampled_from(["self", "query_max"])),
        text_fields=draw(st.sampled_from(["title+description", "title"])),
    )
    return ref, forecasts, matcher


@settings(max_examples=150, deadline=None)
@given(case(), st.sampled_from([1, 40, 1_000_000]))
def test_score_many_equals_one_at_a_time(
    data: tuple[list[Event], list[list[Event]], MatcherSettings], cells: int
) -> None:
    ref, forecasts, matcher = data
    index = ReferenceIndex(ref, matcher)
    original = reasoning._CHUNK_CELLS
    reasoning._CHUNK_CELLS = cells  # also exercise chunking
    try:
        batch = index.score_many(forecasts)
    finally:
        reasoning._CHUNK_CELLS = original
    assert batch == [index.score(events) for events in forecasts]
    for events, result in zip(forecasts, batch, strict=True):
        score, _, _ = index.similarity(events)
        for m in result.matches:
            row = [e.id for e in events].index(m.forecast_id)
            col = [e.id for e in index.events].index(m.reference_id)
            assert m.score == score[row, col]


@settings(max_examples=300, deadline=None)
@given(st.lists(raw_text, max_size=8), st.booleans())
def test_tokenize_many_equals_tokenize(texts: list[str], drop: bool) -> None:
    assert tokenize_many(texts, drop_stopwords=drop) == [tokenize(t, drop_stopwords=drop) for t in texts]
    assert token_stream(texts).count(SEPARATOR) == len(texts)


def test_acronyms_do_not_cross_text_boundaries() -> None:
    texts = ["Talks in the U.", "S. capital", "U.S.", "a.", "b. c."]
    assert tokenize_many(texts) == [tokenize(t) for t in texts]
