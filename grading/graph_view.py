"""What the drawn hindsight graph needs: nodes on a time axis, causal links, key events, and one
forecast's events with the matches its grade found (the overlay).

Pure data for ``static/hindsight/graph.js``; the page puts it in a ``json_script`` element.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from grading.scoring.matching import Event, select_key_events

RELATION_COLOURS = {
    "Causes": "#1f5fbf",
    "Triggers": "#c25e00",
    "Enables": "#1e7d34",
    "Amplifies": "#7b3fb5",
    "Prevents": "#b3261e",
    "Inhibits": "#d0457a",
    "Correlates": "#8a94a0",
}


def _day(value: Any) -> str | None:
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str) and len(value) >= 10:
        try:
            return date.fromisoformat(value[:10]).isoformat()
        except ValueError:
            return None
    return None


def key_event_ids(events: list[dict[str, Any]], top_k: int, about: str | None = None) -> set[int]:
    """Ids of the events the reasoning grade counts as key: the same selection grading makes
    (``about``: the question's title when the matcher chooses key events by relevance)."""
    if about is not None:
        about = " ".join([about, *(e["title"] for e in events if e.get("is_outcome") and not e["rejected"])])
    chosen = select_key_events(
        [
            Event(
                id=str(e["id"]),
                title=e["title"],
                description=e.get("description") or "",
                date=e["date"],
                magnitude=(e["impact"] or {}).get("magnitude"),
                confidence=(e["impact"] or {}).get("confidence"),
                has_impact=e["impact"] is not None,
                rejected=e["rejected"],
                is_outcome=bool(e.get("is_outcome")),
            )
            for e in events
        ],
        top_k,
        about=about,
    )
    return {int(e.id) for e in chosen}


def graph_payload(
    *,
    events: list[dict[str, Any]],
    links: list[dict[str, Any]],
    outcome_text: str,
    top_k: int,
    about: str | None = None,
) -> dict[str, Any]:
    keys = key_event_ids(events, top_k, about)
    nodes = [
        {
            "id": f"e{e['id']}",
            "key": e["key"],
            "title": (f"Outcome: {outcome_text}" if e["is_outcome"] and outcome_text else e["title"]),
            "date": e["date"].isoformat(),
            "type": e["type"],
            "outcome": e["is_outcome"],
            "rejected": e["rejected"],
            "key_event": e["id"] in keys,
            "direction": (e["impact"] or {}).get("direction", ""),
            "score": (e["impact"] or {}).get("score"),
        }
        for e in events
    ]
    ids = {e["key"]: f"e{e['id']}" for e in events}
    edges = [
        {
            "id": f"l{n}",
            "source": ids[link["source"]],
            "target": ids[link["target"]],
            "relation": link["relation"],
            "colour": RELATION_COLOURS.get(link["relation"], "#5b6470"),
            "strength": link["strength"],
            "confidence": link["confidence"],
        }
        for n, link in enumerate(links)
        if link["source"] in ids and link["target"] in ids
    ]
    return {"nodes": nodes, "edges": edges, "relations": RELATION_COLOURS, "overlay": None}


def forecast_overlay(*, forecast_graph: Any, grade_details: dict[str, Any], agent: str) -> dict[str, Any]:
    """The forecast's own events (those with a date) and its grade's matches to reference events."""
    raw = forecast_graph.get("events") if isinstance(forecast_graph, dict) else None
    events = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        day = _day(item.get("date") or item.get("time"))
        if day is None:
            continue
        events.append({"id": f"f{item.get('id')}", "title": str(item.get("title") or ""), "date": day})
    reasoning = grade_details.get("reasoning") or {}
    matches = [
        {"forecast": f"f{m[0]}", "reference": f"e{m[1]}", "score": m[2]}
        for m in reasoning.get("matches") or []
        if isinstance(m, list) and len(m) >= 3
    ]
    return {
        "agent": agent,
        "events": events,
        "matches": matches,
        "matched_key_events": [f"e{k}" for k in reasoning.get("matched_key_events") or []],
        "graded": bool(reasoning),
    }


def match_rows(
    *, forecast_graph: Any, grade_details: dict[str, Any], events: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The grade's verdict on each pair of a forecast event and a reference event it considered:
    "matched", or why the guarded matcher refused it ("negated", "opposite direction", "duplicate"
    ...). Grades of the other matchers carry only their matches, each "matched"."""
    raw = forecast_graph.get("events") if isinstance(forecast_graph, dict) else None
    forecast_titles = {
        str(item.get("id")): str(item.get("title") or "") for item in raw or [] if isinstance(item, dict)
    }
    reference_titles = {str(e["id"]): e["title"] for e in events}
    reference_keys = {str(e["id"]): e.get("key", e["id"]) for e in events}
    reasoning = grade_details.get("reasoning") or {}
    verdicts = reasoning.get("verdicts")
    if not isinstance(verdicts, list):
        verdicts = [[m[0], m[1], m[2], "matched"] for m in reasoning.get("matches") or [] if isinstance(m, list)]
    return [
        {
            "forecast": forecast_titles.get(str(v[0]), str(v[0])),
            "reference": reference_titles.get(str(v[1]), str(v[1])),
            "reference_key": reference_keys.get(str(v[1]), str(v[1])),
            "score": v[2],
            "verdict": str(v[3]),
        }
        for v in verdicts
        if isinstance(v, list) and len(v) >= 4
    ]
