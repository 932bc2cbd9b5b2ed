"""Validation and normalisation of a forecast body (prediction, sources, rationale, graph).

Shared by the API and the web form so both give the same messages. Every problem is collected
and raised at once as a django ``ValidationError`` whose ``message_dict`` maps a field path to
its messages, e.g. ``prediction.probabilities.Yes``, ``sources[3]``, ``graph.edges[2].target``.

Prediction shapes by question type (docs/design.md, Questions):

- binary: ``{"probability": p}``, p a number in [0, 1]
- multiple_choice: ``{"probabilities": {OPTION: p, ...}}`` covering every option, summing to 1 (±1e-6)
- quantity: ``{"value": x}`` | ``{"interval": [lo, hi]}`` (lo <= hi) |
  ``{"quantiles": {"0.1": x, ...}}`` (levels in (0, 1), values non-decreasing with the level);
  numbers must lie within the question's bounds when it has them
- timeframe: ``{"period": TEXT}`` at the question's granularity (see ``ingestion.periods``)
- relation: ``{"relations": {"04": ["042", "043"], ...}}``, CAMEO codes of ``ingestion.reference_data``
- open_ended: ``{"events": [TEXT, ...]}`` (1..50 non-empty strings) or ``{"answer": TEXT}``
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from itertools import pairwise
from typing import Any, Final

import networkx as nx
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from ingestion.canonical import InvalidURL, canonical_url
from ingestion.models import Article, Question
from ingestion.periods import parse_period
from ingestion.reference_data import cameo_children, cameo_parent

MAX_EVENTS: Final = 50
MAX_SOURCES: Final = 200
MAX_EDGES: Final = 2000
MAX_RATIONALE_CHARS: Final = 20_000
MAX_TITLE_CHARS: Final = 1_000
MAX_TEXT_CHARS: Final = 10_000
MAX_URL_CHARS: Final = 2_000
PROBABILITY_SUM_TOLERANCE: Final = 1e-6
RELATIONS: Final = ("Causes", "Enables", "Prevents", "Inhibits", "Amplifies", "Triggers", "Correlates")
_RELATIONS_BY_LOWER: Final = {r.lower(): r for r in RELATIONS}
_DIGITS = re.compile(r"\d{1,18}")
_url_validator = URLValidator(schemes=["http", "https"])


class _Errors:
    def __init__(self) -> None:
        self.by_field: dict[str, list[str]] = {}

    def add(self, field: str, message: str) -> None:
        self.by_field.setdefault(field, []).append(message)

    def __bool__(self) -> bool:
        return bool(self.by_field)

    def raise_if_any(self) -> None:
        if self.by_field:
            raise ValidationError(self.by_field)


def _number(value: Any, field: str, errors: _Errors) -> float | None:
    """A finite number; bools and numeric strings are refused so a typo is never guessed at."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        errors.add(field, f"must be a number, got {_describe(value)}")
        return None
    try:
        number = float(value)
    except OverflowError:
        errors.add(field, "is too large")
        return None
    if not math.isfinite(number):
        errors.add(field, "must be a finite number (not NaN or infinity)")
        return None
    return number


def _probability(value: Any, field: str, errors: _Errors) -> float | None:
    p = _number(value, field, errors)
    if p is not None and not 0.0 <= p <= 1.0:
        errors.add(field, f"must be a probability between 0 and 1, got {p:g}")
        return None
    return p


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _text(value: Any, field: str, errors: _Errors, *, max_chars: int, required: bool) -> str | None:
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        errors.add(field, f"must be text, got {_describe(value)}")
        return None
    text = value.strip()
    if required and not text:
        errors.add(field, "must not be empty")
        return None
    if len(text) > max_chars:
        errors.add(field, f"is too long ({len(text)} characters; at most {max_chars})")
        return None
    return text


def _only_keys(data: dict[str, Any], allowed: Iterable[str], field: str, errors: _Errors, shape: str) -> None:
    allowed = set(allowed)
    for key in data:
        if key not in allowed:
            errors.add(f"{field}.{key}", f"unknown key; expected {shape}")


# ---------------------------------------------------------------------------------------------
# Predictions by type
# ---------------------------------------------------------------------------------------------

_SHAPES: Final[dict[str, str]] = {
    Question.Type.BINARY: '{"probability": p}',
    Question.Type.MULTIPLE_CHOICE: '{"probabilities": {OPTION: p, ...}}',
    Question.Type.QUANTITY: '{"value": x} or {"interval": [lo, hi]} or {"quantiles": {"0.1": x, ...}}',
    Question.Type.TIMEFRAME: '{"period": "..."}',
    Question.Type.RELATION: '{"relations": {"04": ["042", ...], ...}}',
    Question.Type.OPEN_ENDED: '{"events": ["...", ...]} or {"answer": "..."}',
}


def question_options(question: Question) -> list[str]:
    """The multiple-choice option labels, in the question's order."""
    labels: list[str] = []
    for option in question.options or []:
        if isinstance(option, dict):
            option = option.get("label", option.get("name", ""))
        labels.append(str(option))
    return labels


def _binary(data: dict[str, Any], errors: _Errors) -> dict[str, Any]:
    _only_keys(data, ["probability"], "prediction", errors, _SHAPES[Question.Type.BINARY])
    if "probability" not in data:
        errors.add("prediction.probability", "is required")
        return {}
    p = _probability(data["probability"], "prediction.probability", errors)
    return {"probability": p}


def _multiple_choice(question: Question, data: dict[str, Any], errors: _Errors) -> dict[str, Any]:
    _only_keys(data, ["probabilities"], "prediction", errors, _SHAPES[Question.Type.MULTIPLE_CHOICE])
    vector = data.get("probabilities")
    if not isinstance(vector, dict):
        errors.add(
            "prediction.probabilities",
            f"must be an object mapping each option to a probability, got {_describe(vector)}",
        )
        return {}
    options = question_options(question)
    clean: dict[str, float] = {}
    ok = True
    for key, value in vector.items():
        if key not in options:
            errors.add(f"prediction.probabilities.{key}", f"unknown option {key!r}; the options are {options}")
            ok = False
            continue
        p = _probability(value, f"prediction.probabilities.{key}", errors)
        if p is None:
            ok = False
        else:
            clean[key] = p
    for option in options:
        if option not in vector:
            errors.add(f"prediction.probabilities.{option}", f"missing: every option needs a probability ({option!r})")
            ok = False
    if ok:
        total = math.fsum(clean.values())
        if abs(total - 1.0) > PROBABILITY_SUM_TOLERANCE:
            errors.add("prediction.probabilities", f"must sum to 1 (±{PROBABILITY_SUM_TOLERANCE:g}), got {total:.9g}")
    return {"probabilities": {option: clean.get(option) for option in options}}


def _in_bounds(question: Question, x: float, field: str, errors: _Errors) -> None:
    lo, hi = question.lower_bound, question.upper_bound
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        errors.add(
            field,
            f"{x:g} is outside the question's bounds [{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]",
        )


def _quantity(question: Question, data: dict[str, Any], errors: _Errors) -> dict[str, Any]:
    shape = _SHAPES[Question.Type.QUANTITY]
    kinds = [k for k in ("value", "interval", "quantiles") if k in data]
    _only_keys(data, ["value", "interval", "quantiles"], "prediction", errors, shape)
    if len(kinds) != 1:
        errors.add("prediction", f"give exactly one of value, interval or quantiles: {shape}")
        return {}
    kind = kinds[0]
    field = f"prediction.{kind}"
    raw = data[kind]
    if kind == "value":
        x = _number(raw, field, errors)
        if x is not None:
            _in_bounds(question, x, field, errors)
        return {"value": x}
    if kind == "interval":
        if not isinstance(raw, list) or len(raw) != 2:
            errors.add(field, f"must be a list [lo, hi] of two numbers, got {_describe(raw)}")
            return {}
        lo = _number(raw[0], f"{field}[0]", errors)
        hi = _number(raw[1], f"{field}[1]", errors)
        if lo is not None and hi is not None:
            if lo > hi:
                errors.add(field, f"lower end {lo:g} is above upper end {hi:g} (need lo <= hi)")
            _in_bounds(question, lo, f"{field}[0]", errors)
            _in_bounds(question, hi, f"{field}[1]", errors)
        return {"interval": [lo, hi]}
    if not isinstance(raw, dict) or not raw:
        errors.add(field, f'must be a non-empty object like {{"0.1": x, "0.5": y, "0.9": z}}, got {_describe(raw)}')
        return {}
    levels: dict[float, float] = {}
    for key, value in raw.items():
        item = f"{field}.{key}"
        try:
            q = float(key)
        except (TypeError, ValueError):
            errors.add(item, f"quantile level {key!r} is not a number")
            continue
        if not (math.isfinite(q) and 0.0 < q < 1.0):
            errors.add(item, f"quantile level {key!r} must be strictly between 0 and 1")
            continue
        if q in levels:
            errors.add(item, f"quantile level {key!r} is given twice")
            continue
        x = _number(value, item, errors)
        if x is not None:
            _in_bounds(question, x, item, errors)
            levels[q] = x
    ordered = sorted(levels.items())
    for (q1, x1), (q2, x2) in pairwise(ordered):
        if x2 < x1:
            errors.add(field, f"values must not decrease with the level: q{q1:g}={x1:g} is above q{q2:g}={x2:g}")
    return {"quantiles": {f"{q:g}": x for q, x in ordered}}


def _timeframe(question: Question, data: dict[str, Any], errors: _Errors) -> dict[str, Any]:
    _only_keys(data, ["period"], "prediction", errors, _SHAPES[Question.Type.TIMEFRAME])
    if "period" not in data:
        errors.add("prediction.period", "is required")
        return {}
    if not question.granularity:
        errors.add("prediction.period", "this question has no granularity set; it cannot take forecasts")
        return {}
    try:
        period = parse_period(question.granularity, data["period"])
    except ValueError as exc:
        errors.add("prediction.period", str(exc))
        return {}
    return {"period": period.label}


def _relation(data: dict[str, Any], errors: _Errors) -> dict[str, Any]:
    _only_keys(data, ["relations"], "prediction", errors, _SHAPES[Question.Type.RELATION])
    relations = data.get("relations")
    if not isinstance(relations, dict):
        errors.add(
            "prediction.relations",
            f"must be an object of first-level CAMEO code -> list of second-level codes, got {_describe(relations)}",
        )
        return {}
    children = cameo_children()
    clean: dict[str, list[str]] = {}
    for parent, codes in relations.items():
        field = f"prediction.relations.{parent}"
        if parent not in children:
            errors.add(field, f"unknown first-level CAMEO code {parent!r} (expected '01'..'20')")
            continue
        if not isinstance(codes, list):
            errors.add(field, f"must be a list of second-level CAMEO codes, got {_describe(codes)}")
            continue
        kept: set[str] = set()
        for i, code in enumerate(codes):
            item = f"{field}[{i}]"
            if not isinstance(code, str):
                errors.add(item, f"CAMEO codes are strings like '042', got {_describe(code)}")
            elif code in children[parent]:
                kept.add(code)
            elif cameo_parent(code) is not None:
                errors.add(item, f"CAMEO code {code!r} is not under {parent!r}; it belongs to {cameo_parent(code)!r}")
            else:
                errors.add(item, f"unknown CAMEO code {code!r}")
        clean[parent] = sorted(kept)
    return {"relations": dict(sorted(clean.items()))}


def _open_ended(data: dict[str, Any], errors: _Errors) -> dict[str, Any]:
    shape = _SHAPES[Question.Type.OPEN_ENDED]
    _only_keys(data, ["events", "answer"], "prediction", errors, shape)
    if ("events" in data) == ("answer" in data):
        errors.add("prediction", f"give exactly one of events or answer: {shape}")
        return {}
    if "answer" in data:
        return {
            "answer": _text(data["answer"], "prediction.answer", errors, max_chars=MAX_RATIONALE_CHARS, required=True)
        }
    events = data["events"]
    if not isinstance(events, list) or not events:
        errors.add("prediction.events", f"must be a non-empty list of event descriptions, got {_describe(events)}")
        return {}
    if len(events) > MAX_EVENTS:
        errors.add("prediction.events", f"has {len(events)} events; at most {MAX_EVENTS} are allowed")
        return {}
    clean = [
        _text(e, f"prediction.events[{i}]", errors, max_chars=MAX_TEXT_CHARS, required=True)
        for i, e in enumerate(events)
    ]
    return {"events": clean}


def validate_prediction(*, question: Question, prediction: Any, errors: _Errors | None = None) -> dict[str, Any]:
    """The normalised prediction for ``question``; raises ValidationError unless ``errors`` collects."""
    own = errors is None
    errs = errors if errors is not None else _Errors()
    clean: dict[str, Any] = {}
    if not isinstance(prediction, dict):
        errs.add(
            "prediction", f"must be an object shaped {_SHAPES.get(question.type, '{...}')}, got {_describe(prediction)}"
        )
    elif question.type == Question.Type.BINARY:
        clean = _binary(prediction, errs)
    elif question.type == Question.Type.MULTIPLE_CHOICE:
        clean = _multiple_choice(question, prediction, errs)
    elif question.type == Question.Type.QUANTITY:
        clean = _quantity(question, prediction, errs)
    elif question.type == Question.Type.TIMEFRAME:
        clean = _timeframe(question, prediction, errs)
    elif question.type == Question.Type.RELATION:
        clean = _relation(prediction, errs)
    elif question.type == Question.Type.OPEN_ENDED:
        clean = _open_ended(prediction, errs)
    else:
        errs.add("question", f"question type {question.type!r} does not take forecasts")
    if own:
        errs.raise_if_any()
    return clean


# ---------------------------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def url_variants(url: str) -> tuple[str, ...]:
    """The URL as given and the canonical form under which ingestion stores articles."""
    try:
        canonical = canonical_url(url)
    except InvalidURL:
        return (url,)
    return tuple(dict.fromkeys([url, canonical]))


class ArticleResolver:
    """Maps cited article ids and URLs to Article rows; batch callers prefetch all items in two queries.

    With ``defer_urls`` the resolver never looks URLs up (``article_for_url`` answers None): a caller
    that links URLs to articles inside its own INSERT saves that round trip. Cited ids are still
    checked, since an unknown id is an error.
    """

    def __init__(self, *, defer_urls: bool = False) -> None:
        self.defer_urls = defer_urls
        self._known_ids: set[int] = set()
        self._checked_ids: set[int] = set()
        self._url_to_id: dict[str, int] = {}
        self._checked_urls: set[str] = set()

    def prefetch(self, sources_lists: Iterable[Any]) -> None:
        ids: set[int] = set()
        urls: set[str] = set()
        for sources in sources_lists:
            if not isinstance(sources, list):
                continue
            for item in sources[:MAX_SOURCES]:
                if isinstance(item, int) and not isinstance(item, bool):
                    ids.add(item)
                elif isinstance(item, str):
                    text = item.strip()
                    if _DIGITS.fullmatch(text):
                        ids.add(int(text))
                    elif len(text) <= MAX_URL_CHARS and not self.defer_urls:
                        urls.update(url_variants(text))
        self._load(ids, urls)

    def _load(self, ids: set[int], urls: set[str]) -> None:
        ids = {i for i in ids if 0 < i < 2**63} - self._checked_ids
        urls -= self._checked_urls
        if ids:
            self._known_ids.update(Article.objects.filter(pk__in=ids).values_list("pk", flat=True))
            self._checked_ids |= ids
        if urls:
            self._url_to_id.update(Article.objects.filter(url__in=urls).values_list("url", "pk"))
            self._checked_urls |= urls

    def article_exists(self, article_id: int) -> bool:
        if article_id not in self._checked_ids:
            self._load({article_id}, set())
        return article_id in self._known_ids

    def article_for_url(self, url: str) -> int | None:
        if self.defer_urls:
            return None
        variants = url_variants(url)
        if not self._checked_urls.issuperset(variants):
            self._load(set(), set(variants))
        for variant in variants:
            if variant in self._url_to_id:
                return self._url_to_id[variant]
        return None


def validate_sources(
    *, sources: Any, resolver: ArticleResolver | None = None, errors: _Errors | None = None
) -> tuple[list[int | str], list[int]]:
    """(sources as stored, ids of the cited Article rows); URLs not in the archive are kept as URLs."""
    own = errors is None
    errs = errors if errors is not None else _Errors()
    prefetched = resolver is not None
    resolver = resolver or ArticleResolver()
    clean: list[int | str] = []
    article_ids: list[int] = []
    if sources is None:
        sources = []
    if not isinstance(sources, list):
        errs.add("sources", f"must be a list of article ids or http(s) URLs, got {_describe(sources)}")
    elif len(sources) > MAX_SOURCES:
        errs.add("sources", f"has {len(sources)} sources; at most {MAX_SOURCES} are allowed")
    else:
        if not prefetched:
            resolver.prefetch([sources])
        for i, item in enumerate(sources):
            field = f"sources[{i}]"
            if isinstance(item, str) and _DIGITS.fullmatch(item.strip()):
                item = int(item.strip())
            if isinstance(item, int) and not isinstance(item, bool):
                if resolver.article_exists(item):
                    clean.append(item)
                    article_ids.append(item)
                else:
                    errs.add(field, f"article {item} does not exist")
            elif isinstance(item, str):
                url = item.strip()
                try:
                    if len(url) > MAX_URL_CHARS:
                        raise ValidationError("too long")
                    _url_validator(url)
                except ValidationError:
                    errs.add(field, f"{url[:80]!r} is neither an article id nor a valid http(s) URL")
                    continue
                clean.append(url)
                found = resolver.article_for_url(url)
                if found is not None:
                    article_ids.append(found)
            else:
                errs.add(field, f"must be an article id or an http(s) URL, got {_describe(item)}")
    if own:
        errs.raise_if_any()
    return clean, list(dict.fromkeys(article_ids))


# ---------------------------------------------------------------------------------------------
# Forecast graph
# ---------------------------------------------------------------------------------------------


def parse_iso8601(value: Any) -> date | datetime:
    """A date (``YYYY-MM-DD``) or date-time in ISO 8601; ValueError otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be an ISO 8601 date (YYYY-MM-DD) or date-time")
    text = value.strip()
    try:
        if len(text) == 10:
            return date.fromisoformat(text)
        return datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text[:40]!r} is not an ISO 8601 date (YYYY-MM-DD) or date-time") from None


def validate_graph(*, graph: Any, errors: _Errors | None = None) -> dict[str, Any] | None:
    """The normalised forecast graph, or None when none was given."""
    own = errors is None
    errs = errors if errors is not None else _Errors()
    result = _graph(graph, errs)
    if own:
        errs.raise_if_any()
    return result


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


def _graph(graph: Any, errs: _Errors) -> dict[str, Any] | None:
    if graph is None or graph == {}:
        return None
    if not isinstance(graph, dict):
        errs.add("graph", f'must be an object {{"events": [...], "edges": [...]}}, got {_describe(graph)}')
        return None
    _only_keys(graph, ["events", "edges"], "graph", errs, '{"events": [...], "edges": [...]}')
    events = graph.get("events", [])
    edges = graph.get("edges", [])
    clean_events: list[dict[str, Any]] = []
    clean_edges: list[dict[str, Any]] = []
    ids: set[str] = set()
    if not isinstance(events, list):
        errs.add("graph.events", f"must be a list of events, got {_describe(events)}")
        events = []
    elif len(events) > MAX_EVENTS:
        errs.add("graph.events", f"has {len(events)} events; at most {MAX_EVENTS} are allowed")
        events = []
    for i, event in enumerate(events):
        field = f"graph.events[{i}]"
        if not isinstance(event, dict):
            errs.add(field, f"must be an object with id, title, description, date; got {_describe(event)}")
            continue
        _only_keys(event, ["id", "title", "description", "date"], field, errs, "id, title, description, date")
        raw_id = event.get("id")
        event_id: str | None = None
        if isinstance(raw_id, int) and not isinstance(raw_id, bool):
            event_id = str(raw_id)
        elif isinstance(raw_id, str) and raw_id.strip() and len(raw_id.strip()) <= 200:
            event_id = raw_id.strip()
        else:
            errs.add(f"{field}.id", f"must be a non-empty text or integer id, got {_describe(raw_id)}")
        if event_id is not None:
            if event_id in ids:
                errs.add(f"{field}.id", f"duplicate event id {event_id!r}")
            ids.add(event_id)
        title = _text(event.get("title"), f"{field}.title", errs, max_chars=MAX_TITLE_CHARS, required=True)
        description = _text(
            event.get("description"), f"{field}.description", errs, max_chars=MAX_TEXT_CHARS, required=False
        )
        when: date | datetime | None = None
        if "date" not in event:
            errs.add(f"{field}.date", "is required (ISO 8601 date, e.g. 2026-03-01)")
        else:
            try:
                when = parse_iso8601(event["date"])
            except ValueError as exc:
                errs.add(f"{field}.date", str(exc))
        clean_events.append(
            {"id": event_id, "title": title, "description": description, "date": when.isoformat() if when else None}
        )
    if not isinstance(edges, list):
        errs.add("graph.edges", f"must be a list of edges, got {_describe(edges)}")
        edges = []
    elif len(edges) > MAX_EDGES:
        errs.add("graph.edges", f"has {len(edges)} edges; at most {MAX_EDGES} are allowed")
        edges = []
    graph_edges: list[tuple[str, str]] = []
    seen_pairs: set[tuple[str, str]] = set()
    for i, edge in enumerate(edges):
        field = f"graph.edges[{i}]"
        if not isinstance(edge, dict):
            errs.add(
                field, f"must be an object with source, target, relation, strength, confidence; got {_describe(edge)}"
            )
            continue
        _only_keys(
            edge,
            ["source", "target", "relation", "strength", "confidence"],
            field,
            errs,
            "source, target, relation, strength, confidence",
        )
        ends: list[str | None] = []
        for end in ("source", "target"):
            raw = edge.get(end)
            key = str(raw).strip() if isinstance(raw, str | int) and not isinstance(raw, bool) else None
            if key is None or key not in ids:
                errs.add(f"{field}.{end}", f"names no event of this graph: {raw!r}")
                ends.append(None)
            else:
                ends.append(key)
        relation = edge.get("relation")
        canonical = _RELATIONS_BY_LOWER.get(relation.strip().lower()) if isinstance(relation, str) else None
        if canonical is None:
            errs.add(
                f"{field}.relation", f"{relation!r} is not a relation type; expected one of {', '.join(RELATIONS)}"
            )
        strength = confidence = None
        if edge.get("strength") is not None:
            strength = _number(edge["strength"], f"{field}.strength", errs)
            if strength is not None and not -1.0 <= strength <= 1.0:
                errs.add(f"{field}.strength", f"must be between -1 and 1, got {strength:g}")
        if edge.get("confidence") is not None:
            confidence = _probability(edge["confidence"], f"{field}.confidence", errs)
        source, target = ends
        if source is not None and target is not None:
            if (source, target) in seen_pairs:
                errs.add(field, f"duplicate edge {source!r} -> {target!r}")
            seen_pairs.add((source, target))
            graph_edges.append((source, target))
        clean_edges.append(
            {"source": source, "target": target, "relation": canonical, "strength": strength, "confidence": confidence}
        )
    cycle: list[tuple[str, str]] = []
    if graph_edges and not _acyclic(graph_edges):
        # networkx names the cycle; only a graph that has one pays for building it.
        digraph = nx.DiGraph()
        digraph.add_edges_from(graph_edges)
        cycle = nx.find_cycle(digraph)
    if cycle:
        path = " -> ".join([str(u) for u, _ in cycle] + [str(cycle[0][0])])
        errs.add("graph.edges", f"the graph must not contain a cycle: {path}")
    return {"events": clean_events, "edges": clean_edges}


# ---------------------------------------------------------------------------------------------
# The whole body
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CleanForecast:
    prediction: dict[str, Any]
    sources: list[int | str]
    article_ids: list[int]
    rationale: str
    graph: dict[str, Any] | None


def forecast_body_clean(
    *,
    question: Question,
    prediction: Any,
    sources: Any = None,
    rationale: Any = "",
    graph: Any = None,
    resolver: ArticleResolver | None = None,
    extra_errors: dict[str, list[str]] | None = None,
) -> CleanForecast:
    """Validate and normalise every part of a forecast body; all problems are raised together."""
    errors = _Errors()
    for field, messages in (extra_errors or {}).items():
        for message in messages:
            errors.add(field, message)
    clean_prediction = validate_prediction(question=question, prediction=prediction, errors=errors)
    clean_sources, article_ids = validate_sources(sources=sources, resolver=resolver, errors=errors)
    clean_rationale = _text(rationale, "rationale", errors, max_chars=MAX_RATIONALE_CHARS, required=False)
    clean_graph = _graph(graph, errors)
    errors.raise_if_any()
    return CleanForecast(
        prediction=clean_prediction,
        sources=clean_sources,
        article_ids=article_ids,
        rationale=clean_rationale or "",
        graph=clean_graph,
    )
