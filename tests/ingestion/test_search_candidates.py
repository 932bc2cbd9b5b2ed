"""Property: a search ranks exactly the SEARCH_CANDIDATES most recent matches before as_of.

The cap is lowered so that small random corpora, spread over years, exceed it and drive the
date-window walk through several windows (PostgreSQL) and the FTS5 candidate query (SQLite).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingestion.models import Article
from ingestion.selectors import evidence
from ingestion.selectors.evidence import articles_search
from tests.ingestion.test_as_of_properties import in_savepoint

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]

CUT = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)
YEARS = 3 * 365 * 86400

# Mostly spread over years, some bunched within a minute of the cut-off, some undated.
times = st.one_of(
    st.none(),
    st.integers(-YEARS, YEARS).map(lambda s: CUT + timedelta(seconds=s)),
    st.integers(-60_000_000, 60_000_000).map(lambda us: CUT + timedelta(microseconds=us)),
)


def make_articles(published: list[datetime | None]) -> list[Article]:
    fetched = CUT + timedelta(days=4 * 365)
    Article.objects.bulk_create(
        Article(
            url=f"https://cand.example.org/{i}",
            title=f"Harbour report {i}",
            summary="Ships in the harbour." if i % 2 else "",
            body="The harbour was busy. " * (1 + i % 5),
            published_at=t,
            fetched_at=fetched,
            content_hash=f"c{i:063x}",
        )
        for i, t in enumerate(published)
    )
    return list(Article.objects.filter(url__startswith="https://cand.example.org/"))


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    published=st.lists(times, min_size=0, max_size=16),
    cap=st.integers(1, 5),
    as_of_shift=st.integers(-YEARS, YEARS),
    limit=st.integers(1, 4),
)
def test_search_ranks_the_most_recent_matches_before_as_of(
    db: Any, published: list[datetime | None], cap: int, as_of_shift: int, limit: int
) -> None:
    as_of = CUT + timedelta(seconds=as_of_shift) if as_of_shift % 3 else CUT

    def example() -> None:
        articles = make_articles(published)
        visible = sorted(
            (a for a in articles if a.published_at is not None and a.published_at < as_of),
            key=lambda a: (a.published_at, a.pk),
            reverse=True,
        )
        expected = {a.pk for a in visible[:cap]}
        with mock.patch.object(evidence, "SEARCH_CANDIDATES", cap):
            seen: list[int] = []
            offset = 0
            while True:
                page = articles_search(query="harbour", as_of=as_of, limit=limit, offset=offset)
                assert page.total == min(len(visible), cap)
                assert page.total_is_exact == (len(visible) <= cap)
                if not page.results:
                    break
                scores = [r.score for r in page.results]
                assert scores == sorted(scores, reverse=True)
                seen.extend(r.id for r in page.results)
                offset += limit
        assert len(seen) == len(set(seen))
        assert set(seen) == expected

    in_savepoint(example)
