"""Evidence metrics: source precision/recall and leaks."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grading.scoring.evidence import EvidenceScore, leaked_items, score_evidence, source_precision, source_recall

UTC = dt.UTC
AS_OF = dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_source_precision_and_recall() -> None:
    cited = {"a1", "a2", "a3", "a4"}
    reference = {"a1", "a2", "b1", "b2", "b3", "b4"}
    assert source_precision(cited, reference) == 0.5
    assert source_recall(cited, reference) == pytest.approx(2 / 6)
    assert source_precision([1, 2, 2], [2]) == 0.5  # duplicates collapse


def test_empty_sets() -> None:
    assert source_precision(set(), {"a"}) == 0.0
    assert source_recall(set(), {"a"}) == 0.0
    assert source_recall({"a"}, set()) is None
    assert source_precision(set(), set()) == 0.0


def test_leaks_boundary_is_at_or_after_as_of() -> None:
    published = {
        "before": AS_OF - dt.timedelta(microseconds=1),
        "exact": AS_OF,
        "after": AS_OF + dt.timedelta(days=1),
        "other_tz": dt.datetime(2026, 3, 1, 13, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))),  # 11:00 UTC
        "unknown": None,
        "naive": dt.datetime(2026, 3, 2),
    }
    leaked, unknown = leaked_items(
        ["before", "exact", "after", "other_tz", "unknown", "naive", "missing", "exact"], published, AS_OF
    )
    assert leaked == ["exact", "after"]
    assert unknown == ["unknown", "naive", "missing"]


def test_as_of_must_be_aware() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        leaked_items(["a"], {}, dt.datetime(2026, 3, 1))


def test_score_evidence() -> None:
    score = score_evidence(
        {"a1", "a2", "r1"},
        {"a1", "b1"},
        cited={"a1", "a2"},
        published_at={"a1": AS_OF - dt.timedelta(days=3), "a2": AS_OF + dt.timedelta(hours=1)},
        as_of=AS_OF,
    )
    assert score.source_precision == pytest.approx(1 / 3)
    assert score.source_recall == 0.5
    assert (score.n_sources, score.n_reference, score.n_overlap) == (3, 2, 1)
    assert score.leaks == 1
    assert score.leaked_ids == ("a2",)
    assert score.unknown_time == 0
    no_time: EvidenceScore[str] = score_evidence(set(), set())
    assert no_time.leaks == 0 and no_time.source_precision == 0.0 and no_time.source_recall is None


ids = st.sets(st.integers(min_value=0, max_value=30), max_size=15)


@given(ids, ids)
def test_source_precision_in_unit_interval(c: set[int], ch: set[int]) -> None:
    value = source_precision(c, ch)
    assert 0.0 <= value <= 1.0
    recall = source_recall(c, ch)
    assert recall is None or 0.0 <= recall <= 1.0


@given(ids)
def test_citing_only_reference_sources_is_perfect(ch: set[int]) -> None:
    if ch:
        assert source_precision(ch, ch) == 1.0
        assert source_recall(ch, ch) == 1.0
