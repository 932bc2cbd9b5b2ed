"""Key-event selection (top 5 by magnitude x confidence) and matcher settings."""

from __future__ import annotations

import datetime as dt

import pytest

from grading.scoring.matching import DEFAULT_MATCHER_SETTINGS, Event, MatcherSettings, impact_score, select_key_events
from grading.scoring.reasoning import ReferenceIndex

D = dt.date(2026, 1, 10)


def ev(id_: str, m: float | None, c: float | None, *, date: dt.date | None = D, rejected: bool = False) -> Event:
    return Event(id=id_, title=f"event {id_}", date=date, magnitude=m, confidence=c, has_impact=True, rejected=rejected)


def test_top_five_by_impact_score() -> None:
    events = [ev(f"e{i}", i / 10, 1.0) for i in range(1, 9)]
    assert [e.id for e in select_key_events(events)] == ["e8", "e7", "e6", "e5", "e4"]
    assert impact_score(events[0]) == pytest.approx(0.1)


def test_only_events_with_an_impact_and_not_rejected() -> None:
    events = [
        Event(id="structural", title="x", magnitude=1.0, confidence=1.0, has_impact=False),
        ev("rejected", 1.0, 1.0, rejected=True),
        ev("kept", 0.2, 0.5),
        ev("missing", None, 0.9),  # no magnitude -> score 0, still eligible
    ]
    assert [e.id for e in select_key_events(events)] == ["kept", "missing"]


def test_ties_broken_by_date_then_id() -> None:
    events = [
        ev("b", 0.6, 0.5, date=D),
        ev("a", 0.5, 0.6, date=D),  # 0.3 as well, same date -> id order
        ev("c", 0.3, 1.0, date=D - dt.timedelta(days=1)),  # earlier date wins
        ev("d", 1.0, 0.3, date=None),  # undated last among ties
        ev("e", 0.1, 3.0, date=D + dt.timedelta(days=5)),
    ]
    assert [e.id for e in select_key_events(events, top_k=5)] == ["c", "a", "b", "e", "d"]


def test_reference_index_key_events_and_rejections() -> None:
    events = [ev("k1", 0.9, 0.9), ev("gone", 1.0, 1.0, rejected=True), ev("k2", 0.5, 0.5)]
    index = ReferenceIndex(events)
    assert [e.id for e in index.key_events] == ["k1", "k2"]
    assert len(index) == 2  # rejected events leave the reference
    with pytest.raises(ValueError, match="unique"):
        ReferenceIndex([ev("x", 1, 1), ev("x", 1, 1)])


def test_settings_defaults_and_round_trip() -> None:
    s = DEFAULT_MATCHER_SETTINGS
    assert (s.bm25_weight, s.token_f1_weight, s.threshold, s.date_window_days, s.top_k) == (0.6, 0.4, 0.45, 7, 5)
    data = s.as_dict()
    assert data["threshold"] == 0.45
    assert isinstance(data["version"], str) and data["version"]
    assert MatcherSettings.from_dict(data) == s
    with pytest.raises(ValueError, match="unknown matcher settings"):
        MatcherSettings.from_dict({**data, "extra": 1})
    with pytest.raises(AttributeError):
        s.threshold = 0.5  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"threshold": 1.5},
        {"bm25_weight": -0.1},
        {"date_window_days": -1},
        {"top_k": 0},
        {"bm25_b": 2.0},
        {"bm25_normalisation": "global"},
        {"text_fields": "body"},
    ],
)
def test_invalid_settings(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        MatcherSettings(**kwargs)  # type: ignore[arg-type]
