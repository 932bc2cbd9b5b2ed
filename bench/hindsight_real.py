"""Benchmark of the offline hindsight builder on real reporting.

Stores the items of a real news archive (JSON Lines: id, published_at, title, text, url, source)
published in the questions' windows as articles, loads resolved replay questions written from that
archive (``load_questions`` format; by default the bench questions shipped with the builder's tests),
then runs ``build_hindsight --all-resolved`` with the offline builder: how many graphs pass the
quality thresholds, why the others fail, and how long each build took.

    bash scripts/with-services.sh .venv/bin/python bench/hindsight_real.py --archive PATH/documents.jsonl
    DATABASE_URL=sqlite:////tmp/bench.sqlite3 .venv/bin/python bench/hindsight_real.py --archive ...

Run it on a scratch database: it adds articles and questions.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

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
    parser.add_argument("--history-days", type=int, default=200, help="Archive days stored before each question opens.")
    parser.add_argument(
        "--story-names",
        type=Path,
        default=ROOT / "tests" / "grading" / "realworld" / "story_names.json",
        help="Per question, names that mark an item as on its subject (to measure the graphs' precision).",
    )
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from tests.grading.realworld import lines, load_archive

    questions = json.loads(args.questions.read_text(encoding="utf-8"))

    def when(value: str) -> datetime:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))

    start = min(when(q["open_at"]) for q in questions) - timedelta(days=args.history_days)
    end = max(when(q["resolved_at"]) for q in questions) + timedelta(days=8)
    began = time.perf_counter()
    stored = load_archive(lines(args.archive), start=start, end=end)
    print(f"stored {stored} archive items from {start.date()} to {end.date()} in {time.perf_counter() - began:.1f} s")
    call_command("load_questions", str(args.questions))
    prefixes = {q["external_id"].split(":", 1)[0] + ":" for q in questions}
    for prefix in sorted(prefixes):
        call_command("build_hindsight", all_resolved=True, external_id_prefix=prefix, builder="offline")
    if args.story_names.exists():
        on_subject(json.loads(args.story_names.read_text(encoding="utf-8")))


def on_subject(names: dict[str, list[str]]) -> None:
    """How many of each graph's events cite only items that name the question's subject (a measure;
    the names are the bench's annotation, not the builder's input)."""
    from grading.models import HindsightGraph

    total = hits = 0
    for graph in HindsightGraph.objects.filter(is_current=True, question__external_id__in=list(names)).order_by(
        "question__external_id"
    ):
        marks = names[graph.question.external_id or ""]
        events = list(graph.events.filter(is_outcome=False).prefetch_related("sources"))
        good = sum(all(any(m in f"{a.title} {a.summary}" for m in marks) for a in e.sources.all()) for e in events)
        total, hits = total + len(events), hits + good
        print(f"on subject {good}/{len(events)} events: {graph.question.external_id}")
    if total:
        print(f"on subject overall: {hits}/{total} events ({100 * hits / total:.0f}%)")


if __name__ == "__main__":
    main()
