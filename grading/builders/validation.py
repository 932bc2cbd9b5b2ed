"""Validation of a model's graph answer (pure; no Django).

:func:`validate_graph_payload` turns the JSON a model returned into a :class:`GraphDraft` or a list
of problems, each naming the offending item and field, so the problems can be fed back to the
model as a correction. Checks: types, ranges (magnitude/confidence in [0, 1], strength in [-1, 1]),
Neutral impacts with magnitude <= 0.3, ISO dates inside the allowed window, unknown event and
article ids, duplicate ids and links, exactly one outcome event, and cycles (networkx).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from datetime import date
from typing import Any, TypeGuard, cast

import networkx as nx

from grading.builders.draft import (
    DIRECTIONS,
    EVENT_TYPES,
    NEUTRAL_MAX_MAGNITUDE,
    RELATIONS,
    DraftEvent,
    DraftImpact,
    DraftLink,
    GraphDraft,
)

TITLE_MIN_CHARS = 5
TITLE_MAX_CHARS = 500
KEY_MAX_CHARS = 50


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _ids(value: Any, where: str, known: Collection[int], problems: list[str]) -> tuple[int, ...]:
    if not isinstance(value, list):
        problems.append(f"{where}: must be a list of article ids.")
        return ()
    out: list[int] = []
    for item in value:
        if not isinstance(item, int) or isinstance(item, bool):
            problems.append(f"{where}: {item!r} is not an integer article id.")
        elif item not in known:
            problems.append(f"{where}: article id {item} is not one of the evidence articles you were given.")
        elif item not in out:
            out.append(item)
    return tuple(out)


def _impact(raw: Any, where: str, problems: list[str]) -> DraftImpact | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.append(f"{where}.impact: must be an object or null.")
        return None
    ok = True
    direction = raw.get("direction")
    if direction not in DIRECTIONS:
        problems.append(f"{where}.impact.direction: {direction!r} is not one of {', '.join(DIRECTIONS)}.")
        ok = False
    values: dict[str, float] = {}
    for name in ("magnitude", "confidence"):
        value = raw.get(name)
        if not _is_number(value):
            problems.append(f"{where}.impact.{name}: {value!r} is not a number.")
            ok = False
        elif not 0 <= value <= 1:
            problems.append(f"{where}.impact.{name}: {value} is outside [0, 1].")
            ok = False
        else:
            values[name] = float(value)
    if ok and direction == "Neutral" and values["magnitude"] > NEUTRAL_MAX_MAGNITUDE:
        problems.append(
            f"{where}.impact.magnitude: a Neutral impact has magnitude <= {NEUTRAL_MAX_MAGNITUDE}, "
            f"not {values['magnitude']}."
        )
        ok = False
    if not ok:
        return None
    return DraftImpact(direction=str(direction), magnitude=values["magnitude"], confidence=values["confidence"])


def _event(
    raw: Any, index: int, *, known_articles: Collection[int], earliest: date, latest: date, problems: list[str]
) -> DraftEvent | None:
    where = f"events[{index}]"
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be an object.")
        return None
    before = len(problems)
    key = raw.get("id")
    if not isinstance(key, str) or not key.strip() or len(key) > KEY_MAX_CHARS:
        problems.append(f"{where}.id: must be a non-empty string of at most {KEY_MAX_CHARS} characters.")
    else:
        where = f"events[{index}] ({key})"
    title = raw.get("title")
    if not isinstance(title, str) or not TITLE_MIN_CHARS <= len(title.strip()) <= TITLE_MAX_CHARS:
        problems.append(f"{where}.title: must be a string of {TITLE_MIN_CHARS}-{TITLE_MAX_CHARS} characters.")
    description = raw.get("description", "")
    if not isinstance(description, str):
        problems.append(f"{where}.description: must be a string.")
    occurred: date | None = None
    raw_date = raw.get("date")
    if not isinstance(raw_date, str):
        problems.append(f"{where}.date: must be an ISO date string YYYY-MM-DD.")
    else:
        try:
            occurred = date.fromisoformat(raw_date)
        except ValueError:
            problems.append(f"{where}.date: {raw_date!r} is not an ISO date YYYY-MM-DD.")
        if occurred is not None and not earliest <= occurred <= latest:
            problems.append(
                f"{where}.date: {occurred.isoformat()} is outside the allowed window "
                f"{earliest.isoformat()} to {latest.isoformat()}."
            )
    event_type = raw.get("type")
    if event_type not in EVENT_TYPES:
        problems.append(f"{where}.type: {event_type!r} is not one of {', '.join(EVENT_TYPES)}.")
    is_outcome = raw.get("is_outcome", False)
    if not isinstance(is_outcome, bool):
        problems.append(f"{where}.is_outcome: must be true or false.")
    sources = _ids(raw.get("source_ids", []), f"{where}.source_ids", known_articles, problems)
    impact = _impact(raw.get("impact"), where, problems)
    if is_outcome is True and raw.get("impact") is not None:
        problems.append(f"{where}.impact: the outcome event itself has no outcome impact; set it to null.")
    if len(problems) > before:
        return None
    assert isinstance(key, str) and isinstance(title, str) and occurred is not None
    return DraftEvent(
        key=key.strip(),
        title=title.strip(),
        description=description.strip(),
        occurred_on=occurred,
        event_type=str(event_type),
        is_outcome=is_outcome,
        source_ids=sources,
        impact=impact,
    )


def _link(
    raw: Any, index: int, *, event_keys: set[str], known_articles: Collection[int], problems: list[str]
) -> DraftLink | None:
    where = f"links[{index}]"
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be an object.")
        return None
    before = len(problems)
    ends: dict[str, str] = {}
    for end in ("source", "target"):
        value = raw.get(end)
        if not isinstance(value, str):
            problems.append(f"{where}.{end}: must be an event id string.")
        elif value not in event_keys:
            problems.append(f"{where}.{end}: {value!r} is not the id of an event in this graph.")
        else:
            ends[end] = value
    if len(ends) == 2 and ends["source"] == ends["target"]:
        problems.append(f"{where}: a link cannot join an event to itself ({ends['source']!r}).")
    relation = raw.get("relation")
    if relation not in RELATIONS:
        problems.append(f"{where}.relation: {relation!r} is not one of {', '.join(RELATIONS)}.")
    strength = raw.get("strength")
    if not _is_number(strength):
        problems.append(f"{where}.strength: {strength!r} is not a number.")
    elif not -1 <= strength <= 1:
        problems.append(f"{where}.strength: {strength} is outside [-1, 1].")
    confidence = raw.get("confidence")
    if not _is_number(confidence):
        problems.append(f"{where}.confidence: {confidence!r} is not a number.")
    elif not 0 <= confidence <= 1:
        problems.append(f"{where}.confidence: {confidence} is outside [0, 1].")
    reasoning = raw.get("reasoning", "")
    if not isinstance(reasoning, str):
        problems.append(f"{where}.reasoning: must be a string.")
    evidence = _ids(raw.get("evidence_ids", []), f"{where}.evidence_ids", known_articles, problems)
    if len(problems) > before:
        return None
    return DraftLink(
        source=ends["source"],
        target=ends["target"],
        relation=str(relation),
        strength=float(cast(float, strength)),
        confidence=float(cast(float, confidence)),
        reasoning=str(reasoning).strip(),
        evidence_ids=evidence,
    )


def find_cycle(events: Collection[str], links: Collection[tuple[str, str]]) -> list[str] | None:
    """The event ids along one directed cycle, or None when the links form a DAG."""
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(events)
    graph.add_edges_from(links)
    try:
        cycle = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return None
    return [edge[0] for edge in cycle] + [cycle[0][0]]


def validate_graph_payload(
    payload: Any,
    *,
    known_article_ids: Collection[int],
    earliest: date,
    latest: date,
    explanation: str = "",
) -> tuple[GraphDraft | None, list[str]]:
    """A valid draft and no problems, or None and every problem found (not just the first)."""
    problems: list[str] = []
    if not isinstance(payload, dict):
        return None, [f"The graph must be a JSON object with 'events' and 'links', not {type(payload).__name__}."]
    raw_events = payload.get("events")
    raw_links = payload.get("links", [])
    if not isinstance(raw_events, list) or not raw_events:
        problems.append("events: must be a non-empty list.")
        raw_events = []
    if not isinstance(raw_links, list):
        problems.append("links: must be a list.")
        raw_links = []
    known = set(known_article_ids)
    events: list[DraftEvent] = []
    seen_keys: set[str] = set()
    for index, raw in enumerate(raw_events):
        event = _event(raw, index, known_articles=known, earliest=earliest, latest=latest, problems=problems)
        if event is None:
            continue
        if event.key in seen_keys:
            problems.append(f"events[{index}].id: {event.key!r} is used by more than one event.")
            continue
        seen_keys.add(event.key)
        events.append(event)
    # Links are checked against every id the model declared, so one bad event does not cascade.
    declared: set[str] = {
        str(raw["id"]) for raw in raw_events if isinstance(raw, dict) and isinstance(raw.get("id"), str)
    }
    links: list[DraftLink] = []
    seen_links: set[tuple[str, str]] = set()
    for index, raw in enumerate(raw_links):
        link = _link(raw, index, event_keys={k.strip() for k in declared}, known_articles=known, problems=problems)
        if link is None:
            continue
        if (link.source, link.target) in seen_links:
            problems.append(f"links[{index}]: a second link from {link.source!r} to {link.target!r}.")
            continue
        seen_links.add((link.source, link.target))
        links.append(link)
    outcomes = [raw.get("id") for raw in raw_events if isinstance(raw, dict) and raw.get("is_outcome") is True]
    if raw_events and len(outcomes) != 1:
        problems.append(f"events: exactly one event must have is_outcome true; found {len(outcomes)}.")
    cycle = find_cycle(seen_keys, seen_links)
    if cycle is not None:
        problems.append(
            "links: the causal links form a cycle ("
            + " -> ".join(cycle)
            + "); causes must precede effects, so remove one link."
        )
    if problems:
        return None, problems
    text = payload.get("explanation", explanation)
    return GraphDraft(
        events=tuple(events), links=tuple(links), explanation=text if isinstance(text, str) else explanation
    ), []
