"""A seeded generator of Hindsight's sample world: fictional, internally consistent, fully known.

Everything is invented: companies, people, regulators, outlets and the events. Countries have
invented names; each is tied to a real ISO 3166-1 alpha-3 code used only as a neutral identifier,
because relation questions and structured events must carry valid codes. Every question title ends
with "(fictional)", every outlet and market says so, and question records carry origin ``sample``
and the attribution ``Hindsight sample world (fictional)``.

The world is a set of *storylines*. Each has a hidden ground-truth causal event graph: dated events
with an impact on the outcome (direction, magnitude, confidence), causal links, and one outcome
event. The outcome of the storyline's question follows from the graph by a rule stated per kind:

* ``merger`` / ``launch`` (binary): yes when the causal pressure sum(d * m * c) over the events is
  positive (d = +1 for Positive, -1 for Negative).
* ``election`` (multiple choice): the candidate with the largest support, each event adding
  s * m * c to the candidate it concerns (s = +1 helps, -1 hurts).
* ``production`` (quantity): base * prod(1 + 0.12 * d * m) rounded to whole units.
* ``bridge`` (timeframe, month): planned opening shifted by sum(-d * round(4 m)) weeks; the opening
  day is the outcome event, its month the outcome.
* ``relations`` (MIRAI relation): the sign of the tension sum over CAMEO-coded events decides
  whether the relations on the target day are cooperative or conflictual; the gold answer is the
  set of codes of the target day's events.
* ``summit`` (open-ended): the gold events are the titles of the events after the question's
  cut-off; the background events are those before it.

News articles report the events on their dates (two or three outlets each, with headline
variants, a day's lag for some outlets, syndicated duplicates, undated entries and irrelevant
stories); markets on live storylines move with the causal pressure and settle on the outcome.

No Django imports: the generator is pure and deterministic for a given (size, seed, end).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sampleworld.stories import StorylineBuilder
from sampleworld.world import Storyline, World


def generate_world(*, size: str = "small", seed: int = 7, end: datetime) -> World:
    """The sample world of ``size`` (tiny | small | large) for ``seed``, ending just before ``end``.

    Same (size, seed, end) in, same world out. ``end`` is normally the real time of generation, so
    the whole world lies in the past and the fictional clock releases it step by step.
    """
    return StorylineBuilder(size=size, seed=seed, end=end).build()


def outcome_from_graph(story: Storyline) -> Any:
    """Recompute a storyline's outcome from its hidden graph alone (the rules of the module docstring)."""
    events = [e for e in story.events if not e.is_outcome]
    if story.kind in ("merger", "launch"):
        return sum(e.sign * e.magnitude * e.confidence for e in events) > 0
    if story.kind == "election":
        support: dict[str, float] = {}
        for e in events:
            cand, sign = e.target.rsplit(":", 1)
            support[cand] = support.get(cand, 0.0) + int(sign) * e.magnitude * e.confidence
        options = story.question["options"]
        return max(options, key=lambda c: (support.get(c, 0.0), -options.index(c)))
    if story.kind == "production":
        value = float(story.params["base"])
        for e in events:
            value *= 1 + 0.12 * e.sign * e.magnitude
        return float(round(value))
    if story.kind == "bridge":
        return f"{story.outcome_event.day:%Y-%m}"
    if story.kind == "relations":
        target = date.fromisoformat(story.question["target_date"])
        gold: dict[str, set[str]] = {}
        for e in events:
            if (
                e.cameo
                and e.day == target
                and e.cameo[0] == story.question["subject"]
                and e.cameo[1] == story.question["object"]
            ):
                gold.setdefault(e.cameo[2][:2], set()).add(e.cameo[2])
        return {"relations": {k: sorted(v) for k, v in sorted(gold.items())}}
    if story.kind == "summit":
        cutoff = datetime.fromisoformat(story.question["open_at"]).date()
        return [e.title for e in events if e.day >= cutoff]
    raise ValueError(f"unknown storyline kind {story.kind!r}")
