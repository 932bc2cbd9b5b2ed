"""The hindsight gold set (hindsight_gold/README.md) and how a built graph is scored against it.

Pure: no Django. A graph reaches the scorer as plain :class:`GraphEvent` rows (its non-outcome events,
each with the archive ids of its source articles and its direction), so any builder can be judged.

Per question:

* **recall**: the share of gold causes cited by at least one event (a merged event counts for all its
  sources);
* **precision**: the share of judged events that cite a gold cause. An event that cites none is judged
  wrong, unless every one of its sources is a ``related`` item (same storyline, not a cause): such an
  event is left out. An event citing only outcome items (the outcome reported as its own cause) is
  wrong, and counted apart as well;
* **strict precision**: the same over all events, the related-only ones counted wrong;
* **source precision**: the share of the events' distinct non-related sources that are gold causes
  (so that merging one gold item with noise does not hide the noise);
* **direction agreement**: over the gold causes found whose direction is not ``unclear``, the share
  whose every citing event has the gold direction (binary: Positive pushes towards Yes; other types:
  Positive pushes towards the resolved outcome). Neutral, Mixed or no direction never agree.

Pooled figures add the counts of the questions before dividing, so a question with many causes weighs
more than a thin one; a question without a graph has recall 0 and no events.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any, Final

__all__ = [
    "GOLD_DIR",
    "HALVES",
    "GoldCause",
    "GoldQuestion",
    "GraphEvent",
    "QuestionScore",
    "expected_direction",
    "gold_path",
    "load_gold",
    "pool",
    "score_graph",
]

GOLD_DIR: Final = Path(__file__).with_name("hindsight_gold")
HALVES: Final = ("dev", "heldout")
DIRECTIONS: Final = ("towards", "against", "unclear")
QUESTION_TYPES: Final = ("binary", "multiple_choice", "quantity", "timeframe", "open_ended")


def gold_path(half: str) -> Path:
    if half not in HALVES:
        raise ValueError(f"unknown half {half!r}: expected one of {', '.join(HALVES)}")
    return GOLD_DIR / f"{half}.jsonl"


@dataclass(frozen=True)
class GoldCause:
    id: str
    direction: str  # towards | against | unclear (relative to the outcome that happened)
    published_at: datetime


@dataclass(frozen=True)
class GoldQuestion:
    question: str
    type: str
    outcome: Any
    window_start: datetime
    window_end: datetime
    causes: tuple[GoldCause, ...]
    outcome_items: frozenset[str] = frozenset()
    related: frozenset[str] = frozenset()

    @property
    def cause_ids(self) -> frozenset[str]:
        return frozenset(c.id for c in self.causes)


@dataclass(frozen=True)
class GraphEvent:
    """One non-outcome event of a built graph: the archive ids of its sources and its direction
    (Positive, Negative, Neutral, Mixed, or None when it has no impact)."""

    key: str
    sources: frozenset[str]
    direction: str | None = None


def _when(value: Any, where: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"{where}: {value!r} is not an ISO 8601 time") from exc
    if parsed.tzinfo is None:
        raise ValueError(f"{where}: {value!r} has no time zone")
    return parsed


def _question(row: Any, where: str) -> GoldQuestion:
    if not isinstance(row, dict):
        raise ValueError(f"{where}: not a JSON object")
    for name in ("question", "type", "window", "causes"):
        if name not in row:
            raise ValueError(f"{where}: missing {name!r}")
    if row["type"] not in QUESTION_TYPES:
        raise ValueError(f"{where}: unknown question type {row['type']!r}")
    window = row["window"]
    if not isinstance(window, dict) or "start" not in window or "end" not in window:
        raise ValueError(f"{where}: window needs start and end")
    start, end = _when(window["start"], f"{where} window.start"), _when(window["end"], f"{where} window.end")
    causes: list[GoldCause] = []
    for n, cause in enumerate(row["causes"]):
        at = f"{where} cause {n}"
        if not isinstance(cause, dict) or not cause.get("id"):
            raise ValueError(f"{at}: needs an id")
        if cause.get("direction") not in DIRECTIONS:
            raise ValueError(f"{at} ({cause['id']}): direction must be one of {', '.join(DIRECTIONS)}")
        published = _when(cause.get("published_at"), f"{at} ({cause['id']}) published_at")
        if not start <= published <= end:
            raise ValueError(f"{at} ({cause['id']}): published {cause['published_at']}, outside the window")
        causes.append(GoldCause(id=str(cause["id"]), direction=cause["direction"], published_at=published))
    ids = [c.id for c in causes]
    outcome_items = frozenset(map(str, row.get("outcome_items", [])))
    related = frozenset(map(str, row.get("related", [])))
    if len(set(ids)) != len(ids):
        raise ValueError(f"{where}: a cause is listed twice")
    if overlap := (set(ids) & outcome_items) | (set(ids) & related) | (outcome_items & related):
        raise ValueError(f"{where}: {sorted(overlap)[0]} is in more than one of causes, outcome_items, related")
    return GoldQuestion(
        question=str(row["question"]),
        type=row["type"],
        outcome=row.get("outcome"),
        window_start=start,
        window_end=end,
        causes=tuple(causes),
        outcome_items=outcome_items,
        related=related,
    )


def load_gold(path: Path) -> list[GoldQuestion]:
    """The gold questions of a JSON Lines file; a malformed line raises ``ValueError`` naming it."""
    questions: list[GoldQuestion] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name} line {number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON ({exc.msg})") from exc
        question = _question(row, where)
        if question.question in seen:
            raise ValueError(f"{where}: question {question.question} appears twice")
        seen.add(question.question)
        questions.append(question)
    return questions


def expected_direction(question: GoldQuestion, cause: GoldCause) -> str | None:
    """The graph direction a careful reader expects of the cause: Positive or Negative (None: unclear)."""
    if cause.direction == "unclear":
        return None
    towards = cause.direction == "towards"
    if question.type == "binary" and question.outcome is False:
        towards = not towards  # Positive means towards Yes, and the outcome was No
    return "Positive" if towards else "Negative"


@dataclass(frozen=True)
class QuestionScore:
    question: str
    causes: int
    found: int = 0
    events: int = 0
    hits: int = 0
    related_only: int = 0
    outcome_as_cause: int = 0
    sources: int = 0  # distinct non-related sources of the events
    gold_sources: int = 0
    direction_checked: int = 0
    direction_agreed: int = 0
    found_ids: tuple[str, ...] = field(default=(), repr=False)

    @property
    def judged(self) -> int:
        return self.events - self.related_only

    @property
    def recall(self) -> float | None:
        return _ratio(self.found, self.causes)

    @property
    def precision(self) -> float | None:
        return _ratio(self.hits, self.judged)

    @property
    def strict_precision(self) -> float | None:
        return _ratio(self.hits, self.events)

    @property
    def source_precision(self) -> float | None:
        return _ratio(self.gold_sources, self.sources)

    @property
    def direction_agreement(self) -> float | None:
        return _ratio(self.direction_agreed, self.direction_checked)

    def figures(self) -> dict[str, Any]:
        return {
            "causes": self.causes,
            "found": self.found,
            "recall": _round(self.recall),
            "events": self.events,
            "hits": self.hits,
            "related_only": self.related_only,
            "outcome_as_cause": self.outcome_as_cause,
            "precision": _round(self.precision),
            "strict_precision": _round(self.strict_precision),
            "sources": self.sources,
            "gold_sources": self.gold_sources,
            "source_precision": _round(self.source_precision),
            "direction_checked": self.direction_checked,
            "direction_agreed": self.direction_agreed,
            "direction_agreement": _round(self.direction_agreement),
        }


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def score_graph(question: GoldQuestion, events: Sequence[GraphEvent] | None) -> QuestionScore:
    """Score a graph's non-outcome events against the question's gold (None: no graph was built)."""
    if not events:
        return QuestionScore(question=question.question, causes=len(question.causes))
    gold = question.cause_ids
    citing: dict[str, list[GraphEvent]] = {}
    hits = related_only = outcome_as_cause = 0
    sources: set[str] = set()
    for event in events:
        cited = event.sources & gold
        for item in cited:
            citing.setdefault(item, []).append(event)
        sources |= event.sources - question.related
        if cited:
            hits += 1
        elif event.sources and event.sources <= question.related:
            related_only += 1
        elif event.sources & question.outcome_items:
            outcome_as_cause += 1
    checked = agreed = 0
    for cause in question.causes:
        expected = expected_direction(question, cause)
        if cause.id not in citing or expected is None:
            continue
        checked += 1
        agreed += all(event.direction == expected for event in citing[cause.id])
    return QuestionScore(
        question=question.question,
        causes=len(question.causes),
        found=len(citing),
        events=len(events),
        hits=hits,
        related_only=related_only,
        outcome_as_cause=outcome_as_cause,
        sources=len(sources),
        gold_sources=len(sources & gold),
        direction_checked=checked,
        direction_agreed=agreed,
        found_ids=tuple(sorted(citing)),
    )


def pool(scores: Iterable[QuestionScore]) -> dict[str, Any]:
    """The pooled figures of several questions (counts added, then divided), and mean recall."""
    rows = list(scores)
    counts = {f.name: sum(getattr(s, f.name) for s in rows) for f in fields(QuestionScore) if f.type == "int"}
    total = QuestionScore(question="pooled", **counts)
    recalls = [s.recall for s in rows if s.recall is not None]
    return {
        "questions": len(rows),
        **total.figures(),
        "mean_recall": _round(sum(recalls) / len(recalls)) if recalls else None,
    }
