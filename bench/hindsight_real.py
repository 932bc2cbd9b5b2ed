"""Benchmark of the offline hindsight builder on real reporting.

Stores the items of a real news archive (JSON Lines: id, published_at, title, text, url, source)
published in the questions' windows as articles, loads resolved replay questions written from that
archive (``load_questions`` format; by default the bench questions shipped with the builder's tests),
then builds every question's graph with the offline builder (``build_hindsight --all-resolved``, its
text report on stderr) and prints one JSON object: per question whether the graph passes the quality
thresholds, why not, how many relevant articles the build found, how many of its events are on the
question's subject (by the names in ``story_names.json``, an annotation the builder never reads) and
the build time. The baseline beside it: the same graphs checked against the configured sources
threshold instead of the one fitted to the archive.

    bash scripts/with-services.sh .venv/bin/python bench/hindsight_real.py --archive PATH/documents.jsonl
    DATABASE_URL=sqlite:////tmp/bench.sqlite3 .venv/bin/python bench/hindsight_real.py --archive ...

Run it on a scratch database: it adds articles and questions.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from hindsight_runs import ROOT, django_setup, load_questions, survey_text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", type=Path, required=True, help="The archive, JSON Lines.")
    parser.add_argument(
        "--questions",
        type=Path,
        default=ROOT / "tests" / "grading" / "realworld" / "questions.json",
        help="Resolved questions in load_questions format.",
    )
    parser.add_argument("--history-days", type=int, default=200, help="Archive days stored before each question opens.")
    parser.add_argument(
        "--story-names",
        type=Path,
        default=ROOT / "tests" / "grading" / "realworld" / "story_names.json",
        help="Per question, names that mark an item as on its subject (to measure the graphs' precision).",
    )
    args = parser.parse_args()

    django_setup(scratch=False)
    from django.conf import settings

    from tests.grading.realworld import lines, load_archive

    questions = json.loads(args.questions.read_text(encoding="utf-8"))

    def when(value: str) -> datetime:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))

    start = min(when(q["open_at"]) for q in questions) - timedelta(days=args.history_days)
    end = max(when(q["resolved_at"]) for q in questions) + timedelta(days=8)
    began = time.perf_counter()
    stored = load_archive(lines(args.archive), start=start, end=end)
    load_seconds = round(time.perf_counter() - began, 2)
    ids = load_questions(questions)

    from grading.batch_builds import hindsight_build_survey
    from grading.models import HindsightGraph

    report = hindsight_build_survey(question_ids=ids, builder="offline")
    for line in survey_text(report):
        print(line, file=sys.stderr)
    graphs = {g.question_id: g for g in HindsightGraph.objects.filter(is_current=True, question_id__in=ids)}
    names = json.loads(args.story_names.read_text(encoding="utf-8")) if args.story_names.exists() else {}
    rows = []
    for row in report.rows:
        graph = graphs.get(row.question_id)
        configured = row.sources >= settings.HINDSIGHT_GRAPH_MIN_SOURCES
        rows.append(
            {
                "question": row.external_id,
                "passed": row.passed,
                "passed_with_configured_sources": row.passed and configured,
                "events": row.events,
                "sources": row.sources,
                "sources_needed": row.min_sources,
                "depth": row.depth,
                "relevant_articles": row.relevant,
                "on_subject_events": _on_subject(graph, names.get(row.external_id)),
                "failures": list(row.reasons),
                "seconds": row.seconds,
            }
        )
    result = {
        "archive_items_stored": stored,
        "archive_load_seconds": load_seconds,
        "questions": len(rows),
        "passed": sum(r["passed"] for r in rows),
        "baseline_passed_with_configured_sources": sum(r["passed_with_configured_sources"] for r in rows),
        "build_seconds": report.seconds,
        "rows": rows,
    }
    print(json.dumps(result, indent=1, ensure_ascii=False))


def _on_subject(graph: Any, marks: list[str] | None) -> str | None:
    """How many of the graph's events cite only items that name the question's subject (a measure;
    the names are the bench's annotation, never the builder's input)."""
    if graph is None or not marks:
        return None
    events = list(graph.events.filter(is_outcome=False).prefetch_related("sources"))
    good = sum(all(any(m in f"{a.title} {a.summary}" for m in marks) for a in e.sources.all()) for e in events)
    return f"{good}/{len(events)}"


if __name__ == "__main__":
    main()
