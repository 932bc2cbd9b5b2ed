"""The worldreasoner matcher on cases whose values are computed by hand from the public evaluator's
definitions (token sets of words longer than two letters, BM25 over sets with k1 = 1.5, b = 0.75 and
IDF ln(1 + (N - n + 0.5) / (n + 0.5)), scaling by the best hindsight event for the forecast event,
0.6 x BM25-RS + 0.4 x set F1 >= 0.45, five candidates per hindsight event, key events with
magnitude x confidence >= 0.2)."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from grading.scoring.matchers import build_reference_index, score_events
from grading.scoring.matching import Event
from grading.scoring.reasoning import ReferenceIndex
from grading.scoring.worldreasoner import (
    WORLDREASONER_MATCHER_VERSION,
    WorldReasonerIndex,
    bm25_scores,
    event_tokens,
    set_token_f1,
    worldreasoner_matcher_settings,
)

D = dt.date(2025, 3, 1)
WR = worldreasoner_matcher_settings()


def days(n: int) -> dt.date:
    return D + dt.timedelta(days=n)


def ref(
    id_: str, title: str, day: dt.date | None = D, *, m: float = 0.0, c: float = 1.0, outcome: bool = False
) -> Event:
    return Event(id=id_, title=title, date=day, magnitude=m, confidence=c, has_impact=m > 0, is_outcome=outcome)


def fc(id_: str, title: str, day: dt.date | None = D) -> Event:
    return Event(id=id_, title=title, date=day)


# Three hindsight events of 6, 2 and 2 distinct tokens: avgdl = 10/3, and a term found in one of
# them has idf = ln(1 + 2.5 / 1.5).
RESIGNS = ref("h0", "Prime minister resigns amid mass protests", m=0.9, c=0.9)
DISSOLVED = ref("h1", "Parliament dissolved", days(3), m=0.5, c=0.8)
ELECTION = ref("out", "Election called", days(5), m=1.0, outcome=True)
IDF1 = math.log(1 + 2.5 / 1.5)
NORM6 = 1.5 * (1 - 0.75 + 0.75 * 6 / (10 / 3))  # = 2.4
NORM2 = 1.5 * (1 - 0.75 + 0.75 * 2 / (10 / 3))  # = 1.05


def test_settings_are_named_and_versioned() -> None:
    assert WR.matcher == "worldreasoner" and WR.version == WORLDREASONER_MATCHER_VERSION
    assert (WR.threshold, WR.date_window_days, WR.top_k, WR.candidates_per_event, WR.key_event_min_score) == (
        0.45,
        7,
        5,
        5,
        0.2,
    )
    assert isinstance(build_reference_index([RESIGNS], WR), WorldReasonerIndex)


def test_tokens_are_a_set_of_words_longer_than_two_letters() -> None:
    assert event_tokens("The PM and the U.S. envoy sign a 10-year deal, with this: deal!") == {
        "envoy",
        "sign",
        "year",
        "deal",
    }


def test_bm25_over_sets_by_hand() -> None:
    docs = [event_tokens(e.title + ". ") for e in (RESIGNS, DISSOLVED, ELECTION)]
    scores = bm25_scores(event_tokens("Prime minister resigns"), docs)
    assert scores[0] == pytest.approx(3 * IDF1 * 2.5 / (1 + NORM6))
    assert scores[1:] == [0.0, 0.0]


def test_best_candidate_is_scaled_to_one_so_a_single_shared_word_matches() -> None:
    forecast = [fc("f", "Minister visits flooded town", days(1))]
    result = score_events([RESIGNS, DISSOLVED, ELECTION], forecast, WR)
    # BM25-RS = 1 (h0 is the only hindsight event sharing a word); set F1: 1 shared of 4 and 6 tokens.
    f1 = 2 * (1 / 4) * (1 / 6) / (1 / 4 + 1 / 6)
    (match,) = result.matches
    assert match.reference_id == "h0" and match.bm25_rs == 1.0
    assert match.score == pytest.approx(0.6 + 0.4 * f1)  # 0.68 >= 0.45
    # Key events h0 (0.81) and h1 (0.40); the outcome is never one. KER 1/2.
    assert result.key_event_ids == ("h0", "h1") and result.ker == 0.5
    # The default matcher scales by the perfect match and does not take one shared word.
    assert ReferenceIndex([RESIGNS, DISSOLVED, ELECTION]).score(forecast).matches == ()


def test_outcome_node_is_in_the_bm25_corpus_but_never_matched() -> None:
    forecast = [fc("f", "Election called after prime minister resigns", days(1))]
    result = score_events([RESIGNS, DISSOLVED, ELECTION], forecast, WR)
    # BM25 to the outcome node (2 shared terms of 2) beats BM25 to h0 (3 of 6) and sets the scale.
    to_h0 = 3 * IDF1 * 2.5 / (1 + NORM6)
    to_outcome = 2 * IDF1 * 2.5 / (1 + NORM2)
    assert to_outcome > to_h0
    # Set F1 with h0: 3 shared of 6 and 6 tokens ("after" counts: five letters, not one of the six stop words).
    expected = 0.6 * to_h0 / to_outcome + 0.4 * 0.5
    (match,) = result.matches
    assert match.reference_id == "h0" and match.score == pytest.approx(expected)
    assert expected == pytest.approx(0.742647, abs=1e-6)
    # Recall over the two non-outcome events.
    assert result.event_recall == 0.5 and result.event_precision == 1.0
    assert result.event_f1 == pytest.approx(2 * 0.5 / 1.5)


def test_undated_events_pass_the_date_gate() -> None:
    forecast = [fc("f", "Prime minister resigns amid mass protests", None)]
    result = score_events([RESIGNS, DISSOLVED, ELECTION], forecast, WR)
    assert [m.reference_id for m in result.matches] == ["h0"] and result.matches[0].day_diff is None
    assert result.temporal_mae_days is None
    late = score_events([RESIGNS], [fc("f", "Prime minister resigns amid mass protests", days(8))], WR)
    assert late.matches == ()  # both dated, 8 days apart


def test_only_the_five_best_candidates_are_compared() -> None:
    # Five forecast events repeat h0's text a month late (outside the date gate); the sixth shares two
    # of its three words on the right day but ranks sixth by BM25 from h0, so it is never compared.
    reference = [ref("h0", "alpha beta gamma", m=0.5)]
    forecast = [fc(f"late{i}", "alpha beta gamma", days(30)) for i in range(5)] + [fc("near", "alpha beta", D)]
    assert score_events(reference, forecast, WR).matches == ()
    assert score_events(reference, forecast[5:], WR).matches[0].forecast_id == "near"


def test_ties_go_to_the_later_hindsight_event() -> None:
    reference = [ref("first", "storm hits coast", m=0.5), ref("second", "storm hits coast", m=0.5)]
    result = score_events(reference, [fc("f", "storm hits coast")], WR)
    assert [m.reference_id for m in result.matches] == ["second"]
    assert set_token_f1(event_tokens("storm hits coast"), event_tokens("storm hits coast")) == 1.0


def test_key_events_need_an_impact_score_of_at_least_0_2_and_ties_go_to_the_later_event() -> None:
    reference = [
        ref("a", "alpha news", m=0.5, c=0.5),  # 0.25
        ref("b", "beta news", m=0.5, c=0.5),  # 0.25
        ref("c", "gamma news", m=0.4, c=0.4),  # 0.16 < 0.2
        ref("out", "delta news", m=1.0, outcome=True),
    ]
    index = WorldReasonerIndex(reference, worldreasoner_matcher_settings(top_k=1))
    assert [e.id for e in index.key_events] == ["b"]
    assert [e.id for e in WorldReasonerIndex(reference, WR).key_events] == ["b", "a"]


def test_f1_is_none_when_nothing_matches_and_ker_none_without_forecast_events() -> None:
    result = score_events([RESIGNS, DISSOLVED], [fc("f", "Volcano erupts")], WR)
    assert (result.event_precision, result.event_recall, result.event_f1, result.ker) == (0.0, 0.0, None, 0.0)
    empty = score_events([RESIGNS, DISSOLVED], [], WR)
    assert empty.ker is None and empty.event_precision is None and empty.event_f1 is None
