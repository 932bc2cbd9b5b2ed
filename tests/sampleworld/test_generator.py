"""The sample world generator: seeded determinism, every question type, outcomes from the hidden graph."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime

import pytest

from sampleworld.generator import generate_world, outcome_from_graph
from sampleworld.world import World

END = datetime(2026, 5, 1, 15, 30, tzinfo=UTC)


def _fingerprint(world: World) -> list[object]:
    return [
        [asdict(a) for a in world.articles],
        [(s.key, s.outcome, s.question, [asdict(e) for e in s.events]) for s in world.storylines],
        [asdict(r) for r in world.structured_events],
        [(m["external_id"], m["path"], m["winner"]) for m in world.markets],
    ]


def test_same_seed_same_world_other_seed_other_world() -> None:
    assert _fingerprint(generate_world(size="tiny", seed=3, end=END)) == _fingerprint(
        generate_world(size="tiny", seed=3, end=END)
    )
    assert _fingerprint(generate_world(size="tiny", seed=3, end=END)) != _fingerprint(
        generate_world(size="tiny", seed=4, end=END)
    )


@pytest.mark.parametrize("size", ["tiny", "small"])
def test_every_question_type_on_both_tracks_where_it_applies(size: str) -> None:
    world = generate_world(size=size, seed=11, end=END)
    replay = {s.question["type"] for s in world.storylines if s.track == "replay"}
    assert replay == {"binary", "multiple_choice", "quantity", "timeframe", "relation", "open_ended"}
    live = [s for s in world.storylines if s.track == "live"]
    assert {s.platform for s in live} >= {"polymarket", "manifold", "kalshi"}


def test_the_demo_world_keeps_a_live_question_of_every_type_open_past_its_end() -> None:
    world = generate_world(size="small", seed=7, end=END)
    live = [s for s in world.storylines if s.track == "live"]
    assert {s.question["type"] for s in live} == {
        "binary", "multiple_choice", "quantity", "timeframe", "relation", "open_ended"
    }  # fmt: skip
    for story in live:
        if story.market is None:
            assert datetime.fromisoformat(story.question["close_at"]) > END, story.key


@pytest.mark.parametrize("seed", range(6))
def test_outcomes_follow_from_the_hidden_graph(seed: int) -> None:
    world = generate_world(size="small", seed=seed, end=END)
    for story in world.storylines:
        assert outcome_from_graph(story) == story.outcome, story.key
        outcome_events = [e for e in story.events if e.is_outcome]
        assert len(outcome_events) == 1
        assert all(e.day <= story.resolved_at.date() for e in story.events)
        if story.market is not None:
            winner = story.market["winner"]
            assert winner == (
                ("Yes" if story.outcome else "No") if story.question["type"] == "binary" else story.outcome
            )


def test_world_is_labelled_fictional_and_lies_in_the_past() -> None:
    world = generate_world(size="tiny", seed=5, end=END)
    assert all("(fictional)" in o.name for o in world.outlets)
    for story in world.storylines:
        assert story.question["title"].endswith("(fictional)")
        assert story.question["origin"] == "sample"
        assert story.question["attribution"]["source"] == "Hindsight sample world (fictional)"
    assert all(m["title"].endswith(")") and "fictional" in m["title"] for m in world.markets)
    assert all(a.published_at is None or a.published_at < END for a in world.articles)
    assert all(".example/" in a.url for a in world.articles)
    assert world.start < world.present < world.end <= END


def test_news_reports_every_event_with_noise_duplicates_and_undated_entries() -> None:
    world = generate_world(size="tiny", seed=9, end=END)
    for story in world.storylines:
        for event in story.events:
            if event.is_outcome and story.kind == "summit":
                continue
            reports = world.articles_of_event(story.key, event.key)
            assert len(reports) >= 2, event.key
            assert all(a.published_at is not None and a.published_at.date() >= event.day for a in reports)
    assert any(a.duplicate for a in world.articles)
    assert any(a.published_at is None for a in world.articles)
    assert any(not a.storyline for a in world.articles)


def test_relation_gold_matches_the_structured_events_of_the_target_day() -> None:
    world = generate_world(size="tiny", seed=2, end=END)
    story = next(s for s in world.storylines if s.kind == "relations")
    q = story.question
    target = [
        r
        for r in world.structured_events
        if r.day.isoformat() == q["target_date"] and (r.subject, r.object) == (q["subject"], q["object"])
    ]
    codes = sorted(c for codes in story.outcome["relations"].values() for c in codes)
    assert sorted(r.relation for r in target) == codes
    assert all(len(r.article_urls) >= 2 for r in target)
