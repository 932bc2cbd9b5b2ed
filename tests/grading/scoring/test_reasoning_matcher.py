"""Hybrid BM25 + token-F1 matcher, date gate, greedy assignment, KER and event metrics."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

from grading.scoring.matching import Event, MatcherSettings, hybrid_score, is_match
from grading.scoring.reasoning import ReferenceIndex, score_reasoning
from ingestion.text import tokenize

D = dt.date(2026, 2, 1)


def days(n: int) -> dt.date:
    return D + dt.timedelta(days=n)


def ref(id_: str, title: str, date: dt.date | None = D, *, impact: float = 0.0, description: str = "") -> Event:
    return Event(
        id=id_,
        title=title,
        description=description,
        date=date,
        magnitude=impact,
        confidence=1.0,
        has_impact=impact > 0,
    )


def fc(id_: str, title: str, date: dt.date | None = D, description: str = "") -> Event:
    return Event(id=id_, title=title, description=description, date=date)


REFERENCE = [
    ref("h1", "Central bank raises interest rates", days(0), impact=0.9),
    ref("h2", "Parliament passes budget bill", days(10), impact=0.8),
    ref("h3", "Unemployment falls to record low", days(20), impact=0.7),
    ref("h4", "Currency weakens against dollar", days(30), impact=0.0),
]


# ---------------------------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------------------------


def test_hybrid_score_and_is_match() -> None:
    assert hybrid_score(1.0, 0.0) == pytest.approx(0.6)
    assert hybrid_score(0.5, 0.5) == pytest.approx(0.5)
    assert is_match(0.45, 7) is True  # exactly at the threshold and the window
    assert is_match(0.45, -7) is True
    assert is_match(0.45 - 1e-6, 0) is False
    assert is_match(0.9, 8) is False
    assert is_match(0.9, None) is False


def test_exact_threshold_matches_through_the_index() -> None:
    # Token F1 only: F1("alpha beta", "alpha gamma") = 0.5 exactly.
    only_f1 = MatcherSettings(bm25_weight=0.0, token_f1_weight=1.0, threshold=0.5)
    index = ReferenceIndex([ref("h", "alpha gamma", impact=1.0)], only_f1)
    assert index.score([fc("f", "alpha beta")]).ker == 1.0
    stricter = MatcherSettings(bm25_weight=0.0, token_f1_weight=1.0, threshold=0.5000001)
    assert ReferenceIndex([ref("h", "alpha gamma", impact=1.0)], stricter).score([fc("f", "alpha beta")]).ker == 0.0


@pytest.mark.parametrize(("offset", "matched"), [(0, True), (7, True), (-7, True), (8, False), (-8, False)])
def test_date_window_seven_days_inclusive(offset: int, matched: bool) -> None:
    index = ReferenceIndex(REFERENCE)
    result = index.score([fc("f", "Central bank raises interest rates", days(offset))])
    assert (result.ker == pytest.approx(1 / 3)) is matched
    assert bool(result.matches) is matched
    if matched:
        assert result.matches[0].day_diff == offset
        assert result.temporal_mae_days == abs(offset)


def test_undated_events_never_match() -> None:
    index = ReferenceIndex([*REFERENCE, ref("h5", "Undated shock", None, impact=0.1)])
    assert index.score([fc("f", "Central bank raises interest rates", None)]).matches == ()
    assert index.score([fc("f", "Undated shock", D)]).matches == ()


def test_score_components_hand_computed() -> None:
    index = ReferenceIndex(REFERENCE)
    result = index.score([fc("f", "Central bank raises rates", days(1))])
    (m,) = result.matches
    assert m.reference_id == "h1"
    assert 0.5 < m.bm25_rs <= 1.0  # most of h1's weighted terms are in the forecast event
    # tokens: [central, bank, raises, rates] vs [central, bank, raises, interest, rates]: 2*4/(4+5)
    assert m.token_f1 == pytest.approx(8 / 9)
    assert m.score == pytest.approx(0.6 * m.bm25_rs + 0.4 * 8 / 9)


def test_bm25_rs_is_the_share_of_a_perfect_match_by_default() -> None:
    reference = [
        ref("a", "storm hits coast", days(0)),
        ref("b", "storm hits coast again and floods city", days(0)),
        ref("c", "election result announced", days(0)),
    ]
    index = ReferenceIndex(reference)
    _, rs, _ = index.similarity([fc("f", "storm hits coast")])
    assert rs[0, 0] == pytest.approx(1.0)  # identical text
    assert 0 < rs[0, 1] < 1 and rs[0, 2] == 0.0
    # One shared word of a longer event is far from a perfect match, so it does not reach the threshold.
    _, rs_one_word, _ = index.similarity([fc("g", "storm")])
    assert rs_one_word[0, 1] < 0.5


def test_bm25_rs_can_be_normalised_by_the_query_maximum() -> None:
    reference = [
        ref("a", "storm hits coast", days(0)),
        ref("b", "storm hits coast again and floods city", days(0)),
        ref("c", "election result announced", days(0)),
    ]
    index = ReferenceIndex(reference, MatcherSettings(bm25_normalisation="query_max"))
    score, rs, tok = index.similarity([fc("f", "storm hits coast")])
    raw = index.bm25_scores("storm hits coast")
    assert rs[0] == pytest.approx(raw / raw.max())
    assert rs[0, 0] == 1.0 and 0 < rs[0, 1] < 1 and rs[0, 2] == 0.0
    assert score[0] == pytest.approx(0.6 * rs[0] + 0.4 * tok[0])


def test_bm25_matches_rank_bm25_okapi_with_non_negative_idf() -> None:
    reference = [
        ref(f"h{i}", title, days(i), description=desc)
        for i, (title, desc) in enumerate(
            [
                ("Fed raises rates", "The Federal Reserve raised rates by 25 basis points"),
                ("Inflation cools", "Consumer prices rose less than expected in May"),
                ("Fed signals pause", "Officials hinted rates would hold; markets rallied"),
                ("Jobs report strong", "Payrolls rose by 300,000, beating forecasts"),
            ]
        )
    ]
    index = ReferenceIndex(reference)
    corpus = [tokenize(f"{e.title} {e.description}") for e in reference]
    okapi = BM25Okapi(corpus)
    n = len(corpus)
    okapi.idf = {t: math.log1p((n - f + 0.5) / (f + 0.5)) for t, f in _doc_freqs(corpus).items()}
    for query in ["Fed raises rates again", "prices rose rates rose", "nothing shared here"]:
        expected = okapi.get_scores(tokenize(query))
        assert index.bm25_scores(query) == pytest.approx(np.asarray(expected))


def _doc_freqs(corpus: list[list[str]]) -> dict[str, int]:
    freqs: dict[str, int] = {}
    for doc in corpus:
        for token in set(doc):
            freqs[token] = freqs.get(token, 0) + 1
    return freqs


def test_single_event_reference_still_matches_identical_text() -> None:
    # rank_bm25's Okapi IDF would be negative here; the non-negative IDF keeps BM25 > 0.
    index = ReferenceIndex([ref("only", "Ceasefire agreed in Gaza", D, impact=0.5)])
    assert index.score([fc("f", "Ceasefire agreed in Gaza", D)]).ker == 1.0


def test_greedy_one_to_one_assignment() -> None:
    index = ReferenceIndex(REFERENCE)
    forecast = [
        fc("weak", "Central bank moves", days(0)),
        fc("strong", "Central bank raises interest rates", days(1)),
    ]
    result = index.score(forecast)
    # Both forecast events best-match h1; the higher-scoring one takes it, the other stays unmatched.
    assert [(m.forecast_id, m.reference_id) for m in result.matches] == [("strong", "h1")]
    assert result.event_precision == 0.5


def test_each_reference_event_matched_at_most_once() -> None:
    index = ReferenceIndex(REFERENCE)
    copies = [fc(f"f{i}", "Central bank raises interest rates", days(0)) for i in range(3)]
    result = index.score(copies)
    assert len(result.matches) == 1
    assert result.matches[0].forecast_id == "f0"  # exact ties go to the earlier forecast event


def test_metrics_hand_computed() -> None:
    index = ReferenceIndex(REFERENCE)
    forecast = [
        fc("f1", "Central bank raises interest rates", days(2)),
        fc("f2", "Parliament passes budget bill", days(7)),
        fc("f3", "Currency weakens against dollar", days(30)),
        fc("f4", "Volcano erupts", days(0)),
    ]
    result = index.score(forecast)
    assert {(m.forecast_id, m.reference_id) for m in result.matches} == {("f1", "h1"), ("f2", "h2"), ("f3", "h4")}
    assert result.key_event_ids == ("h1", "h2", "h3")
    assert result.matched_key_event_ids == ("h1", "h2")
    assert result.ker == pytest.approx(2 / 3)
    assert result.event_precision == pytest.approx(3 / 4)
    assert result.event_recall == pytest.approx(3 / 4)
    assert result.event_f1 == pytest.approx(3 / 4)
    assert result.temporal_mae_days == pytest.approx((2 + 3 + 0) / 3)
    assert result.n_forecast_events == 4 and result.n_reference_events == 4
    assert result.settings.as_dict()["threshold"] == 0.45


def test_empty_forecast_graph_and_empty_reference() -> None:
    # No graph, no reasoning score: null, not 0.
    result = ReferenceIndex(REFERENCE).score([])
    assert result.ker is None
    assert (result.event_precision, result.event_recall, result.event_f1) == (None, None, None)
    assert result.temporal_mae_days is None and result.matches == ()
    empty_ref = ReferenceIndex([]).score([fc("f", "anything")])
    assert empty_ref.ker is None and empty_ref.event_recall is None and empty_ref.event_precision == 0.0
    no_keys = ReferenceIndex([ref("h", "no impact", D)]).score([fc("f", "no impact")])
    assert no_keys.ker is None and no_keys.event_recall == 1.0


def test_forecast_without_shared_terms() -> None:
    result = ReferenceIndex(REFERENCE).score([fc("f", "Volcano erupts", D), fc("g", "", D)])
    assert result.matches == ()
    assert result.ker == 0.0


def test_title_only_setting() -> None:
    reference = [ref("h", "Strike ends", D, impact=1.0, description="Workers return after a long dispute")]
    forecast = [fc("f", "Unrelated headline", D, description="Workers return after a long dispute")]
    assert ReferenceIndex(reference).score(forecast).ker == 1.0
    assert ReferenceIndex(reference, MatcherSettings(text_fields="title")).score(forecast).ker == 0.0


def test_score_reasoning_wrapper_equals_index() -> None:
    forecast = [fc("f1", "Central bank raises interest rates", days(2))]
    assert score_reasoning(REFERENCE, forecast) == ReferenceIndex(REFERENCE).score(forecast)
    index = ReferenceIndex(REFERENCE)
    assert score_reasoning(index, forecast) == index.score(forecast)


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

WORDS = [f"w{i}" for i in range(60)]


@st.composite
def reference_graphs(draw: st.DrawFn) -> list[Event]:
    n = draw(st.integers(min_value=1, max_value=12))
    vocab = draw(st.permutations(WORDS))
    events = []
    for i in range(n):
        words = vocab[i * 4 : i * 4 + draw(st.integers(min_value=1, max_value=4))]  # disjoint vocabularies
        events.append(
            Event(
                id=f"h{i}",
                title=" ".join(words),
                date=D + dt.timedelta(days=draw(st.integers(min_value=0, max_value=40))),
                magnitude=draw(st.floats(min_value=0, max_value=1)),
                confidence=draw(st.floats(min_value=0, max_value=1)),
                has_impact=draw(st.booleans()),
                rejected=draw(st.booleans()) and i > 0,
            )
        )
    return events


@st.composite
def forecast_graphs(draw: st.DrawFn) -> list[Event]:
    n = draw(st.integers(min_value=0, max_value=10))
    return [
        Event(
            id=f"f{i}",
            title=" ".join(draw(st.lists(st.sampled_from(WORDS), max_size=5))),
            date=draw(st.one_of(st.none(), st.integers(min_value=-10, max_value=50).map(days))),
        )
        for i in range(n)
    ]


@settings(max_examples=150)
@given(reference_graphs(), forecast_graphs())
def test_metrics_bounded(reference: list[Event], forecast: list[Event]) -> None:
    result = ReferenceIndex(reference).score(forecast)
    if not forecast:
        assert (result.ker, result.event_precision, result.event_recall, result.event_f1) == (None,) * 4
        return
    assert result.ker is None or 0.0 <= result.ker <= 1.0
    assert result.event_precision is not None and 0.0 <= result.event_precision <= 1.0
    assert result.event_recall is None or 0.0 <= result.event_recall <= 1.0
    assert result.event_f1 is not None and 0.0 <= result.event_f1 <= 1.0
    assert len({m.forecast_id for m in result.matches}) == len(result.matches)
    assert len({m.reference_id for m in result.matches}) == len(result.matches)
    for m in result.matches:
        assert m.score >= 0.45 - 1e-9 and m.day_diff is not None and abs(m.day_diff) <= 7
        assert 0.0 <= m.bm25_rs <= 1.0 + 1e-12 and 0.0 <= m.token_f1 <= 1.0 + 1e-12
    if result.temporal_mae_days is not None:
        assert 0.0 <= result.temporal_mae_days <= 7.0


@settings(max_examples=150)
@given(reference_graphs(), forecast_graphs())
def test_perfect_forecast_scores_best(reference: list[Event], forecast: list[Event]) -> None:
    index = ReferenceIndex(reference)
    perfect = index.score([Event(id=f"p{e.id}", title=e.title, date=e.date) for e in index.events])
    other = index.score(forecast)
    if perfect.ker is not None:
        assert perfect.ker == 1.0
        assert other.ker is None if not forecast else (other.ker is not None and other.ker <= perfect.ker)
    assert perfect.event_precision == 1.0 and perfect.event_recall == 1.0 and perfect.event_f1 == 1.0
    assert perfect.temporal_mae_days == 0.0
    assert other.event_f1 is None if not forecast else other.event_f1 <= perfect.event_f1
