"""The forecast graph of a forecast body, declared as DRF serializers: events (id, title,
description, date) and the causal edges between them (source, target, relation, strength,
confidence).

Every problem is reported at once under its field path (``graph.events[3].date``,
``graph.edges[2].target``), with the messages of ``leaderboard.services.forecast_fields``. Each
part is checked on its own; the graph then checks what spans parts: event ids are unique, edges
name events of the graph, no edge is given twice and the edges form no cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any, ClassVar, Final

import networkx as nx
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.settings import api_settings

from grading.builders.draft import RELATIONS
from leaderboard.services.forecast_fields import (
    MAX_EVENTS,
    MAX_TEXT_CHARS,
    MAX_TITLE_CHARS,
    FieldErrors,
    describe,
    number,
    probability,
    text,
)

MAX_EDGES: Final = 2000
MAX_EVENT_ID_CHARS: Final = 200
_RELATIONS_BY_LOWER: Final = {r.lower(): r for r in RELATIONS}
_GRAPH_SHAPE: Final = '{"events": [...], "edges": [...]}'

Errors = dict[str, list[str]]


def parse_iso8601(value: Any) -> date | datetime:
    """A date (``YYYY-MM-DD``) or date-time in ISO 8601; ValueError otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be an ISO 8601 date (YYYY-MM-DD) or date-time")
    stripped = value.strip()
    try:
        if len(stripped) == 10:
            return date.fromisoformat(stripped)
        return datetime.fromisoformat(stripped)
    except ValueError:
        raise ValueError(f"must be an ISO 8601 date (YYYY-MM-DD) or date-time, got {stripped[:40]!r}") from None


def _checked(check: Callable[..., Any], value: Any, **options: Any) -> Any:
    """Run a ``forecast_fields`` check as a DRF field validation."""
    errors = FieldErrors()
    clean = check(value, "", errors, **options)
    if errors:
        raise serializers.ValidationError(errors.by_field[""])
    return clean


def event_id(value: Any) -> str | None:
    """An event id as the graph keys it (integers as text), or None when it is not one."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip() and len(value.strip()) <= MAX_EVENT_ID_CHARS:
        return value.strip()
    return None


# ------------------------------------------------------------------------------------ fields


class _GivenField(serializers.Field):
    """A field that checks the value as given: a missing key reads as null, and the messages say
    what was wrong with it (DRF's generic ones would not name the value)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, allow_null=True, **kwargs)

    def run_validation(self, data: Any = empty) -> Any:
        return self.to_internal_value(None if data is empty else data)

    def to_representation(self, value: Any) -> Any:
        return value


class TextField(_GivenField):
    def __init__(self, *, max_chars: int, required_text: bool) -> None:
        super().__init__()
        self.max_chars, self.required_text = max_chars, required_text

    def to_internal_value(self, data: Any) -> str | None:
        return _checked(text, data, max_chars=self.max_chars, required=self.required_text)  # type: ignore[no-any-return]


class EventIdField(_GivenField):
    def to_internal_value(self, data: Any) -> str:
        found = event_id(data)
        if found is None:
            raise serializers.ValidationError(f"must be a non-empty text or integer id, got {describe(data)}")
        return found


class IsoDateField(_GivenField):
    def run_validation(self, data: Any = empty) -> Any:
        if data is empty:
            raise serializers.ValidationError("is required (ISO 8601 date, e.g. 2026-03-01)")
        return self.to_internal_value(data)

    def to_internal_value(self, data: Any) -> str:
        try:
            return parse_iso8601(data).isoformat()
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None


class EventRefField(_GivenField):
    """An edge's end: the id of an event of the same graph (``ForecastGraphSerializer.event_ids``)."""

    def to_internal_value(self, data: Any) -> str:
        key = str(data).strip() if isinstance(data, str | int) and not isinstance(data, bool) else None
        if key is None or key not in getattr(self.root, "event_ids", ()):
            raise serializers.ValidationError(f"names no event of this graph: {data!r}")
        return key


class RelationField(_GivenField):
    def to_internal_value(self, data: Any) -> str:
        canonical = _RELATIONS_BY_LOWER.get(data.strip().lower()) if isinstance(data, str) else None
        if canonical is None:
            raise serializers.ValidationError(f"must be a relation type, one of {', '.join(RELATIONS)}; got {data!r}")
        return canonical


class StrengthField(_GivenField):
    def to_internal_value(self, data: Any) -> float | None:
        if data is None:
            return None
        strength: float = _checked(number, data)
        if not -1.0 <= strength <= 1.0:
            raise serializers.ValidationError(f"must be between -1 and 1, got {strength:g}")
        return strength


class ConfidenceField(_GivenField):
    def to_internal_value(self, data: Any) -> float | None:
        return None if data is None else _checked(probability, data)  # type: ignore[no-any-return]


class PartsField(serializers.ListField):
    """A list of graph parts, at most ``max_parts``; when the list itself is wrong its items are not
    looked at."""

    def __init__(self, *, noun: str, max_parts: int, **kwargs: Any) -> None:
        super().__init__(required=False, **kwargs)
        self.noun, self.max_parts = noun, max_parts

    def run_validation(self, data: Any = empty) -> Any:
        return self.to_internal_value([] if data is empty else data)

    def to_internal_value(self, data: Any) -> list[Any]:
        if not isinstance(data, list):
            raise serializers.ValidationError(f"must be a list of {self.noun}, got {describe(data)}")
        if len(data) > self.max_parts:
            raise serializers.ValidationError(f"has {len(data)} {self.noun}; at most {self.max_parts} are allowed")
        return super().to_internal_value(data)  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------ parts


class GraphPartSerializer(serializers.Serializer):
    """An object with exactly the declared keys (``keys`` lists them in messages)."""

    keys: ClassVar[str]
    not_an_object: ClassVar[str] = "must be an object with {keys}; got {got}"

    def run_validation(self, data: Any = empty) -> Any:
        return self.to_internal_value(data)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise serializers.ValidationError(self.not_an_object.format(keys=self.keys, got=describe(data)))
        unknown = {key: [f"is not a known key; expected {self.keys}"] for key in data if key not in self.fields}
        try:
            clean = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            assert isinstance(exc.detail, dict)
            raise serializers.ValidationError({**unknown, **exc.detail}) from None
        if unknown:
            raise serializers.ValidationError(unknown)
        return dict(clean)


class GraphEventSerializer(GraphPartSerializer):
    keys = "id, title, description, date"

    id = EventIdField()
    title = TextField(max_chars=MAX_TITLE_CHARS, required_text=True)
    description = TextField(max_chars=MAX_TEXT_CHARS, required_text=False)
    date = IsoDateField()


class GraphEdgeSerializer(GraphPartSerializer):
    keys = "source, target, relation, strength, confidence"

    source = EventRefField()  # type: ignore[assignment]
    target = EventRefField()
    relation = RelationField()
    strength = StrengthField()
    confidence = ConfidenceField()


class ForecastGraphSerializer(GraphPartSerializer):
    keys = _GRAPH_SHAPE
    not_an_object = "must be an object {keys}, got {got}"

    event_ids: set[str] = set()  # of this graph's events, set before its edges are checked
    events = PartsField(noun="events", max_parts=MAX_EVENTS, child=GraphEventSerializer())
    edges = PartsField(noun="edges", max_parts=MAX_EDGES, child=GraphEdgeSerializer())

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        events = data.get("events", []) if isinstance(data, Mapping) else []
        ids = _event_ids(events)
        self.event_ids = {found for _, found in ids}
        errors: Errors = {}
        clean: dict[str, Any] = {}
        try:
            clean = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            _flatten(exc.detail, "graph", errors)
        seen: set[str] = set()
        for i, found in ids:
            if found in seen:
                errors.setdefault(f"graph.events[{i}].id", []).append(
                    f"repeats {found!r}, the id of an earlier event: ids must be unique"
                )
            seen.add(found)
        edges = data.get("edges", []) if isinstance(data, Mapping) else []
        _check_edge_pairs(edges if isinstance(edges, list) and len(edges) <= MAX_EDGES else [], ids, errors)
        if errors:
            raise serializers.ValidationError(errors)
        return clean


def _event_ids(events: Any) -> list[tuple[int, str]]:
    """(index, id) of the events with a valid id, when the event list itself is valid."""
    if not isinstance(events, list) or len(events) > MAX_EVENTS:
        return []
    return [(i, found) for i, e in enumerate(events) if isinstance(e, Mapping) and (found := event_id(e.get("id")))]


def _check_edge_pairs(edges: list[Any], ids: list[tuple[int, str]], errors: Errors) -> None:
    """No edge given twice; no cycle (named by networkx, only for a graph that has one)."""
    known = {found for _, found in ids}
    pairs: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for i, edge in enumerate(edges):
        if not isinstance(edge, Mapping):
            continue
        ends = [
            str(raw).strip() if isinstance(raw, str | int) and not isinstance(raw, bool) else None
            for raw in (edge.get("source"), edge.get("target"))
        ]
        source, target = ends
        if source in known and target in known:
            assert source is not None and target is not None
            if (source, target) in seen:
                errors.setdefault(f"graph.edges[{i}]", []).append(f"repeats the edge {source!r} -> {target!r}")
            seen.add((source, target))
            pairs.append((source, target))
    if pairs and not _acyclic(pairs):
        digraph = nx.DiGraph()
        digraph.add_edges_from(pairs)
        cycle = nx.find_cycle(digraph)
        path = " -> ".join([str(u) for u, _ in cycle] + [str(cycle[0][0])])
        errors.setdefault("graph.edges", []).append(f"must not form a cycle: {path}")


def _acyclic(edges: list[tuple[str, str]]) -> bool:
    """Kahn's algorithm: whether every node can be removed in topological order."""
    indegree: dict[str, int] = {}
    successors: dict[str, list[str]] = {}
    for source, target in edges:
        successors.setdefault(source, []).append(target)
        indegree.setdefault(source, 0)
        indegree[target] = indegree.get(target, 0) + 1
    ready = [node for node, degree in indegree.items() if degree == 0]
    removed = 0
    while ready:
        node = ready.pop()
        removed += 1
        for nxt in successors.get(node, ()):
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    return removed == len(indegree)


def _flatten(detail: Any, path: str, errors: Errors) -> None:
    """DRF's nested error detail as messages by field path (``graph.edges[2].target``)."""
    if isinstance(detail, Mapping):
        for key, inner in detail.items():
            if key == api_settings.NON_FIELD_ERRORS_KEY:
                _flatten(inner, path, errors)
            elif isinstance(key, int):
                _flatten(inner, f"{path}[{key}]", errors)
            else:
                _flatten(inner, f"{path}.{key}", errors)
    elif isinstance(detail, list):
        for inner in detail:
            _flatten(inner, path, errors)
    else:
        errors.setdefault(path, []).append(str(detail))


def validate_graph(*, graph: Any, errors: FieldErrors | None = None) -> dict[str, Any] | None:
    """The normalised forecast graph, or None when none was given; raises ValidationError unless
    ``errors`` collects."""
    own = errors is None
    errs = errors if errors is not None else FieldErrors()
    result: dict[str, Any] | None = None
    if graph is not None and graph != {}:
        serializer = ForecastGraphSerializer(data=graph)
        if serializer.is_valid():
            result = {"events": serializer.validated_data["events"], "edges": serializer.validated_data["edges"]}
        else:  # the graph serializer reports its errors by field path already
            for path, messages in serializer.errors.items():
                for message in messages:
                    errs.add(path, str(message))
    if own:
        errs.raise_if_any()
    return result
