"""LLM hindsight builder (WorldReasoner, Appendix B.2) over any OpenAI-compatible server.

Stage 1 (HindsightAgent): evidence is gathered from the platform's own corpus through the temporal
gateway as of t_res + HINDSIGHT_EVIDENCE_WINDOW_DAYS, and the model writes a causal explanation.
Stage 2 (GraphBuilderAgent): the model calls the ``submit_graph`` tool (a JSON schema) with events,
links and outcome impacts. Every answer is validated (grading.builders.validation) and checked
against the B.3 thresholds (grading.quality); problems are fed back as a correction and the model
tries again until HINDSIGHT_GRAPH_BUDGET model calls are spent. Prompts, the model name and token
usage travel with the result and are stored on the graph.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import openai
from django.conf import settings

from grading.builders.common import BuildContext, BuildError, BuildResult, tokens
from grading.builders.draft import DIRECTIONS, EVENT_TYPES, NEUTRAL_MAX_MAGNITUDE, RELATIONS, GraphDraft
from grading.builders.validation import parse_json_object, validate_graph_payload
from grading.quality import QualityReport, Thresholds, check
from ingestion.models import Article
from ingestion.selectors.evidence import articles_search

BUILDER_VERSION = "llm-1.0"
EXPLANATION_MIN_CHARS = 40
SUMMARY_CHARS = 400
QUERY_TERMS = 12
SEARCH_PAGE = 50

HINDSIGHT_SYSTEM = (
    "You are a HindsightAgent. A forecasting question has resolved. Using only the dated evidence "
    "articles provided, explain how the outcome came about: identify the key real events, their dates "
    "and their temporal order, and how each pushed the outcome toward or away from the way it resolved. "
    "Cite articles by their numeric id in square brackets, e.g. [12]. Do not invent events."
)
GRAPH_SYSTEM = (
    "You are a GraphBuilderAgent. Convert the causal explanation into a hindsight graph by calling the "
    "submit_graph tool exactly once. Rules: every event is a dated real-world occurrence (not a "
    "prediction) supported by the listed article ids; exactly one event has is_outcome=true (the "
    "resolved outcome, type Outcome, impact null); other events carry an outcome impact: direction "
    "Positive (makes a Yes/the stated outcome more likely), Negative, Neutral or Mixed; magnitude in "
    "[0,1] (0.1-0.3 weak, 0.4-0.6 moderate, 0.7-0.9 major, 1.0 decisive; Neutral at most 0.3); "
    "confidence in [0,1]. Links go from cause to effect (no cycles) with relation one of "
    f"{', '.join(RELATIONS)}, strength in [-1,1] (0.1-0.3 weak, 0.4-0.6 moderate, 0.7-0.9 major) and "
    "confidence in [0,1]. High values need concrete evidence; do not score uniformly. Quality "
    "requirements: at least {min_events} events, at least {min_sources} distinct source articles, "
    "a causal chain of at least {min_depth} links ending at the outcome event, and every link with "
    "confidence >= {min_conf} and |strength| >= {min_strength}."
)

GRAPH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "submit_graph",
        "description": "Submit the hindsight graph: dated events, causal links and outcome impacts.",
        "parameters": {
            "type": "object",
            "additionalProperties": False,
            "required": ["events", "links"],
            "properties": {
                "events": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": [
                            "id",
                            "title",
                            "description",
                            "date",
                            "type",
                            "is_outcome",
                            "source_ids",
                            "impact",
                        ],
                        "properties": {
                            "id": {"type": "string"},
                            "title": {"type": "string"},
                            "description": {"type": "string"},
                            "date": {"type": "string", "description": "YYYY-MM-DD"},
                            "type": {"type": "string", "enum": list(EVENT_TYPES)},
                            "is_outcome": {"type": "boolean"},
                            "source_ids": {"type": "array", "items": {"type": "integer"}},
                            "impact": {
                                "type": ["object", "null"],
                                "additionalProperties": False,
                                "required": ["direction", "magnitude", "confidence"],
                                "properties": {
                                    "direction": {"type": "string", "enum": list(DIRECTIONS)},
                                    "magnitude": {"type": "number", "minimum": 0, "maximum": 1},
                                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                                },
                            },
                        },
                    },
                },
                "links": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": [
                            "source",
                            "target",
                            "relation",
                            "strength",
                            "confidence",
                            "reasoning",
                            "evidence_ids",
                        ],
                        "properties": {
                            "source": {"type": "string"},
                            "target": {"type": "string"},
                            "relation": {"type": "string", "enum": list(RELATIONS)},
                            "strength": {"type": "number", "minimum": -1, "maximum": 1},
                            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                            "reasoning": {"type": "string"},
                            "evidence_ids": {"type": "array", "items": {"type": "integer"}},
                        },
                    },
                },
            },
        },
    },
}


@dataclass(frozen=True)
class EvidenceItem:
    id: int
    title: str
    url: str
    published_at: datetime
    summary: str


def is_configured() -> bool:
    return bool(settings.LLM_MODEL)


def evidence_as_of(ctx: BuildContext) -> datetime:
    return ctx.t_res + timedelta(days=settings.HINDSIGHT_EVIDENCE_WINDOW_DAYS)


def gather_evidence(ctx: BuildContext, *, limit: int) -> list[EvidenceItem]:
    """Articles about the question published in [t0 - lookback, t_res + window), best first."""
    as_of = evidence_as_of(ctx)
    start = ctx.t0 - timedelta(days=settings.HINDSIGHT_GRAPH_LOOKBACK_DAYS)
    terms = list(dict.fromkeys(tokens(f"{ctx.title} {ctx.outcome_text} {ctx.resolution_criteria}")))[:QUERY_TERMS]
    ids: list[int] = []
    if terms:
        # Any question word may match ("or"); the gateway ranks and never returns items at/after as_of.
        query = " or ".join(terms)
        offset = 0
        while len(ids) < limit:
            page = articles_search(query=query, as_of=as_of, limit=SEARCH_PAGE, offset=offset)
            ids.extend(r.id for r in page.results if r.published_at is not None and r.published_at >= start)
            offset += SEARCH_PAGE
            if offset >= page.total or not page.results:
                break
    rows = Article.objects.in_bulk(ids[:limit])
    return [
        EvidenceItem(
            id=a.pk,
            title=a.title,
            url=a.url,
            published_at=a.published_at,
            summary=" ".join((a.summary or a.body or "").split())[:SUMMARY_CHARS],
        )
        for a in (rows[i] for i in ids[:limit] if i in rows)
        if a.published_at is not None
    ]


def _evidence_text(items: list[EvidenceItem]) -> str:
    return "\n".join(f"[{a.id}] {a.published_at.date().isoformat()} — {a.title}. {a.summary}" for a in items)


def _question_text(ctx: BuildContext) -> str:
    lines = [
        f"Question: {ctx.title}",
        f"Type: {ctx.question_type}",
        f"Resolution criteria: {ctx.resolution_criteria}",
        f"Earliest forecastable date (t0): {ctx.t0.date().isoformat()}",
        f"Resolved on: {ctx.t_res.date().isoformat()}",
        f"Resolved outcome: {ctx.outcome_text}",
    ]
    if ctx.options:
        lines.insert(2, "Options: " + "; ".join(ctx.options))
    if ctx.background:
        lines.append(f"Background: {ctx.background}")
    return "\n".join(lines)


class _Session:
    """One build's model calls: the client, the spent budget, token usage and error mapping."""

    def __init__(self, budget: int) -> None:
        self.client = openai.OpenAI(
            base_url=settings.LLM_BASE_URL or None,
            api_key=settings.LLM_API_KEY or "not-needed",
            timeout=settings.LLM_TIMEOUT_SECONDS,
            max_retries=0,
        )
        self.model = settings.LLM_MODEL
        self.budget = budget
        self.calls = 0
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        self.log: list[dict[str, Any]] = []
        self.prompts: list[dict[str, Any]] = []

    def fail(self, reason: str, message: str) -> BuildError:
        return BuildError(
            reason, message, log=self.log, prompts=self.prompts, token_usage=self.usage, model_name=self.model
        )

    def call(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        self.calls += 1
        try:
            response = self.client.chat.completions.create(model=self.model, messages=messages, **kwargs)  # type: ignore[call-overload,arg-type]
        except openai.APITimeoutError as exc:
            raise self.fail(
                "timeout", f"The model did not answer within {settings.LLM_TIMEOUT_SECONDS:g} s ({exc})."
            ) from exc
        except openai.APIConnectionError as exc:
            raise self.fail(
                "server_down", f"The LLM server at {settings.LLM_BASE_URL or 'the default URL'} is unreachable ({exc})."
            ) from exc
        except openai.APIStatusError as exc:
            raise self.fail(
                "server_error", f"The LLM server answered HTTP {exc.status_code}: {str(exc.message)[:300]}"
            ) from exc
        except openai.OpenAIError as exc:
            raise self.fail("server_error", f"The LLM call failed: {exc}") from exc
        usage = getattr(response, "usage", None)
        if usage is not None:
            for key in self.usage:
                self.usage[key] += int(getattr(usage, key, 0) or 0)
        if not getattr(response, "choices", None):
            raise self.fail("malformed_output", "The model's response had no choices.")
        return response.choices[0].message


def _explain(session: _Session, ctx: BuildContext, evidence: list[EvidenceItem]) -> str:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": HINDSIGHT_SYSTEM},
        {
            "role": "user",
            "content": f"{_question_text(ctx)}\n\nEvidence articles (id, date, headline, summary):\n"
            f"{_evidence_text(evidence)}\n\nWrite the causal explanation.",
        },
    ]
    session.prompts.append({"stage": "hindsight", "messages": messages})
    while session.calls < session.budget:
        message = session.call(messages)
        text = (message.content or "").strip()
        messages.append({"role": "assistant", "content": text})
        if len(text) >= EXPLANATION_MIN_CHARS:
            session.log.append({"stage": "hindsight", "call": session.calls, "problems": []})
            return text
        problem = f"The explanation is {len(text)} characters; write at least {EXPLANATION_MIN_CHARS}."
        session.log.append({"stage": "hindsight", "call": session.calls, "problems": [problem]})
        messages.append({"role": "user", "content": f"{problem} Write the causal explanation."})
    raise session.fail("malformed_output", "The model gave no usable causal explanation within the budget.")


def _answer_payload(message: Any) -> tuple[Any, str, str | None]:
    """(payload or None, problem, tool_call_id) from a tool call, or from JSON content as a fallback."""
    tool_calls = getattr(message, "tool_calls", None) or []
    if tool_calls:
        call = tool_calls[0]
        if call.function.name != "submit_graph":
            return None, f"Unknown tool {call.function.name!r}; call submit_graph.", call.id
        payload, problem = parse_json_object(call.function.arguments or "")
        return payload, problem, call.id
    if message.content:
        payload, problem = parse_json_object(message.content)
        return payload, problem, None
    return None, "The answer contained neither a submit_graph call nor JSON.", None


def _assistant_record(message: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"role": "assistant", "content": message.content}
    if getattr(message, "tool_calls", None):
        record["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in message.tool_calls
        ]
    return record


def build(ctx: BuildContext, *, thresholds: Thresholds, budget: int, max_articles: int) -> BuildResult:
    if not is_configured():
        raise BuildError("not_configured", "No LLM is configured (set HINDSIGHT_LLM_MODEL).")
    evidence = gather_evidence(ctx, limit=max_articles)
    if not evidence:
        raise BuildError(
            "no_articles",
            f"The corpus holds no articles about the question before {evidence_as_of(ctx).isoformat()}.",
        )
    session = _Session(budget)
    explanation = _explain(session, ctx, evidence)
    known = {a.id for a in evidence}
    messages: list[dict[str, Any]] = [
        {
            "role": "system",
            "content": GRAPH_SYSTEM.format(
                min_events=thresholds.min_events,
                min_sources=thresholds.min_sources,
                min_depth=thresholds.min_depth,
                min_conf=thresholds.min_link_confidence,
                min_strength=thresholds.min_link_strength,
            ),
        },
        {
            "role": "user",
            "content": f"{_question_text(ctx)}\n\nAllowed event dates: {ctx.earliest.isoformat()} to "
            f"{ctx.latest.isoformat()}.\n\nCausal explanation:\n{explanation}\n\nEvidence articles "
            f"(cite only these ids):\n{_evidence_text(evidence)}",
        },
    ]
    session.prompts.append({"stage": "graph", "messages": messages})
    best: tuple[GraphDraft, QualityReport] | None = None
    last_problems: list[str] = []
    while session.calls < session.budget:
        message = session.call(
            messages, tools=[GRAPH_TOOL], tool_choice={"type": "function", "function": {"name": "submit_graph"}}
        )
        payload, problem, call_id = _answer_payload(message)
        if payload is None:
            problems = [problem]
        else:
            draft, problems = validate_graph_payload(
                payload, known_article_ids=known, earliest=ctx.earliest, latest=ctx.latest, explanation=explanation
            )
            if draft is not None:
                report = check(draft, thresholds)
                best = (draft, report)
                problems = report.failures
        entry: dict[str, Any] = {"stage": "graph", "call": session.calls, "problems": problems}
        if best is not None and not problems:
            entry["quality"] = best[1].as_dict()
        session.log.append(entry)
        if not problems:
            break
        last_problems = problems
        messages.append(_assistant_record(message))
        correction = (
            "Your graph was not accepted. Fix every problem and call submit_graph again with the complete "
            "graph. Where quality thresholds are unmet, add intermediate cause events (dated, sourced) and "
            "delete weak links.\nProblems:\n" + "\n".join(f"- {p}" for p in problems)
        )
        if call_id is not None:
            messages.append({"role": "tool", "tool_call_id": call_id, "content": correction})
        else:
            messages.append({"role": "user", "content": correction})
    if best is None:
        raise session.fail(
            "malformed_output",
            f"No valid graph after {session.calls} model call(s); last problems: " + "; ".join(last_problems[:5]),
        )
    draft, report = best
    return BuildResult(
        draft=draft,
        quality=report,
        builder="llm",
        builder_version=BUILDER_VERSION,
        model_name=session.model,
        prompts=json.loads(json.dumps(session.prompts, default=str)),
        token_usage=dict(session.usage),
        log=session.log,
    )


__all__ = ["BUILDER_VERSION", "GRAPH_TOOL", "NEUTRAL_MAX_MAGNITUDE", "build", "gather_evidence", "is_configured"]
