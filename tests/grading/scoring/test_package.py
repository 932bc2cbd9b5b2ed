"""The scoring package stays pure: no Django, cheap to import, versioned."""

from __future__ import annotations

import grading.scoring
from tests.purity import ROOT, assert_imports_without_django, assert_sources_do_not_mention_django

MODULES = [
    "aggregate",
    "definitions",
    "event_features",
    "evidence",
    "guarded",
    "guarded_texts",
    "learned_decision",
    "matchers",
    "multilingual",
    "numbers",
    "open_ended",
    "outcome",
    "pair_verdicts",
    "polarity",
    "reasoning",
    "relation",
    "text",
    "worldreasoner",
]


def test_grader_version() -> None:
    assert grading.scoring.GRADER_VERSION == "2.0"
    assert isinstance(grading.scoring.GRADER_VERSION, str)


def test_modules_import_without_django() -> None:
    assert_imports_without_django("grading.scoring", MODULES)


def test_sources_do_not_mention_django() -> None:
    assert_sources_do_not_mention_django(ROOT / "grading" / "scoring", MODULES)
