"""Graph payloads in the LLM tool-call shape, shared by the validation, quality and LLM tests."""

from __future__ import annotations

import copy
from datetime import date, timedelta
from typing import Any


def valid_payload(article_ids: list[int], *, start: date = date(2026, 1, 4), events: int = 11) -> dict[str, Any]:
    """A graph meeting every B.3 threshold: a chain of ``events`` events into the outcome."""
    per_event = max(2, -(-20 // events))
    items: list[dict[str, Any]] = []
    for i in range(events):
        sources = [article_ids[(i * per_event + k) % len(article_ids)] for k in range(per_event)]
        items.append(
            {
                "id": f"ev{i + 1}",
                "title": f"Dated event number {i + 1} about the budget",
                "description": "Something that happened.",
                "date": (start + timedelta(days=4 * i)).isoformat(),
                "type": "Decision" if i % 2 else "Milestone",
                "is_outcome": False,
                "source_ids": sources,
                "impact": {"direction": "Positive", "magnitude": round(0.3 + 0.05 * i, 2), "confidence": 0.8},
            }
        )
    items.append(
        {
            "id": "outcome",
            "title": "The Senate approved the budget",
            "description": "The question resolved Yes.",
            "date": "2026-02-27",
            "type": "Outcome",
            "is_outcome": True,
            "source_ids": [article_ids[-1]],
            "impact": None,
        }
    )
    links = [
        {
            "source": items[i]["id"],
            "target": items[i + 1]["id"],
            "relation": "Causes",
            "strength": 0.6,
            "confidence": 0.8,
            "reasoning": "One led to the next.",
            "evidence_ids": [article_ids[0]],
        }
        for i in range(events)
    ]
    return {"events": items, "links": links}


def mutate(payload: dict[str, Any], fn: Any) -> dict[str, Any]:
    copied = copy.deepcopy(payload)
    fn(copied)
    return copied
