"""The published baseline on the real replay questions (origin "archive"): each baseline agent's
outcome, evidence and reasoning scores on them, and the hindsight builder's pass rate, as the table
``manage.py real_replay_baseline`` prints and writes into the methods text."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from statistics import fmean

from grading.models import GraphBuildAttempt, HindsightGraph
from ingestion.models import Question
from leaderboard.models import Grade

OUTCOME_TYPES = (Question.Type.BINARY, Question.Type.MULTIPLE_CHOICE)


@dataclass(frozen=True)
class AgentRow:
    agent: str
    forecasts: int
    brier: float | None  # binary and multiple choice
    accuracy: float | None  # every type with a right/wrong verdict
    source_precision: float | None
    source_recall: float | None
    leaks: int
    key_event_recall: float | None  # forecasts graded against a graph that passed the thresholds
    reasoning_graded: int


@dataclass
class BaselineTable:
    questions: int = 0
    by_type: Counter[str] = field(default_factory=Counter)
    graphs_passed: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    rows: list[AgentRow] = field(default_factory=list)

    @property
    def pass_rate(self) -> float:
        return self.graphs_passed / self.questions if self.questions else 0.0

    def markdown(self) -> str:
        def fmt(value: float | None, digits: int = 3) -> str:
            return "—" if value is None else f"{value:.{digits}f}"

        types = ", ".join(f"{n} {t.replace('_', ' ')}" for t, n in sorted(self.by_type.items()))
        lines = [
            f"{self.questions} real replay questions ({types}); the offline hindsight builder's graphs pass the "
            f"quality thresholds on {self.graphs_passed} of them ({100 * self.pass_rate:.0f}%).",
            "",
            "| agent | forecasts | Brier (binary, choice) | accuracy | SrcP | source recall | leaks | KER (n) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for row in self.rows:
            lines.append(
                f"| {row.agent} | {row.forecasts} | {fmt(row.brier)} | {fmt(row.accuracy, 2)} | "
                f"{fmt(row.source_precision)} | {fmt(row.source_recall)} | {row.leaks} | "
                f"{fmt(row.key_event_recall)} ({row.reasoning_graded}) |"
            )
        if self.failures:
            lines += [
                "",
                "Why graphs failed: " + "; ".join(f"{text} ({n})" for text, n in self.failures.most_common()) + ".",
            ]
        return "\n".join(lines)


def _failure_kind(text: str) -> str:
    """A quality failure without its figures: "The graph has 4 events" -> "the graph has too few events"."""
    first = re.split(r"[;:]", text, maxsplit=1)[0]
    return re.sub(r"\s+", " ", re.sub(r"\d+(\.\d+)?", "N", first)).strip().rstrip(".")


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return fmean(present) if present else None


def real_replay_baseline_table() -> BaselineTable:
    questions = list(Question.objects.filter(origin=Question.Origin.ARCHIVE, status=Question.Status.RESOLVED))
    table = BaselineTable(questions=len(questions), by_type=Counter(q.type for q in questions))
    ids = [q.pk for q in questions]
    graphs = {g.question_id: g for g in HindsightGraph.objects.filter(question_id__in=ids, is_current=True)}
    for qid in ids:
        graph = graphs.get(qid)
        if graph is not None and graph.graph_built:
            table.graphs_passed += 1
        elif graph is not None:
            table.failures.update({_failure_kind(f) for f in graph.quality.get("failures", [])})
        else:
            attempt = GraphBuildAttempt.objects.filter(question_id=qid).order_by("-pk").first()
            table.failures[attempt.get_reason_display() if attempt else "never built"] += 1
    grades = list(
        Grade.objects.filter(
            is_current=True, counts=True, void=False, forecast__question_id__in=ids,
            forecast__agent__is_baseline=True,
        ).select_related("forecast__agent", "forecast__question")
    )  # fmt: skip
    by_agent: dict[str, list[Grade]] = {}
    for grade in grades:
        by_agent.setdefault(grade.forecast.agent.name, []).append(grade)
    for name in sorted(by_agent):
        rows = by_agent[name]
        reasoned = [g for g in rows if g.key_event_recall is not None and graphs.get(g.forecast.question_id) is not None
                    and graphs[g.forecast.question_id].graph_built]  # fmt: skip
        table.rows.append(
            AgentRow(
                agent=name,
                forecasts=len(rows),
                brier=_mean([g.brier for g in rows if g.forecast.question.type in OUTCOME_TYPES]),
                accuracy=_mean([None if g.correct is None else float(g.correct) for g in rows]),
                source_precision=_mean([g.source_precision for g in rows]),
                source_recall=_mean([g.source_recall for g in rows]),
                leaks=sum(g.leaks or 0 for g in rows),
                key_event_recall=_mean([g.key_event_recall for g in reasoned]),
                reasoning_graded=len(reasoned),
            )
        )
    return table
