"""HINDSIGHT_MATCHER chooses the event matcher stored on (and used for) every grade."""

from __future__ import annotations

import importlib.util

import pytest

from grading.scoring.guarded import GUARDED_MATCHER_VERSION
from grading.scoring.matching import MATCHER_VERSION
from leaderboard.selectors.grade_keys import matcher_settings


def test_guarded_is_the_default(settings: pytest.FixtureRequest) -> None:
    current = matcher_settings()
    assert current.matcher == "guarded" and current.threshold == 0.45 and current.date_window_days == 7
    assert current.version == GUARDED_MATCHER_VERSION


def test_hybrid_stays_a_named_setting(settings) -> None:  # type: ignore[no-untyped-def]
    settings.HINDSIGHT_MATCHER = "hybrid"
    current = matcher_settings()
    assert (current.matcher, current.version) == ("hybrid", MATCHER_VERSION)


def test_semantic_setting_gives_the_cosine_matcher(settings) -> None:  # type: ignore[no-untyped-def]
    settings.HINDSIGHT_MATCHER = "semantic"
    current = matcher_settings()
    assert current.matcher == "semantic" and current.threshold == pytest.approx(0.55)
    assert current.as_dict()["version"].startswith("semantic-all-MiniLM-L6-v2")


def test_unknown_matcher_is_refused_by_name(settings) -> None:  # type: ignore[no-untyped-def]
    settings.HINDSIGHT_MATCHER = "fuzzy"
    with pytest.raises(ValueError, match="fuzzy"):
        matcher_settings()


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="the semantic extra is installed")
def test_semantic_without_the_extra_names_the_requirements_file(settings) -> None:  # type: ignore[no-untyped-def]
    from grading.scoring.matchers import build_reference_index
    from grading.scoring.matching import Event
    from grading.scoring.semantic import SemanticMatcherUnavailable

    settings.HINDSIGHT_MATCHER = "semantic"
    with pytest.raises(SemanticMatcherUnavailable, match=r"requirements-semantic\.txt"):
        build_reference_index([Event(id="e1", title="Bank cuts rates", description="", date=None)], matcher_settings())
