"""Benchmark of the offline hindsight builder on a generated archive of a million articles.

Builds the synthetic corpus of ``bench/gateway.py`` (Zipf vocabulary, publication dates over three
years: about 900 articles a day) in the database named by DATABASE_URL, unless ``--keep`` finds it
loaded; then loads ``--questions`` resolved replay questions whose titles use mid-frequency words of
that vocabulary, each open for 30 days somewhere in the span, and builds each one's graph with the
offline builder through the build service (the window is narrowed by full-text search before it is
read: ``grading.builders.window.WINDOW_MAX_ARTICLES``). Prints one JSON object: per build the
seconds, the articles the builder read, and the process's peak memory after it (flat memory: the
peak does not grow from build to build). The baseline in the same run (``--baseline``): one build
with the window read whole, as before narrowing.

    HINDSIGHT_PG_OPTIONS="-c shared_buffers=2GB -c random_page_cost=1.1" \\
      bash scripts/with-services.sh .venv/bin/python bench/hindsight_scale.py --articles 1000000 --baseline

The database must be empty or disposable: it adds (and, without ``--keep``, replaces) articles.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "platform"), str(ROOT / "bench")]

import gateway  # noqa: E402  (the corpus generator, after the sys.path lines above)


def peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=int, default=1_000_000)
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--vocabulary", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=int, default=2, help="parallel loaders on PostgreSQL")
    parser.add_argument("--keep", action="store_true", help="reuse the loaded corpus if the sizes match")
    parser.add_argument("--baseline", action="store_true", help="also build one question reading its window whole")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    os.environ.setdefault("DJANGO_LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from grading.builders import window
    from grading.models import GraphBuildAttempt
    from grading.services import hindsight_build
    from ingestion.models import Article, Question
    from ingestion.services.questions import questions_load

    call_command("migrate", verbosity=0)
    load_seconds = 0.0
    if not (args.keep and Article.objects.count() == args.articles):
        started = time.perf_counter()
        if connection.vendor == "postgresql":
            with connection.cursor() as cur:
                cur.execute("TRUNCATE ingestion_article CASCADE")
            gateway.load_postgresql(args.articles, args.seed, args.vocabulary, args.workers)
        else:
            Article.objects.all().delete()
            gateway.load_sqlite(args.articles, args.seed, args.vocabulary)
        load_seconds = time.perf_counter() - started

    rng = np.random.default_rng(args.seed + 2)
    vocabulary = gateway.make_vocabulary(args.vocabulary, np.random.default_rng(args.seed))
    head = len(dict.fromkeys(gateway.STOP_WORDS))
    words = vocabulary[head + 200 : head + 5000]  # neither the commonest words nor ones no article writes
    entries = []
    for n in range(args.questions + (1 if args.baseline else 0)):
        opened = gateway.START + timedelta(days=int(rng.integers(200, 3 * 365 - 60)))
        title = " ".join(str(w) for w in rng.choice(words, 4, replace=False))
        entries.append(
            {
                "external_id": f"scale-bench:{args.seed}:{n}",
                "title": f"Will the {title} happen by {(opened + timedelta(days=30)):%d %B %Y}?",
                "type": "binary",
                "track": "replay",
                "open_at": opened.isoformat(),
                "close_at": (opened + timedelta(days=30)).isoformat(),
                "resolution_criteria": f"Resolves Yes if the {title} happens.",
                "background": "",
                "outcome": True,
                "resolved_at": (opened + timedelta(days=30)).isoformat(),
            }
        )
    Question.objects.filter(external_id__startswith=f"scale-bench:{args.seed}:").delete()
    questions_load(entries=entries)
    now = datetime.now(UTC)
    rows = []
    before = peak_mb()
    for n, entry in enumerate(entries):
        question = Question.objects.get(external_id=entry["external_id"])
        whole = args.baseline and n == len(entries) - 1
        limit = window.WINDOW_MAX_ARTICLES
        if whole:
            window.WINDOW_MAX_ARTICLES = 10**9
        started = time.perf_counter()
        graph = hindsight_build(question_id=question.pk, builder="offline", now=now)
        seconds = time.perf_counter() - started
        window.WINDOW_MAX_ARTICLES = limit
        attempt = GraphBuildAttempt.objects.filter(question=question).order_by("-id").first()
        log = attempt.log[0] if attempt is not None and attempt.log else {}
        rows.append(
            {
                "question": entry["external_id"],
                "window": "read whole (baseline)" if whole else "narrowed",
                "seconds": round(seconds, 2),
                "articles_read": log.get("window_articles"),
                "events": graph.quality.get("events") if graph is not None else None,
                "reason": attempt.reason if attempt is not None else None,
                "peak_mb_after": peak_mb(),
            }
        )
    narrowed = [r["seconds"] for r in rows if r["window"] == "narrowed"]
    print(
        json.dumps(
            {
                "database": connection.vendor,
                "articles": Article.objects.count(),
                "corpus_load_seconds": round(load_seconds, 1),
                "peak_mb_before_builds": before,
                "builds": rows,
                "narrowed_build_seconds_max": max(narrowed) if narrowed else None,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
