"""Benchmark of the offline hindsight builder on real reporting.

Imports a real news archive (JSON Lines, as ``import_archive`` reads it: the real path, so the
items keep their ``topic_path`` and ids), loads resolved replay questions written from that archive
(``load_questions`` format; by default the bench questions shipped with the builder's tests; the 49
real replay questions with ``--questions ingestion/data/real_replay/questions.json``), then builds
every question's graph with the offline builder (``build_hindsight --all-resolved``, its text report
on stderr) and prints one JSON object: per question whether the graph passes the quality thresholds,
why not, how many relevant articles the build found, how many of its events are on the question's
subject and the build time. On-subject is judged by an annotation the builder never reads: the names
in ``story_names.json`` (bench questions) or the storyline pattern of
``ingestion/data/real_replay/storylines.json`` (real replay questions), matched against every source
of the event. The baseline beside it: the same graphs checked against the configured sources
threshold instead of the one fitted to the archive.

    bash scripts/with-services.sh .venv/bin/python bench/hindsight_real.py --archive PATH/documents.jsonl
    DATABASE_URL=sqlite:////tmp/bench.sqlite3 .venv/bin/python bench/hindsight_real.py --archive ...

Run it on a scratch database: it adds articles and questions.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "platform")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", type=Path, required=True, help="The archive, JSON Lines.")
    parser.add_argument(
        "--questions",
        type=Path,
        default=ROOT / "tests" / "grading" / "realworld" / "questions.json",
        help="Resolved questions in load_questions format.",
    )
    parser.add_argument(
        "--story-names",
        type=Path,
        default=ROOT / "tests" / "grading" / "realworld" / "story_names.json",
        help="Per question, names that mark an item as on its subject (to measure the graphs' precision).",
    )
    parser.add_argument(
        "--storylines",
        type=Path,
        default=ROOT / "ingestion" / "data" / "real_replay" / "storylines.json",
        help="Per question, the pattern (matched against an item's text and topic_path) of its storyline.",
    )
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from ingestion.models import Article

    questions = json.loads(args.questions.read_text(encoding="utf-8"))
    began = time.perf_counter()
    call_command("import_archive", str(args.archive), attribution="Wikipedia contributors", stdout=io.StringIO())
    stored = Article.objects.count()
    load_seconds = round(time.perf_counter() - began, 2)
    call_command("load_questions", str(args.questions), stdout=sys.stderr)

    from grading.batch_builds import hindsight_build_survey
    from grading.models import HindsightGraph
    from ingestion.models import Question

    keys = [q["external_id"] for q in questions]
    ids = list(Question.objects.filter(external_id__in=keys).order_by("id").values_list("id", flat=True))
    report = hindsight_build_survey(question_ids=ids, builder="offline")
    for line in _survey_text(report):
        print(line, file=sys.stderr)
    graphs = {g.question_id: g for g in HindsightGraph.objects.filter(is_current=True, question_id__in=ids)}
    names = json.loads(args.story_names.read_text(encoding="utf-8")) if args.story_names.exists() else {}
    patterns = json.loads(args.storylines.read_text(encoding="utf-8")) if args.storylines.exists() else {}
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
                "on_subject_events": _on_subject(graph, names.get(row.external_id), patterns.get(row.external_id)),
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
        "slowest_build_seconds": max((r["seconds"] for r in rows), default=None),
        "on_subject_events": _total(r["on_subject_events"] for r in rows),
        "rows": rows,
    }
    print(json.dumps(result, indent=1, ensure_ascii=False))


def _survey_text(report: Any) -> list[str]:
    out = io.StringIO()
    from grading.management.commands.build_hindsight import Command

    Command(stdout=out)._write_survey(report)
    return out.getvalue().splitlines()


def _total(fractions: Any) -> str:
    pairs = [tuple(int(n) for n in f.split("/")) for f in fractions if f]
    return f"{sum(a for a, _ in pairs)}/{sum(b for _, b in pairs)}"


def _on_subject(graph: Any, marks: list[str] | None, pattern: str | None) -> str | None:
    """How many of the graph's events cite only items on the question's subject (a measure; the
    names and patterns are the bench's annotation, never the builder's input)."""
    if graph is None or not (marks or pattern):
        return None
    storyline = re.compile(pattern, re.IGNORECASE) if pattern else None

    def on_subject(article: Any) -> bool:
        text = f"{article.title} {article.summary}"
        if storyline is not None:
            return bool(storyline.search(" ".join([text, *((article.extra or {}).get("topic_path") or [])])))
        return any(m in text for m in marks or ())

    events = list(graph.events.filter(is_outcome=False).prefetch_related("sources"))
    good = sum(all(on_subject(a) for a in e.sources.all()) for e in events)
    return f"{good}/{len(events)}"


if __name__ == "__main__":
    main()
