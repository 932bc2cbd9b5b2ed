"""What the LLM hindsight builder asks: the two agents' instructions and the graph's JSON schema."""

from __future__ import annotations

from typing import Any

from grading.builders.draft import DIRECTIONS, EVENT_TYPES, RELATIONS
from ingestion.llm.structured import JsonSchema

HINDSIGHT_SYSTEM = (
    "You are a HindsightAgent. A forecasting question has resolved. Using only the dated evidence "
    "articles provided, explain how the outcome came about: identify the key real events, their dates "
    "and their temporal order, and how each pushed the outcome toward or away from the way it resolved. "
    "Cite articles by their numeric id in square brackets, e.g. [12]. Do not invent events. "
    "Write at most {words} words."
)
GRAPH_SYSTEM = (
    "You are a GraphBuilderAgent. Convert the causal explanation into a hindsight graph, answering "
    'with one JSON object {{"events": [...], "links": [...]}}. Each event has id, title, description, '
    "date (YYYY-MM-DD), type (one of {types}), is_outcome, source_ids (ids of the evidence articles that "
    "report it) and impact. Every event is a dated real-world occurrence (not a prediction) supported by "
    "the listed article ids; exactly one event has is_outcome=true (the resolved outcome, type Outcome, "
    "impact null); other events carry an outcome impact: direction Positive (makes a Yes/the stated "
    "outcome more likely), Negative, Neutral or Mixed; magnitude in [0,1] (0.1-0.3 weak, 0.4-0.6 "
    "moderate, 0.7-0.9 major, 1.0 decisive; Neutral at most 0.3); confidence in [0,1]. Each link has "
    "source and target (event ids, from cause to effect, no cycles), relation (one of {relations}), "
    "strength in [-1,1] (0.1-0.3 weak, 0.4-0.6 moderate, 0.7-0.9 major), confidence in [0,1], reasoning "
    "and evidence_ids. High values need concrete evidence; do not score uniformly. Quality requirements: "
    "at least {min_events} events, at least {min_sources} distinct source articles, a causal chain of at "
    "least {min_depth} links ending at the outcome event, and every link with confidence >= {min_conf} "
    "and |strength| >= {min_strength}."
)


def graph_schema(*, article_ids: list[int], max_events: int) -> JsonSchema:
    """The graph's JSON schema for one build: only the evidence ids shown may be cited."""
    article_id: dict[str, Any] = (
        {"type": "integer", "enum": sorted(article_ids)} if article_ids else {"type": "integer"}
    )
    impact = {
        "type": "object",
        "additionalProperties": False,
        "required": ["direction", "magnitude", "confidence"],
        "properties": {
            "direction": {"type": "string", "enum": list(DIRECTIONS)},
            "magnitude": {"type": "number", "minimum": 0, "maximum": 1},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        },
    }
    event = {
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "title", "description", "date", "type", "is_outcome", "source_ids", "impact"],
        "properties": {
            "id": {"type": "string"},
            "title": {"type": "string"},
            "description": {"type": "string"},
            "date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
            "type": {"type": "string", "enum": list(EVENT_TYPES)},
            "is_outcome": {"type": "boolean"},
            "source_ids": {"type": "array", "items": article_id},
            "impact": {"anyOf": [impact, {"type": "null"}]},
        },
    }
    link = {
        "type": "object",
        "additionalProperties": False,
        "required": ["source", "target", "relation", "strength", "confidence", "reasoning", "evidence_ids"],
        "properties": {
            "source": {"type": "string"},
            "target": {"type": "string"},
            "relation": {"type": "string", "enum": list(RELATIONS)},
            "strength": {"type": "number", "minimum": -1, "maximum": 1},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "reasoning": {"type": "string"},
            "evidence_ids": {"type": "array", "items": article_id},
        },
    }
    return JsonSchema(
        name="submit_graph",
        description="Submit the hindsight graph: dated events, causal links and outcome impacts.",
        schema={
            "type": "object",
            "additionalProperties": False,
            "required": ["events", "links"],
            "properties": {
                "events": {"type": "array", "items": event, "minItems": 1, "maxItems": max_events},
                "links": {"type": "array", "items": link},
            },
        },
    )
