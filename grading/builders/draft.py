"""The in-memory shape of a hindsight graph before it is stored (pure; no Django).

Builders produce a :class:`GraphDraft`; validation and quality checks read it; the build service
writes it to the database in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

EVENT_TYPES = ("Decision", "Outcome", "Indicator", "Milestone", "ExternalShock")
RELATIONS = ("Causes", "Enables", "Prevents", "Inhibits", "Amplifies", "Triggers", "Correlates")
DIRECTIONS = ("Positive", "Negative", "Neutral", "Mixed")
NEUTRAL_MAX_MAGNITUDE = 0.3


@dataclass(frozen=True)
class DraftImpact:
    direction: str
    magnitude: float
    confidence: float

    @property
    def score(self) -> float:
        return self.magnitude * self.confidence


@dataclass(frozen=True)
class DraftEvent:
    key: str
    title: str
    description: str
    occurred_on: date
    event_type: str
    is_outcome: bool = False
    source_ids: tuple[int, ...] = ()
    impact: DraftImpact | None = None


@dataclass(frozen=True)
class DraftLink:
    source: str
    target: str
    relation: str
    strength: float
    confidence: float
    reasoning: str = ""
    evidence_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class GraphDraft:
    events: tuple[DraftEvent, ...]
    links: tuple[DraftLink, ...]
    explanation: str = ""
    notes: dict[str, Any] = field(default_factory=dict)

    def source_ids(self) -> set[int]:
        """Distinct articles behind the graph: event sources and link evidence."""
        ids: set[int] = set()
        for event in self.events:
            ids.update(event.source_ids)
        for link in self.links:
            ids.update(link.evidence_ids)
        return ids

    def outcome(self) -> DraftEvent | None:
        return next((e for e in self.events if e.is_outcome), None)

    def without_links(self, drop: set[tuple[str, str]]) -> GraphDraft:
        return replace(self, links=tuple(link for link in self.links if (link.source, link.target) not in drop))
