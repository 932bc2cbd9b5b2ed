"""A varied grading world for the ``guarded`` matcher, and every grade it gives in it, so that a change
meant to make grading faster can be checked to change no verdict, probability, match or metric.

The world is real and hand-written text the matcher was not tuned to run fast on: the real event
pairs (dev and held-out test) with their own dates, grouped by story into forecast graphs; items of
Wikipedia's Current events portal (tests/grading/realworld, CC BY-SA 4.0) as hindsight events with a
title and a description, and other items of the same weeks as forecast events; a few pairs of every
category of the event-pair benchmark on one date; the hand-written ceasefire storyline's graphs;
and events that exercise the edges: a hindsight title repeated with a description that adds a
sentence, the same words with other white space, one-word, undated, repeated and stuffed events,
titles in other languages, prices with thousands separators.

``python -m tests.grading.scoring.varied_world`` writes the grades (data/guarded_verdicts.json)
under each decision of the matcher. Rewrite them only with a change that is meant to change
verdicts (and a new matcher version); a change of speed must reproduce them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from grading.benchmarks import CATEGORIES, load_event_pairs, load_real_pairs
from grading.scoring.event_features import FactsStore
from grading.scoring.guarded import DECISIONS, GuardedReferenceIndex
from grading.scoring.matching import Event
from tests.grading.scoring.storyline import GRAPHS, QUESTION, REFERENCE

EXPECTED: Final = Path(__file__).with_name("data") / "guarded_verdicts.json"
REALWORLD: Final = Path(__file__).resolve().parents[1] / "realworld"
DAY: Final = dt.date(2026, 1, 15)

World = tuple[str, list[Event], list[list[Event]]]


def _date(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def _impact(rng: random.Random) -> dict[str, Any]:
    return {
        "magnitude": rng.choice([0.3, 0.5, 0.8, 1.0]),
        "confidence": rng.choice([0.5, 0.8, 1.0]),
        "has_impact": True,
    }


def real_pairs_world() -> World:
    """The real pairs: each distinct reference sentence a hindsight event, each story's other
    sentences one forecast graph on their own dates, with edge cases added to some of them."""
    rng = random.Random(11)
    pairs = load_real_pairs("dev") + load_real_pairs("test")
    refs: dict[str, Event] = {}
    for pair in pairs:
        if pair["a"] not in refs:
            k = len(refs)
            # Every fifth hindsight event says more in a description (the parse reads the first sentence).
            description = "Officials confirmed the figures on Monday." if k % 5 == 0 else ""
            refs[pair["a"]] = Event(f"h{k}", pair["a"], description, _date(pair["a_date"]), **_impact(rng))
    forecasts: list[list[Event]] = []
    for number, story in enumerate(dict.fromkeys(p["story"] for p in pairs)):
        mine = [p for p in pairs if p["story"] == story]
        events = [Event(f"f{j}", p["b"], "", _date(p["b_date"])) for j, p in enumerate(mine)]
        first = refs[mine[0]["a"]]
        extra = {
            0: [Event("same", first.title, "Both sides confirmed the terms in a statement.", first.date)],
            1: [Event("spaces", "  ".join(first.title.split()) + " ", "", first.date)],
            2: [Event("one", first.title.split()[0], "", first.date)],
            3: [Event("undated", first.title, "", None)],
            4: [Event(f"again{d}", mine[0]["b"], "", first.date + dt.timedelta(days=d)) for d in (1, 2, 3)],
        }.get(number % 6, [])
        forecasts.append(events + extra)
    return "real pairs", list(refs.values()), forecasts


def current_events_world() -> World:
    """Items of the Current events portal: every eighth a hindsight event (its truncated title and
    its text as description), items of the same weeks as forecast events (text, or title alone)."""
    rng = random.Random(12)
    lines = (REALWORLD / "wcep_bulgaria_2026.jsonl").read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines]
    refs = [
        Event(f"h{k}", item["title"], item["text"], _date(item["portal_date"]), **_impact(rng))
        for k, item in enumerate(items[::8])
    ]
    others = [item for k, item in enumerate(items) if k % 8]
    forecasts: list[list[Event]] = []
    for g in range(14):
        chosen = rng.sample(others, 8)
        forecasts.append(
            [
                Event(
                    f"f{j}",
                    item["text"] if j % 2 else item["title"],
                    "" if j % 3 else item["text"],
                    _date(item["portal_date"]) + dt.timedelta(days=rng.randint(-3, 3)),
                )
                for j, item in enumerate(chosen)
            ]
            # A hindsight event's text as a title of its own, a few days off.
            + [Event("told", refs[g].description, "", refs[g].date + dt.timedelta(days=g % 4))]
        )
    return "current events", refs, forecasts


def benchmark_world() -> World:
    """Eight pairs of every benchmark category on one date: every forecast event meets every
    hindsight event (other languages, one word, stuffing, near-duplicates, traps)."""
    rng = random.Random(13)
    every = load_event_pairs()
    pairs = [p for category in CATEGORIES for p in [q for q in every if q["category"] == category][:8]]
    refs: dict[str, Event] = {}
    for pair in pairs:
        refs.setdefault(pair["a"], Event(f"h{len(refs)}", pair["a"], "", DAY, **_impact(rng)))
    forecasts = [
        [Event(f"f{j}", p["b"], "", DAY + dt.timedelta(days=j % 3)) for j, p in enumerate(pairs[start : start + 6])]
        for start in range(0, len(pairs), 6)
    ]
    return "benchmark", list(refs.values()), forecasts


def storyline_world() -> World:
    return "storyline", list(REFERENCE), [list(events) for events in GRAPHS.values()]


def numbers_world() -> World:
    """Prices, percentages and counts in every common form, the same figure written otherwise and a
    different one, and a title with a description that adds a sentence."""
    day = dt.date(2026, 4, 1)
    refs = [
        Event("gold", "Gold closes at US$4,644.56 per ounce", "Traders cite a weaker dollar.", day, 1.0, 1.0, True),
        Event("bonds", "Castmoor bonds fall as oil climbs to $1,234.56 a tonne", "", day, 0.8, 1.0, True),
        Event("toll", "The death toll from the floods rises to 1,400", "", day, 1.0, 0.8, True),
        Event("rate", "The central bank raises its main rate to 12.5%", "", day, 0.5, 1.0, True),
        Event("deal", "Solenne Energy agrees to buy Everin Aerospace in all-share deal", "", day, 1.0, 1.0, True),
        Event("gold2", "Gold closes higher at US$4,644.56 per ounce", "", day + dt.timedelta(days=3), 0.2, 1.0, True),
        Event("rally", "Gold rallies", "", day + dt.timedelta(days=1)),
    ]
    forecasts = [
        [
            Event("a", "Gold ends the day at $4,644.56 an ounce", "", day),
            Event("b", "Castmoor bonds fall as oil climbs to $1.234,56 a tonne", "", day),
            Event("c", "Flood deaths rise above 1400", "", day),
            Event("d", "The central bank raises its main rate to 2.5%", "", day),
        ],
        [
            Event("a", "Gold closes at US$4,644.56 per ounce", "Analysts expected a fall.", day),
            Event("b", "The flood death toll rises to fourteen hundred", "", day),
            Event("c", "The central bank lifts its key rate to 12.5 per cent", "", day),
            Event(
                "d",
                "Solenne Energy agrees to buy Everin Aerospace in all-share deal",
                "Solenne Energy and Everin Aerospace boards agreed terms.",
                day,
            ),
        ],
        [
            Event("a", "Everin Aerospace agrees to buy Solenne Energy in all-share deal", "", day),
            Event("b", "The central bank does not raise its main rate", "", day),
            Event("c", "Gold", "", day),
            Event("d", "Gold price", "", day),
        ],
        [
            Event("a", "Gold closes at US$4,644.56 per ounce", "", day),
            Event("b", "Gold closes at US$4,644.56 per ounce", "", day + dt.timedelta(days=3)),
        ],
    ]
    return "numbers", refs, forecasts


_WORDS: Final = (
    "budget", "parliament", "vote", "minister", "election", "bank", "rates", "inflation", "trade", "deal",
    "tariff", "sanctions", "ceasefire", "talks", "court", "ruling", "strike", "union", "oil", "prices",
    "shares", "troops", "treaty", "coalition", "leader", "resigns", "tax", "debt",
)  # fmt: skip


def _sentence(rng: random.Random, n: int) -> str:
    words: list[str] = []
    for i in range(n):
        if i and i % 2 == 0:
            words.append(rng.choice(("the", "of", "in", "to")))
        words.append(rng.choice(_WORDS))
    return " ".join(words).capitalize()


def crowded_world() -> World:
    """Sentences drawn from a few words (as the grading benchmark writes them), so that nearly every
    pair in the date window is a candidate: half the forecast events reorder a hindsight title."""
    rng = random.Random(14)
    start = dt.date(2026, 2, 1)
    refs = [
        Event(f"h{k}", _sentence(rng, 6), _sentence(rng, 10), start + dt.timedelta(days=3 * k), **_impact(rng))
        for k in range(12)
    ]
    forecasts: list[list[Event]] = []
    for _ in range(6):
        events = []
        for j in range(10):
            ref = rng.choice(refs)
            words = ref.title.split()
            rng.shuffle(words)
            title = " ".join(words[:5]) + " " + rng.choice(_WORDS) if j % 2 else _sentence(rng, 6)
            date = (ref.date or start) + dt.timedelta(days=rng.randint(-8, 8))
            events.append(Event(f"f{j}", title, _sentence(rng, 8) if j % 3 else "", date))
        forecasts.append(events)
    return "crowded", refs, forecasts


def worlds() -> list[World]:
    every = [real_pairs_world(), current_events_world(), benchmark_world(), storyline_world(), numbers_world()]
    return [*every, crowded_world()]


def grades(world: World, decision: str, *, facts: FactsStore | None = None) -> list[dict[str, Any]]:
    """Every grade of the world's forecasts under ``decision`` (parse facts read from ``facts`` first),
    as plain JSON values (floats exact)."""
    _, refs, forecasts = world
    question = QUESTION if world[0] == "storyline" else ""
    index = GuardedReferenceIndex(refs, question=question, decision=decision, facts=facts)
    # The settings are the same on every grade: left out.
    rows = [
        {k: v for k, v in dataclasses.asdict(score).items() if k != "settings"} for score in index.score_many(forecasts)
    ]
    return [json.loads(json.dumps(row)) for row in rows]


def all_grades(decisions: Sequence[str] = DECISIONS) -> dict[str, dict[str, list[dict[str, Any]]]]:
    every = worlds()
    return {decision: {world[0]: grades(world, decision) for world in every} for decision in decisions}


if __name__ == "__main__":
    EXPECTED.parent.mkdir(exist_ok=True)
    EXPECTED.write_text(json.dumps(all_grades(), sort_keys=True) + "\n", encoding="utf-8")
