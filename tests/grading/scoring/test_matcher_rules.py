"""Rules of the default (hybrid) matcher that changed in version 2.0: direction words count, the outcome
node is not a forecastable key event, no graph gives no score."""

from __future__ import annotations

import datetime as dt

import pytest

from grading.scoring.matching import MATCHER_VERSION, Event
from grading.scoring.reasoning import ReferenceIndex

D = dt.date(2026, 2, 1)


def ref(id_: str, title: str, *, impact: float = 0.0, outcome: bool = False) -> Event:
    return Event(
        id=id_, title=title, date=D, magnitude=impact, confidence=1.0, has_impact=impact > 0, is_outcome=outcome
    )


def fc(id_: str, title: str) -> Event:
    return Event(id=id_, title=title, date=D)


def test_version_names_the_rules() -> None:
    assert MATCHER_VERSION == "hybrid-bm25rs-tokf1/2.0"


def test_up_and_down_are_different_events() -> None:
    index = ReferenceIndex([ref("down", "Oil prices go down", impact=0.9), ref("up", "Oil prices go up", impact=0.8)])
    score, _, tok = index.similarity([fc("f", "Oil prices go up")])
    # Same words but the direction: three of four tokens shared, so no longer a perfect match ...
    assert tok[0, 0] == pytest.approx(2 * 3 / 8)
    assert score[0, 0] < score[0, 1] == pytest.approx(1.0)
    # ... and the forecast matches the event it names.
    result = index.score([fc("f", "Oil prices go up")])
    assert [(m.forecast_id, m.reference_id) for m in result.matches] == [("f", "up")]


@pytest.mark.parametrize(
    ("forecast", "other"),
    [
        ("Strike ends after talks", "Strike ends before talks"),
        ("Court does not block the merger", "Court does block the merger"),
        ("Rates rise again", "Rates rise"),
    ],
)
def test_negation_and_sequence_words_change_the_text(forecast: str, other: str) -> None:
    index = ReferenceIndex([ref("h", other, impact=0.5)])
    _, _, tok = index.similarity([fc("f", forecast)])
    assert tok[0, 0] < 1.0


def test_outcome_node_is_neither_matched_nor_counted() -> None:
    reference = [
        ref("e1", "Committee approves the budget bill", impact=0.7),
        ref("out", "Parliament passes the budget bill", impact=1.0, outcome=True),
    ]
    index = ReferenceIndex(reference)
    assert [e.id for e in index.events] == ["e1"] and [e.id for e in index.key_events] == ["e1"]
    # A forecast that names the outcome itself does not "recover" a key event.
    result = index.score([fc("f", "Parliament passes the budget bill")])
    assert all(m.reference_id != "out" for m in result.matches)
    assert result.n_reference_events == 1
    named = index.score([fc("f", "Committee approves the budget bill"), fc("g", "Parliament passes the budget bill")])
    assert named.ker == 1.0 and named.event_recall == 1.0  # the denominator is e1 alone


def test_no_forecast_graph_means_no_reasoning_score() -> None:
    result = ReferenceIndex([ref("e1", "Committee approves the budget bill", impact=0.7)]).score([])
    assert (result.ker, result.event_precision, result.event_recall, result.event_f1) == (None, None, None, None)
    assert result.temporal_mae_days is None
