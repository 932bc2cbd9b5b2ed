"""The hindsight gold set (grading/benchmarks/hindsight_gold/) and the arithmetic that scores a graph
against it. No database: the scorer is pure, and the gold files are checked against the archive and
the questions they were written from."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from grading.benchmarks.hindsight_gold import (
    GoldCause,
    GoldQuestion,
    GraphEvent,
    expected_direction,
    gold_path,
    load_gold,
    pool,
    score_graph,
)
from ingestion.archives import archive_lines
from tests.purity import assert_imports_without_django

ROOT = Path(__file__).resolve().parents[2]
ARCHIVE = ROOT / "ingestion" / "data" / "archives" / "wcep" / "documents.jsonl.gz"
QUESTIONS = {q["external_id"]: q for q in json.loads((ROOT / "ingestion/data/real_replay/questions.json").read_text())}
T = datetime(2026, 1, 10, tzinfo=UTC)


def _question(kind: str = "binary", outcome: Any = False) -> GoldQuestion:
    causes = (
        GoldCause("a", "towards", T),
        GoldCause("b", "against", T),
        GoldCause("c", "unclear", T),
        GoldCause("d", "towards", T),
    )
    return GoldQuestion(
        question="q",
        type=kind,
        outcome=outcome,
        window_start=T - timedelta(days=60),
        window_end=T + timedelta(days=30),
        causes=causes,
        outcome_items=frozenset({"out"}),
        related=frozenset({"rel"}),
    )


def _event(key: str, *sources: str, direction: str | None = None) -> GraphEvent:
    return GraphEvent(key=key, sources=frozenset(sources), direction=direction)


def test_a_graph_is_scored_by_its_events_and_a_merged_event_counts_for_all_its_sources() -> None:
    # The question resolved No: a cause towards the outcome pushed towards No (Negative).
    events = [
        _event("e1", "a", "noise-1", direction="Negative"),  # finds a, direction right
        _event("e2", "rel", direction="Positive"),  # same storyline, not a cause: left out of precision
        _event("e3", "out", direction="Positive"),  # the outcome reported as its own cause: wrong
        _event("e4", "noise-2", direction="Positive"),  # noise: wrong
        _event("e5", "b", "d", direction="Positive"),  # merged: finds b (right) and d (wrong direction)
    ]
    score = score_graph(_question(), events)
    assert (score.found, score.causes, score.recall) == (3, 4, 0.75)
    assert (score.events, score.hits, score.related_only, score.outcome_as_cause) == (5, 2, 1, 1)
    assert score.precision == 0.5  # 2 of the 4 judged events
    assert score.strict_precision == 0.4  # 2 of all 5
    # Sources: a, noise-1, out, noise-2, b, d (the related item left out); 3 are gold.
    assert (score.gold_sources, score.sources, score.source_precision) == (3, 6, 0.5)
    assert (score.direction_agreed, score.direction_checked) == (2, 3)
    assert score.found_ids == ("a", "b", "d")


def test_a_cause_cited_by_events_that_disagree_on_its_direction_does_not_agree() -> None:
    events = [_event("e1", "a", direction="Negative"), _event("e2", "a", direction="Neutral")]
    score = score_graph(_question(), events)
    assert (score.found, score.hits, score.direction_checked, score.direction_agreed) == (1, 2, 1, 0)


def test_directions_follow_the_question_type_and_the_resolved_outcome() -> None:
    towards, against, unclear = GoldCause("x", "towards", T), GoldCause("y", "against", T), GoldCause("z", "unclear", T)
    no, yes, choice = _question(outcome=False), _question(outcome=True), _question("multiple_choice", "Radev")
    assert [expected_direction(no, c) for c in (towards, against, unclear)] == ["Negative", "Positive", None]
    assert [expected_direction(yes, c) for c in (towards, against, unclear)] == ["Positive", "Negative", None]
    assert [expected_direction(choice, c) for c in (towards, against, unclear)] == ["Positive", "Negative", None]


def test_no_graph_finds_nothing_and_has_no_precision() -> None:
    score = score_graph(_question(), None)
    assert (score.recall, score.precision, score.direction_agreement) == (0.0, None, None)


def test_pooled_figures_add_the_counts_before_dividing() -> None:
    thin = score_graph(_question(), [_event("e1", "a", direction="Negative")])  # 1 of 4, 1 of 1 event
    empty = score_graph(_question(), None)
    wide = score_graph(_question(), [_event("e1", "a", "b", "d"), _event("e2", "noise")])  # 3 of 4, 1 of 2
    pooled = pool([thin, empty, wide])
    assert pooled["questions"] == 3
    assert (pooled["found"], pooled["causes"], pooled["recall"]) == (4, 12, 0.333)
    assert (pooled["hits"], pooled["events"], pooled["precision"]) == (2, 3, 0.667)
    assert pooled["mean_recall"] == round((0.25 + 0 + 0.75) / 3, 3)
    assert (pooled["direction_agreed"], pooled["direction_checked"]) == (1, 4)


def test_a_malformed_gold_line_is_refused_naming_it(tmp_path: Path) -> None:
    row = {
        "question": "q",
        "type": "binary",
        "window": {"start": "2026-01-01T00:00:00Z", "end": "2026-02-01T00:00:00Z"},
        "causes": [{"id": "a", "published_at": "2026-01-05T00:00:00Z", "direction": "towards"}],
    }
    bad_direction = {**row, "causes": [{**row["causes"][0], "direction": "sideways"}]}
    outside = {**row, "causes": [{**row["causes"][0], "published_at": "2026-03-05T00:00:00Z"}]}
    both = {**row, "outcome_items": ["a"]}
    for bad, message in [(bad_direction, "direction"), (outside, "outside the window"), (both, "more than one")]:
        path = tmp_path / "gold.jsonl"
        path.write_text(json.dumps(row | {"question": "ok"}) + "\n" + json.dumps(bad) + "\n")
        with pytest.raises(ValueError, match=rf"gold.jsonl line 2.*{message}"):
            load_gold(path)


def test_the_scorer_imports_without_django() -> None:
    assert_imports_without_django("grading.benchmarks", ["hindsight_gold"])


# The shipped gold set, against the questions and the archive it was written from.


@cache
def _archive() -> dict[str, str]:
    return {doc["id"]: doc["published_at"] for doc in map(json.loads, archive_lines(ARCHIVE))}


@cache
def _rows(half: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in gold_path(half).read_text(encoding="utf-8").splitlines()]


def test_the_halves_split_the_real_questions_by_storyline_with_every_type_in_each() -> None:
    dev, heldout = load_gold(gold_path("dev")), load_gold(gold_path("heldout"))
    assert (len(dev), len(heldout)) == (25, 24)
    assert {q.question for q in dev} | {q.question for q in heldout} == set(QUESTIONS)
    assert not {r["storyline"] for r in _rows("dev")} & {r["storyline"] for r in _rows("heldout")}
    for half in (dev, heldout):
        assert {q.type for q in half} == {"binary", "multiple_choice", "quantity", "timeframe"}
    assert (sum(len(q.causes) for q in dev), sum(len(q.causes) for q in heldout)) == (265, 364)


@pytest.mark.parametrize("half", ["dev", "heldout"])
def test_every_gold_item_is_in_the_archive_and_no_outcome_is_its_own_cause(half: str) -> None:
    archive = _archive()
    for row in _rows(half):
        question = QUESTIONS[row["question"]]
        opened = datetime.fromisoformat(question["open_at"].replace("Z", "+00:00"))
        assert row["window"]["start"] == (opened - timedelta(days=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
        # The gold keeps the window it was written for; a later correction of a question's known
        # date may only move it later, so no gold cause falls after the outcome became known.
        assert row["window"]["end"] == row["resolved_at"] <= question["resolved_at"], row["question"]
        assert set(question["resolved_by"]) <= set(row["outcome_items"]), row["question"]
        for cause in row["causes"]:
            assert archive.get(cause["id"]) == cause["published_at"], cause["id"]
            assert cause["why"].strip(), cause["id"]
            if question["type"] == "binary" and cause["direction"] != "unclear":
                towards_yes = (cause["direction"] == "towards") == question["outcome"]
                assert cause["pushes"] == ("Yes" if towards_yes else "No"), cause["id"]
        for item in [*row["outcome_items"], *row["related"]]:
            assert item in archive, item
