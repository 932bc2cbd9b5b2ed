"""Quality thresholds of WorldReasoner, Appendix B.3 (pure)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from grading.builders.validation import validate_graph_payload
from grading.quality import Thresholds, check, delete_weak_links, outcome_depth
from tests.grading.graphs import mutate, valid_payload

IDS = list(range(1, 31))
T = Thresholds()


def draft_of(payload: dict) -> object:
    draft, problems = validate_graph_payload(
        payload, known_article_ids=IDS, earliest=date(2025, 12, 1), latest=date(2026, 3, 1)
    )
    assert not problems, problems
    return draft


def test_a_good_graph_passes() -> None:
    report = check(draft_of(valid_payload(IDS)), T)
    assert report.passed, report.failures
    assert report.depth == 11 and report.events == 12 and report.sources >= 20 and report.links == 11


def test_too_few_events_and_sources_fail() -> None:
    report = check(draft_of(valid_payload(IDS[:6], events=5)), T)
    assert not report.passed
    assert any("5 events" in f or "6 events" in f for f in report.failures)
    assert any("distinct source articles" in f for f in report.failures)


def test_depth_counts_hops_of_included_links_into_the_outcome() -> None:
    def star(p: dict) -> None:
        # Every event links straight to the outcome: depth 1 however many events.
        p["links"] = [dict(p["links"][0], source=e["id"], target="outcome") for e in p["events"] if not e["is_outcome"]]

    draft = draft_of(mutate(valid_payload(IDS), star))
    report = check(draft, T)
    assert report.depth == 1
    assert any("Causal depth is 1 hop" in f for f in report.failures)


def test_weak_links_fail_and_delete_weak_links_removes_them() -> None:
    def weaken(p: dict) -> None:
        p["links"][0]["confidence"] = 0.5
        p["links"][1]["strength"] = 0.2

    draft = draft_of(mutate(valid_payload(IDS), weaken))
    report = check(draft, T)
    assert not report.passed
    assert report.weak_links == [("ev1", "ev2"), ("ev2", "ev3")]
    corrected = delete_weak_links(draft, T)
    assert len(corrected.links) == len(draft.links) - 2
    assert check(corrected, T).passed


def test_negative_strength_counts_by_magnitude() -> None:
    draft = draft_of(mutate(valid_payload(IDS), lambda p: p["links"][0].update(strength=-0.7, relation="Inhibits")))
    assert check(draft, T).passed


def test_thresholds_are_parameters() -> None:
    draft = draft_of(valid_payload(IDS))
    assert not check(draft, replace(T, min_events=50)).passed
    assert check(draft, replace(T, min_sources=1, min_depth=1)).passed


def test_no_outcome_means_depth_zero() -> None:
    draft = draft_of(valid_payload(IDS))
    no_outcome = replace(draft, events=tuple(replace(e, is_outcome=False) for e in draft.events))
    assert outcome_depth(no_outcome) == 0
    assert any("no outcome event" in f for f in check(no_outcome, T).failures)
