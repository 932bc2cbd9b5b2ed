"""LLM hindsight builder (WorldReasoner, Appendix B.2) over any OpenAI-compatible server.

Stage ``hindsight_explanation`` (HindsightAgent): evidence is gathered from the platform's own
corpus through the temporal gateway as of t_res + HINDSIGHT_EVIDENCE_WINDOW_DAYS, ranked by the
search, cut to fit the model's context window, and the model writes a causal explanation.
Stage ``hindsight_graph`` (GraphBuilderAgent): the model answers with the graph as JSON following
a schema built for this question (the evidence ids it may cite, the event types and relations),
asked for by the server's structured-output method (``ingestion.llm.structured``). Every answer is
validated (grading.builders.validation) and checked against the B.3 thresholds (grading.quality);
problems are fed back as a correction and the model tries again until HINDSIGHT_GRAPH_BUDGET model
calls are spent or the stage's time runs out. The client's per-stage record (tokens, seconds,
method, whether the first answer was valid), the prompts and the model name travel with the result
or the error and are stored with the build attempt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from grading.builders.common import BuildContext, BuildError, BuildResult
from grading.builders.draft import EVENT_TYPES, NEUTRAL_MAX_MAGNITUDE, RELATIONS, GraphDraft
from grading.builders.llm_prompts import GRAPH_SYSTEM, HINDSIGHT_SYSTEM, graph_schema
from grading.builders.validation import validate_graph_payload
from grading.quality import QualityReport, Thresholds, check
from ingestion.llm.client import LLMClient, LLMError, Stage
from ingestion.llm.config import llm_config
from ingestion.llm.tokens import fit_ranked
from ingestion.models import Article
from ingestion.selectors.evidence import articles_search
from ingestion.text import tokenize

BUILDER_VERSION = "llm-2.0"
EXPLANATION_MIN_CHARS = 40
SUMMARY_CHARS = 400
# Shorter summaries are tried when the evidence does not fit the window at full length.
SUMMARY_STEPS = (SUMMARY_CHARS, 200, 80, 0)
# Prompt tokens kept free in the graph stage for one round's list of problems.
CORRECTION_RESERVE_TOKENS = 600
MAX_PROBLEMS_FED_BACK = 25
QUERY_TERMS = 12
SEARCH_PAGE = 50


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
    terms = list(dict.fromkeys(tokenize(f"{ctx.title} {ctx.outcome_text} {ctx.resolution_criteria}")))[:QUERY_TERMS]
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


def _evidence_line(item: EvidenceItem, summary_chars: int) -> str:
    line = f"[{item.id}] {item.published_at.date().isoformat()} — {item.title}."
    summary = item.summary[:summary_chars].strip() if summary_chars else ""
    return f"{line} {summary}" if summary else line


def fit_evidence(items: list[EvidenceItem], *, room: int, want: int) -> tuple[list[EvidenceItem], str]:
    """The best-ranked evidence that fits ``room`` prompt tokens (summaries shortened first), and its text."""
    shown, lines = fit_ranked(items, room=room, render=_evidence_line, detail_steps=SUMMARY_STEPS, want=want)
    return shown, "\n".join(lines)


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


@dataclass
class LLMBuildResult(BuildResult):
    """A graph from the model, with the client's per-stage record."""

    stages: list[dict[str, Any]] = field(default_factory=list)
    structured_output: str = ""


class LLMBuildError(BuildError):
    """No usable graph from the model; carries the per-stage record of what was tried."""

    def __init__(self, reason: str, message: str, *, client: LLMClient, log: list[dict[str, Any]]) -> None:
        super().__init__(
            reason,
            message,
            log=log,
            prompts=_plain(client.prompts),
            token_usage=client.usage(),
            model_name=client.model,
        )
        self.stages = client.stages()
        self.structured_output = next((r.structured_output for r in client.records if r.stage != "probe"), "")


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


class _Build:
    """One build's model calls: the client, the call budget and the validation log."""

    def __init__(self, client: LLMClient, budget: int) -> None:
        self.client = client
        self.budget = budget
        self.calls = 0
        self.log: list[dict[str, Any]] = []

    def fail(self, reason: str, message: str) -> LLMBuildError:
        return LLMBuildError(reason, message, client=self.client, log=self.log)

    def explain(self, ctx: BuildContext, evidence: list[EvidenceItem], *, want: int) -> str:
        stage = self.client.stage("hindsight_explanation")
        words = max(60, int(stage.max_output_tokens * 0.6))
        system = HINDSIGHT_SYSTEM.format(words=words)
        head = f"{_question_text(ctx)}\n\nEvidence articles (id, date, headline, summary):\n"
        tail = "\n\nWrite the causal explanation."
        frame = [{"role": "system", "content": system}, {"role": "user", "content": head + tail}]
        shown, text = fit_evidence(evidence, room=stage.room(frame), want=want)
        if not shown:
            raise self.fail("context_exceeded", _no_room(stage))
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": f"{head}{text}{tail}"},
        ]
        while self.calls < self.budget:
            self.calls += 1
            reply = stage.text(messages)
            explanation = reply.text.strip()
            if len(explanation) >= EXPLANATION_MIN_CHARS:
                stage.note_validity(True)
                self.log.append({"stage": stage.name, "call": self.calls, "problems": []})
                return explanation
            stage.note_validity(False)
            problem = f"The explanation is {len(explanation)} characters; write at least {EXPLANATION_MIN_CHARS}."
            self.log.append({"stage": stage.name, "call": self.calls, "problems": [problem]})
            messages = [
                *messages[:2],
                reply.as_history(),
                {"role": "user", "content": f"{problem} Write the causal explanation."},
            ]
        stage.record.outcome = "malformed_output"
        raise self.fail("malformed_output", "The model gave no usable causal explanation within the budget.")

    def draw(
        self, ctx: BuildContext, evidence: list[EvidenceItem], explanation: str, *, thresholds: Thresholds
    ) -> tuple[GraphDraft, QualityReport]:
        self.client.structured_mode()  # detected (once per server) before the stage's clock starts
        stage = self.client.stage("hindsight_graph")
        system = GRAPH_SYSTEM.format(
            types=", ".join(EVENT_TYPES),
            relations=", ".join(RELATIONS),
            min_events=thresholds.min_events,
            min_sources=thresholds.min_sources,
            min_depth=thresholds.min_depth,
            min_conf=thresholds.min_link_confidence,
            min_strength=thresholds.min_link_strength,
        )
        head = (
            f"{_question_text(ctx)}\n\nAllowed event dates: {ctx.earliest.isoformat()} to {ctx.latest.isoformat()}."
            f"\n\nCausal explanation:\n{explanation}\n\nEvidence articles (cite only these ids):\n"
        )
        # The schema's size barely depends on which ids it lists: measure it with all of them.
        draft_schema = graph_schema(
            article_ids=[e.id for e in evidence], max_events=settings.HINDSIGHT_GRAPH_MAX_EVENTS
        )
        frame = [{"role": "system", "content": system}, {"role": "user", "content": head}]
        room = stage.room(frame, draft_schema) - CORRECTION_RESERVE_TOKENS
        shown, text = fit_evidence(evidence, room=room, want=thresholds.min_sources)
        if not shown:
            raise self.fail("context_exceeded", _no_room(stage))
        known = {e.id for e in shown}
        schema = graph_schema(article_ids=sorted(known), max_events=settings.HINDSIGHT_GRAPH_MAX_EVENTS)
        base: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": head + text},
        ]
        messages = base
        best: tuple[GraphDraft, QualityReport] | None = None
        last_problems: list[str] = []
        while self.calls < self.budget:
            self.calls += 1
            reply = stage.structured(messages, schema)
            problems: list[str]
            if reply.payload is None:
                problems = [reply.problem]
                stage.note_validity(False)
            else:
                draft, problems = validate_graph_payload(
                    reply.payload,
                    known_article_ids=known,
                    earliest=ctx.earliest,
                    latest=ctx.latest,
                    explanation=explanation,
                )
                stage.note_validity(draft is not None)
                if draft is not None:
                    report = check(draft, thresholds)
                    best = (draft, report)
                    problems = report.failures
            entry: dict[str, Any] = {"stage": stage.name, "call": self.calls, "problems": problems}
            if best is not None and not problems:
                entry["quality"] = best[1].as_dict()
            self.log.append(entry)
            if not problems:
                break
            last_problems = problems
            messages = _correction(stage, base, reply.as_history(), problems)
        if best is None:
            stage.record.outcome = "malformed_output"
            raise self.fail(
                "malformed_output",
                f"No valid graph after {self.calls} model call(s); last problems: " + "; ".join(last_problems[:5]),
            )
        return best


def _no_room(stage: Stage) -> str:
    return (
        f"Not one evidence article fits the {stage.name} prompt: {stage.prompt_budget} tokens are left beside a "
        f"{stage.max_output_tokens}-token answer; raise HINDSIGHT_LLM_CONTEXT_TOKENS or lower the stage's tokens."
    )


def _correction(
    stage: Stage, base: list[dict[str, Any]], answer: dict[str, Any], problems: list[str]
) -> list[dict[str, Any]]:
    """The next round's messages: the base prompt, the rejected answer (when it fits) and the problems."""
    shown = problems[:MAX_PROBLEMS_FED_BACK]
    while True:
        more = len(problems) - len(shown)
        correction = (
            "Your graph was not accepted. Fix every problem and answer again with the complete graph. Where "
            "quality thresholds are unmet, add intermediate cause events (dated, sourced) and delete weak links."
            "\nProblems:\n" + "\n".join(f"- {p}" for p in shown) + (f"\n- ... and {more} more" if more else "")
        )
        with_answer = [*base, answer, {"role": "user", "content": correction}]
        if stage.room(with_answer) >= 0:
            return with_answer
        without_answer = [*base, {"role": "user", "content": correction}]
        if stage.room(without_answer) >= 0 or len(shown) <= 1:
            return without_answer
        shown = shown[: len(shown) // 2]  # the prompt's reserve is spent: name fewer problems


def build(ctx: BuildContext, *, thresholds: Thresholds, budget: int, max_articles: int) -> LLMBuildResult:
    config = llm_config()
    if config is None:
        raise BuildError("not_configured", "No LLM is configured (set HINDSIGHT_LLM_MODEL).")
    evidence = gather_evidence(ctx, limit=max_articles)
    if not evidence:
        raise BuildError(
            "no_articles",
            f"The corpus holds no articles about the question before {evidence_as_of(ctx).isoformat()}.",
        )
    run = _Build(LLMClient(config), budget)
    try:
        explanation = run.explain(ctx, evidence, want=thresholds.min_sources)
        draft, report = run.draw(ctx, evidence, explanation, thresholds=thresholds)
    except LLMError as exc:
        raise run.fail(exc.reason, exc.message) from exc
    client = run.client
    return LLMBuildResult(
        draft=draft,
        quality=report,
        builder="llm",
        builder_version=BUILDER_VERSION,
        model_name=client.model,
        prompts=_plain(client.prompts),
        token_usage=client.usage(),
        log=run.log,
        stages=client.stages(),
        structured_output=next((r.structured_output for r in client.records if r.stage == "hindsight_graph"), ""),
    )


__all__ = [
    "BUILDER_VERSION",
    "NEUTRAL_MAX_MAGNITUDE",
    "LLMBuildError",
    "LLMBuildResult",
    "build",
    "fit_evidence",
    "gather_evidence",
    "graph_schema",
    "is_configured",
]
