"""Validation of model graph answers (pure)."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from grading.builders.validation import validate_graph_payload
from tests.grading.graphs import mutate, valid_payload

IDS = list(range(100, 130))
WINDOW = {"earliest": date(2025, 12, 1), "latest": date(2026, 3, 1)}


def validate(payload: Any) -> tuple[Any, list[str]]:
    return validate_graph_payload(payload, known_article_ids=IDS, **WINDOW)


def test_valid_payload_becomes_a_draft() -> None:
    draft, problems = validate(valid_payload(IDS))
    assert problems == []
    assert draft is not None and len(draft.events) == 12 and len(draft.links) == 11
    assert draft.outcome() is not None and draft.outcome().key == "outcome"
    assert len(draft.source_ids()) >= 20


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda p: p["events"][0].update(title=42), "events[0] (ev1).title"),
        (lambda p: p["events"][0].update(is_outcome="no"), "is_outcome: must be true or false"),
        (lambda p: p["events"][0].update(source_ids="100"), "source_ids: must be a list"),
        (lambda p: p["links"][0].update(strength="strong"), "links[0].strength: 'strong' is not a number"),
        (lambda p: p["links"][0].update(confidence=True), "links[0].confidence: True is not a number"),
        (lambda p: p["events"][1]["impact"].update(magnitude=1.4), "impact.magnitude: 1.4 is outside [0, 1]"),
        (lambda p: p["events"][1]["impact"].update(confidence=-0.1), "impact.confidence: -0.1 is outside [0, 1]"),
        (lambda p: p["links"][0].update(strength=-1.5), "links[0].strength: -1.5 is outside [-1, 1]"),
        (lambda p: p["events"][2].update(type="Rumour"), "'Rumour' is not one of"),
        (lambda p: p["links"][1].update(relation="Because"), "'Because' is not one of"),
        (lambda p: p["events"][2]["impact"].update(direction="Up"), "'Up' is not one of"),
        (lambda p: p["links"][0].update(target="ev99"), "'ev99' is not the id of an event"),
        (lambda p: p["events"][0].update(source_ids=[999]), "article id 999 is not one of the evidence articles"),
        (lambda p: p["links"][0].update(evidence_ids=[5]), "article id 5 is not one of the evidence articles"),
        (
            lambda p: p["events"][3].update(impact={"direction": "Neutral", "magnitude": 0.5, "confidence": 0.5}),
            "a Neutral impact has magnitude <= 0.3",
        ),
        (lambda p: p["events"][0].update(date="2026-13-01"), "is not an ISO date"),
        (lambda p: p["events"][0].update(date="2026-04-01"), "2026-04-01 is outside the allowed window"),
        (lambda p: p["events"][0].update(date="2025-01-01"), "2025-01-01 is outside the allowed window"),
        (lambda p: p["events"][1].update(id="ev1"), "'ev1' is used by more than one event"),
        (lambda p: p["events"][0].update(is_outcome=True), "exactly one event must have is_outcome true; found 2"),
        (lambda p: p["events"][-1].update(is_outcome=False), "found 0"),
        (lambda p: p["links"].append(dict(p["links"][0])), "a second link from 'ev1' to 'ev2'"),
        (lambda p: p["links"].append(dict(p["links"][0], source="ev3", target="ev1")), "form a cycle"),
        (lambda p: p["links"].append(dict(p["links"][0], source="ev3", target="ev3")), "to itself"),
        (
            lambda p: p["events"][-1].update(impact={"direction": "Positive", "magnitude": 1, "confidence": 1}),
            "outcome event itself",
        ),
        (lambda p: p.update(events=[]), "events: must be a non-empty list"),
        (lambda p: p.update(links={}), "links: must be a list"),
    ],
)
def test_each_malformed_case_is_named(change: Any, expected: str) -> None:
    draft, problems = validate(mutate(valid_payload(IDS), change))
    assert draft is None
    assert any(expected in problem for problem in problems), problems


def test_every_problem_is_reported_at_once() -> None:
    def breaks(p: dict[str, Any]) -> None:
        p["events"][0]["title"] = ""
        p["links"][0]["confidence"] = 2

    _, problems = validate(mutate(valid_payload(IDS), breaks))
    assert len(problems) >= 2


def test_a_non_object_is_refused() -> None:
    assert validate(["events"])[0] is None
