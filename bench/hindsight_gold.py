"""The offline hindsight builder judged against the hand-listed gold causes of real questions.

Imports the shipped news archive, loads the gold set's questions (the real replay questions), builds
each question's graph with the offline builder (one by one, timed), and scores the graph's events
against the gold items (grading/benchmarks/hindsight_gold/README.md): recall, precision (also strict
and by source), direction agreement, the quality bar, build time; per question and pooled per half.
Prints one JSON object on stdout and a short table on stderr.

    .venv/bin/python bench/hindsight_gold.py --half dev          # tune on this half only
    .venv/bin/python bench/hindsight_gold.py --half both         # report: the held-out half beside it
    DATABASE_URL=postgres://... bash scripts/with-services.sh .venv/bin/python bench/hindsight_gold.py

Without ``DATABASE_URL`` it works on a new SQLite file in a temporary folder; with it, on that
database, which must be a scratch one (it adds the archive, questions and graphs). ``--gold`` scores
another gold file in the same format instead of the shipped halves.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from hindsight_runs import ROOT, django_setup, load_questions, survey_text

from grading.benchmarks.hindsight_gold import (
    HALVES,
    GoldQuestion,
    GraphEvent,
    QuestionScore,
    gold_path,
    load_gold,
    pool,
    score_graph,
)

ARCHIVE = ROOT / "ingestion" / "data" / "archives" / "wcep" / "documents.jsonl.gz"
QUESTIONS = ROOT / "ingestion" / "data" / "real_replay" / "questions.json"
ATTRIBUTION = "Wikipedia contributors"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--half", choices=[*HALVES, "both"], default="both", help="Which half of the gold set.")
    parser.add_argument("--gold", type=Path, help="Score this gold file (JSON Lines) instead of a shipped half.")
    parser.add_argument("--archive", type=Path, default=ARCHIVE, help="The news archive (JSON Lines, .gz read).")
    parser.add_argument("--questions", type=Path, default=QUESTIONS, help="The questions, load_questions format.")
    args = parser.parse_args()

    halves = {"custom": load_gold(args.gold)} if args.gold else _halves(args.half)
    entries = _entries(args.questions, [q for gold in halves.values() for q in gold])
    database = django_setup(scratch=True)
    from django.core.management import call_command

    began = time.perf_counter()
    call_command("import_archive", str(args.archive), "--attribution", ATTRIBUTION, verbosity=0, stdout=sys.stderr)
    load_seconds = round(time.perf_counter() - began, 2)
    ids = load_questions(entries)

    from grading.batch_builds import hindsight_build_survey

    report = hindsight_build_survey(question_ids=ids, builder="offline")
    for line in survey_text(report):
        print(line, file=sys.stderr)
    built = {row.external_id: row for row in report.rows}
    result: dict[str, Any] = {
        "database": database,
        "archive_load_seconds": load_seconds,
        "builder": "offline",
        "halves": {},
    }
    for half, gold in halves.items():
        scored = [_scored(question, built.get(question.question)) for question in gold]
        result["halves"][half] = {"overall": _overall(scored), "questions": [row for row, _ in scored]}
    print(json.dumps(result, indent=1, ensure_ascii=False))
    _print_table(result["halves"])


def _halves(choice: str) -> dict[str, list[GoldQuestion]]:
    names = HALVES if choice == "both" else (choice,)
    return {half: load_gold(gold_path(half)) for half in names}


def _entries(path: Path, gold: list[GoldQuestion]) -> list[dict[str, Any]]:
    """The questions of the gold set, from the questions file; a gold question it lacks is an error."""
    by_id = {entry["external_id"]: entry for entry in json.loads(path.read_text(encoding="utf-8"))}
    missing = [q.question for q in gold if q.question not in by_id]
    if missing:
        raise SystemExit(f"{path}: no question {', '.join(missing)} (named by the gold set)")
    return [by_id[q] for q in dict.fromkeys(q.question for q in gold)]


def _scored(question: GoldQuestion, survey: Any) -> tuple[dict[str, Any], QuestionScore]:
    """The question's row of the report, and its score."""
    events, version = _graph_events(question.question)
    score = score_graph(question, events)
    row = {
        "question": question.question,
        "type": question.type,
        "graph": events is not None,
        "builder_version": version,
        "passed": bool(survey and survey.passed),
        "failures": list(survey.reasons) if survey else ["not built"],
        "seconds": survey.seconds if survey else None,
        **score.figures(),
        "missed": sorted(question.cause_ids - set(score.found_ids)),
    }
    return row, score


def _graph_events(external_id: str) -> tuple[list[GraphEvent] | None, str | None]:
    """The non-outcome events of the question's current graph as plain rows (None: no graph)."""
    from django.core.exceptions import ObjectDoesNotExist

    from grading.models import HindsightGraph

    graph = HindsightGraph.objects.filter(question__external_id=external_id, is_current=True).first()
    if graph is None:
        return None, None
    rows = []
    for event in graph.events.filter(is_outcome=False).prefetch_related("sources"):
        try:
            direction: str | None = event.impact.direction
        except ObjectDoesNotExist:
            direction = None
        sources = frozenset(_archive_id(a) for a in event.sources.all())
        rows.append(GraphEvent(key=event.key, sources=sources, direction=direction))
    return rows, graph.builder_version


def _archive_id(article: Any) -> str:
    """The archive's id of a stored article: its external id (import_archive), else its feed guid or
    the URL fragment under which an archive line was stored."""
    return str(article.external_id or article.guid or article.url.rpartition("#")[2])


def _overall(scored: list[tuple[dict[str, Any], QuestionScore]]) -> dict[str, Any]:
    rows = [row for row, _ in scored]
    totals = pool(score for _, score in scored)
    seconds = [row["seconds"] for row in rows if row["seconds"] is not None]
    return {
        **totals,
        "graphs": sum(row["graph"] for row in rows),
        "passed": sum(row["passed"] for row in rows),
        "seconds_mean": round(sum(seconds) / len(seconds), 2) if seconds else None,
        "seconds_max": max(seconds, default=None),
    }


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def _print_table(halves: dict[str, Any]) -> None:
    """Per question and pooled per half: the quality bar (passed, or passed of questions), events,
    gold causes found, recall, precision, direction agreement, build seconds (mean when pooled)."""
    print(
        f"{'half':<8} {'question':<46} {'pass':>5} {'events':>6} {'found':>11} {'recall':>6} {'prec':>5} "
        f"{'dir':>5} {'s':>5}",
        file=sys.stderr,
    )
    for half, data in halves.items():
        overall = data["overall"]
        pooled = {
            **overall,
            "question": "ALL (pooled)",
            "pass": f"{overall['passed']}/{overall['questions']}",
            "seconds": overall["seconds_mean"],
        }
        for row in [*data["questions"], pooled]:
            mark = row.get("pass") or ("yes" if row["passed"] else "no")
            print(
                f"{half:<8} {row['question'][:46]:<46} {mark:>5} {row['events']:>6} "
                f"{row['found']:>5}/{row['causes']:<5} {_fmt(row['recall']):>6} {_fmt(row['precision']):>5} "
                f"{_fmt(row['direction_agreement']):>5} {_fmt(row['seconds']):>5}",
                file=sys.stderr,
            )


if __name__ == "__main__":
    main()
