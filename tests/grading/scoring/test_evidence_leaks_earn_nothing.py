"""A leaked source counts in |C| but never earns overlap with the hindsight sources."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grading.scoring.evidence import score_evidence, source_precision, source_recall

AS_OF = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


def test_leaked_reference_source_stays_in_the_denominator_only() -> None:
    sources = {"r1", "r2", "x"}
    reference = {"r1", "r2", "r3"}
    # Without leaks: 2 of 3 sources are in C^H.
    assert source_precision(sources, reference) == pytest.approx(2 / 3)
    # r2 leaked: it is still one of the three sources but earns nothing.
    assert source_precision(sources, reference, leaked={"r2"}) == pytest.approx(1 / 3)
    assert source_recall(sources, reference, leaked={"r2"}) == pytest.approx(1 / 3)


def test_score_evidence_finds_leaks_by_publication_time() -> None:
    score = score_evidence(
        {"r1", "r2"},
        {"r1", "r2"},
        cited={"r1", "r2"},
        published_at={"r1": AS_OF - dt.timedelta(days=1), "r2": AS_OF},
        as_of=AS_OF,
    )
    assert score.leaked_ids == ("r2",)
    assert score.source_precision == 0.5 and score.source_recall == 0.5
    assert (score.n_sources, score.n_overlap) == (2, 1)


def test_caller_leaks_join_the_time_based_ones() -> None:
    # The grading inputs may name leaks the publication times cannot show (reads outside the scope).
    score = score_evidence({"r1", "r2", "r3"}, {"r1", "r2", "r3"}, leaked=["r3"], cited={"r2"},
                           published_at={"r2": AS_OF + dt.timedelta(hours=1)}, as_of=AS_OF)  # fmt: skip
    assert score.leaked_ids == ("r3", "r2") and score.leaks == 2
    assert score.source_precision == pytest.approx(1 / 3)


ids = st.sets(st.integers(min_value=0, max_value=20), max_size=12)


@given(ids, ids, ids)
def test_leaking_never_raises_precision(c: set[int], ch: set[int], leaked: set[int]) -> None:
    assert source_precision(c, ch, leaked=leaked) <= source_precision(c, ch)
    assert source_precision(c, ch, leaked=c) == 0.0
