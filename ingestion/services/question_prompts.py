"""What the question generator asks the model: prompts, JSON schemas and the bounded calls.

Both answers are JSON asked for by the server's structured-output method (``ingestion.llm``); an
answer that is not the required JSON object gets one correction round. Validation of the fields
stays with the generator (``ingestion.services.question_generation``).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ingestion.llm.client import LLMClient, Reply, Stage
from ingestion.llm.structured import JsonSchema
from ingestion.llm.tokens import fit_ranked
from ingestion.models import Article, Question

CRITERIA = ("clarity", "measurability", "answerability", "temporal_validity")
GENERATED_TYPES = (
    Question.Type.BINARY,
    Question.Type.MULTIPLE_CHOICE,
    Question.Type.QUANTITY,
    Question.Type.TIMEFRAME,
)
# Characters of each article's summary, lowered step by step when the cluster does not fit.
SUMMARY_STEPS = (600, 300, 120, 0)

GENERATE_SYSTEM = """You write forecasting questions from news. Answer with JSON only, no prose:
{"questions": [{"title": str, "type": "binary" | "multiple_choice" | "quantity" | "timeframe",
"options": [str, ...] (multiple_choice only, else []), "unit": str (quantity only, else ""),
"granularity": "day" | "week" | "month" | "quarter" | "year" (timeframe only, else ""),
"answer_format": str, "domain": str, "resolution_criteria": str, "background": str,
"resolve_by": "YYYY-MM-DD", "provenance": [article id, ...]}]}
Each question must be about a future, publicly verifiable fact, answerable by the resolve_by date,
with unambiguous resolution criteria. provenance lists the ids of the articles it is based on."""

SCORE_SYSTEM = """You review forecasting questions. Score the question from 0 to 1 on clarity,
measurability, answerability and temporal_validity (the answer is unknown today and will be known by
resolve_by). Answer with JSON only:
{"clarity": {"score": number, "reason": str}, "measurability": {"score": number, "reason": str},
"answerability": {"score": number, "reason": str}, "temporal_validity": {"score": number, "reason": str}}"""

_DATE = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}


def questions_schema(*, article_ids: list[int], limit: int) -> JsonSchema:
    text = {"type": "string"}
    fields: dict[str, Any] = {
        "title": text,
        "type": {"type": "string", "enum": [str(t) for t in GENERATED_TYPES]},
        "options": {"type": "array", "items": text},
        "unit": text,
        "granularity": {"type": "string", "enum": [*Question.Granularity.values, ""]},
        "answer_format": text,
        "domain": text,
        "resolution_criteria": text,
        "background": text,
        "resolve_by": _DATE,
        "provenance": {"type": "array", "items": {"type": "integer", "enum": sorted(article_ids)}, "minItems": 1},
    }
    item = {"type": "object", "additionalProperties": False, "required": list(fields), "properties": fields}
    return JsonSchema(
        name="submit_questions",
        description="Submit the forecasting questions written from these articles.",
        schema={
            "type": "object",
            "additionalProperties": False,
            "required": ["questions"],
            "properties": {"questions": {"type": "array", "items": item, "maxItems": limit}},
        },
    )


def _criterion() -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["score", "reason"],
        "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}, "reason": {"type": "string"}},
    }


SCORES_SCHEMA = JsonSchema(
    name="submit_scores",
    description="Submit the question's scores with a reason for each.",
    schema={
        "type": "object",
        "additionalProperties": False,
        "required": list(CRITERIA),
        "properties": {c: _criterion() for c in CRITERIA},
    },
)


def _article_line(article: Article, chars: int) -> str:
    published = article.published_at.date().isoformat() if article.published_at else "undated"
    line = f"[{article.pk}] {published} — {article.title}"
    summary = " ".join((article.summary or article.body or "").split())[:chars] if chars else ""
    return f"{line}\n{summary}" if summary else line


def _ask(stage: Stage, messages: list[dict[str, Any]], schema: JsonSchema, shape: str) -> Reply:
    """One structured answer, and one correction round when it is not the required JSON object."""
    reply = stage.structured(messages, schema)
    payload_ok = reply.payload is not None and (shape == "" or isinstance(reply.payload.get(shape), list))
    stage.note_validity(payload_ok)
    if payload_ok or stage.remaining_seconds() <= 0:
        return reply
    problem = reply.problem or f"The JSON object has no '{shape}' list."
    correction = f"Your answer was not accepted: {problem} Answer again with the JSON object only."
    retry = [*messages, reply.as_history(), {"role": "user", "content": correction}]
    if stage.room(retry, schema) < 0:
        retry = [*messages, {"role": "user", "content": correction}]
    return stage.structured(retry, schema)


def ask_for_questions(client: LLMClient, articles: list[Article], *, now: datetime, limit: int) -> Reply:
    """The model's questions about a cluster; the prompt keeps as many articles as fit, newest first."""
    stage = client.stage("question_generation")
    head = (
        f"Today is {now.date().isoformat()}. Write up to {limit} forecasting questions about these related news "
        "articles. resolve_by must be after today.\n\n"
    )
    frame = [{"role": "system", "content": GENERATE_SYSTEM}, {"role": "user", "content": head}]
    newest_first = sorted(articles, key=lambda a: (a.published_at is not None, a.published_at, a.pk), reverse=True)
    schema = questions_schema(article_ids=[a.pk for a in articles], limit=limit)
    shown, lines = fit_ranked(
        newest_first,
        room=stage.room(frame, schema),
        render=_article_line,
        detail_steps=SUMMARY_STEPS,
        want=len(articles),
    )
    if not shown:
        stage.record.outcome = "context_exceeded"
        return Reply(text="", finish_reason="", problem="not one article of the cluster fits the context window")
    schema = questions_schema(article_ids=[a.pk for a in shown], limit=limit)
    text = "\n\n".join(lines)
    messages = [{"role": "system", "content": GENERATE_SYSTEM}, {"role": "user", "content": head + text}]
    return _ask(stage, messages, schema, "questions")


def score_prompt(clean: dict[str, Any], now: datetime) -> str:
    shown = {k: v for k, v in clean.items() if k != "provenance"}
    shown["resolve_by"] = clean["resolve_by"].date().isoformat()
    return f"Today is {now.date().isoformat()}.\nQuestion:\n{json.dumps(shown, indent=1)}"


def ask_for_scores(stage: Stage, clean: dict[str, Any], *, now: datetime) -> Reply:
    messages = [{"role": "system", "content": SCORE_SYSTEM}, {"role": "user", "content": score_prompt(clean, now)}]
    return _ask(stage, messages, SCORES_SCHEMA, "")
