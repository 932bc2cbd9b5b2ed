"""Benchmark of full three-axis grading.

Loads resolved binary and multiple-choice questions, each with a built hindsight reference of
--ref-events events (with outcome impacts and one source article each) and --per-question
forecasts (one per agent), each citing 5 sources and carrying a --forecast-events event graph.
Then, in one process against the database named by DATABASE_URL (PostgreSQL):

- full: ``grade_questions`` over every question, HINDSIGHT_GRADING_QUESTIONS_PER_RUN at a time as the
  sweeper sends them (outcome, evidence, reasoning, bulk writes): forecasts fully graded per second;
- floor: outcome-only scoring (correct, Brier, log score) of the same forecasts vectorised in
  NumPy, from arrays already in memory: forecasts per second;
- warm (``--warm``): a forced regrade of every question with the in-memory embedding cache and the
  matchers' per-text caches emptied, as a new worker process would start, so the guarded matcher's
  vectors and parse facts come from the store (``TextEmbedding``) that the first run filled (as the
  product fills it when a forecast is accepted and a graph is built): beside the first (cold) run's
  figures;
- profile: cProfile of a forced regrade of --profile-questions questions; the top functions by
  cumulative time go into the JSON under "profile" (by own time under "profile_own_time").

Beside wall-clock figures it reports the CPU seconds of the worker process and of the PostgreSQL
server (the machine is shared, so wall time depends on other jobs) and the load average.

Prints one JSON object. Goal: forecasts_per_second >= 2000.

    bash scripts/with-services.sh .venv/bin/python bench/grading.py                  # 10,000 forecasts
    bash scripts/with-services.sh .venv/bin/python bench/grading.py --questions 1000 --per-question 100
    bash scripts/with-services.sh .venv/bin/python bench/grading.py --questions 10 --per-question 50 --warm
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "platform")]

WORDS = [
    "budget",
    "parliament",
    "vote",
    "minister",
    "election",
    "central",
    "bank",
    "rates",
    "inflation",
    "trade",
    "deal",
    "tariff",
    "sanctions",
    "ceasefire",
    "talks",
    "summit",
    "protest",
    "court",
    "ruling",
    "strike",
    "union",
    "oil",
    "prices",
    "market",
    "shares",
    "growth",
    "forecast",
    "report",
    "agency",
    "border",
    "troops",
    "treaty",
    "coalition",
    "party",
    "leader",
    "resigns",
    "cabinet",
    "reform",
    "tax",
    "spending",
    "debt",
    "default",
    "bond",
    "yields",
    "currency",
    "exports",
    "imports",
    "drought",
    "harvest",
    "storm",
    "flood",
    "vaccine",
    "outbreak",
    "launch",
    "satellite",
    "merger",
    "lawsuit",
    "regulator",
    "approval",
    "ban",
    "recall",
    "energy",
    "grid",
    "pipeline",
    "referendum",
    "senate",
]


# Function words between every two content words, so that texts read like sentences (the guarded
# matcher takes a long run of content words for a stuffed title); all of them are stop words, so the
# lexical similarity sees the same tokens as without them.
GLUE = ["the", "of", "in", "on", "to"]


def sentence(rng: random.Random, n: int) -> str:
    words: list[str] = []
    for i in range(n):
        if i and i % 2 == 0:
            words.append(rng.choice(GLUE))
        words.append(rng.choice(WORDS))
    return " ".join(words).capitalize()


def setup(args: argparse.Namespace) -> tuple[list[int], int]:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from grading.models import HindsightEvent, HindsightGraph, OutcomeImpact
    from ingestion.models import Article, Question, Resolution
    from leaderboard.models import Agent, Forecast, Team

    rng = random.Random(args.seed)
    run = uuid.uuid4().hex[:8]
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    t_res = t0 + timedelta(days=90)
    team = Team.objects.create(name=f"Bench grading {run}", slug=f"bench-grading-{run}")
    agents = Agent.objects.bulk_create(
        Agent(team=team, name=f"g{i}", slug=f"bench-g-{run}-{i}", knowledge_cutoff=(t0 - timedelta(days=30)).date())
        for i in range(args.per_question)
    )
    options = ["Alpha", "Beta", "Gamma", "Delta"]
    questions = Question.objects.bulk_create(
        Question(
            title=f"Bench grading {run} {i}: {sentence(rng, 6)}?",
            type=Question.Type.MULTIPLE_CHOICE if i % 2 else Question.Type.BINARY,
            options=options if i % 2 else [],
            status=Question.Status.RESOLVED,
            track=Question.Track.LIVE,
            open_at=t0,
            close_at=t_res - timedelta(days=5),
            domain="bench",
        )
        for i in range(args.questions)
    )
    Resolution.objects.bulk_create(
        Resolution(
            question=q,
            version=1,
            kind=Resolution.Kind.RESOLVE,
            outcome=rng.choice(options) if q.type == Question.Type.MULTIPLE_CHOICE else rng.random() < 0.5,
            resolved_at=t_res,
            author_label="bench",
            created_at=t_res,
        )
        for q in questions
    )
    n_articles = args.ref_events + 10
    articles = Article.objects.bulk_create(
        Article(
            url=f"https://bench.example.org/{run}/{qi}/{k}",
            title=sentence(rng, 8),
            published_at=t0 + timedelta(days=rng.randint(0, 89)),
            fetched_at=t_res,
            content_hash=f"{run}-{qi}-{k}",
        )
        for qi in range(len(questions))
        for k in range(n_articles)
    )
    graphs = HindsightGraph.objects.bulk_create(
        HindsightGraph(
            question=q,
            version=1,
            is_current=True,
            builder="offline",
            builder_version="bench",
            graph_built=True,
            resolution_version=1,
            created_at=t_res,
        )
        for q in questions
    )
    events: list[Any] = []
    ref_titles: list[list[tuple[str, Any]]] = []
    for graph in graphs:
        titles = []
        for k in range(args.ref_events):
            title, day = sentence(rng, 6), (t0 + timedelta(days=3 * k)).date()
            titles.append((title, day))
            events.append(
                HindsightEvent(
                    graph=graph,
                    key=f"e{k}",
                    title=title,
                    description=sentence(rng, 12),
                    occurred_on=day,
                    event_type="Decision",
                )
            )
        ref_titles.append(titles)
    HindsightEvent.objects.bulk_create(events, batch_size=5000)
    OutcomeImpact.objects.bulk_create(
        (
            OutcomeImpact(event=e, direction="Positive", magnitude=rng.random(), confidence=rng.random())
            for i, e in enumerate(events)
            if i % 3 != 2
        ),
        batch_size=5000,
    )
    HindsightEvent.sources.through.objects.bulk_create(
        (
            HindsightEvent.sources.through(
                hindsightevent_id=e.pk,
                article_id=articles[(i // args.ref_events) * n_articles + i % args.ref_events].pk,
            )
            for i, e in enumerate(events)
        ),
        batch_size=5000,
    )
    forecasts = []
    for qi, q in enumerate(questions):
        titles = ref_titles[qi]
        for agent in agents:
            graph_events = []
            for k in range(args.forecast_events):
                if rng.random() < 0.5:  # a paraphrase of a reference event, near its date
                    title, day = titles[rng.randrange(len(titles))]
                    words = title.split()
                    rng.shuffle(words)
                    title = " ".join(words[:5]) + " " + rng.choice(WORDS)
                    day = day + timedelta(days=rng.randint(-9, 9))
                else:
                    title, day = sentence(rng, 6), (t0 + timedelta(days=rng.randint(0, 90))).date()
                graph_events.append(
                    {"id": f"f{k}", "title": title, "description": sentence(rng, 10), "date": day.isoformat()}
                )
            if q.type == Question.Type.BINARY:
                prediction: dict[str, Any] = {"probability": round(rng.random(), 3)}
            else:
                raw = [rng.random() + 0.01 for _ in options]
                prediction = {"probabilities": {o: v / sum(raw) for o, v in zip(options, raw, strict=True)}}
            forecasts.append(
                Forecast(
                    agent=agent,
                    question=q,
                    received_at=t0 + timedelta(days=rng.randint(1, 80)),
                    prediction=prediction,
                    graph={"events": graph_events, "edges": []},
                )
            )
    Forecast.objects.bulk_create(forecasts, batch_size=5000)
    Forecast.cited_articles.through.objects.bulk_create(
        (
            Forecast.cited_articles.through(
                forecast_id=f.pk, article_id=articles[qi * n_articles + rng.randrange(n_articles)].pk
            )
            for qi, q in enumerate(questions)
            for f in forecasts[qi * len(agents) : (qi + 1) * len(agents)]
            for _ in range(5)
        ),
        batch_size=10000,
        ignore_conflicts=True,
    )
    # A live database has planner statistics; right after a bulk load it has none until autovacuum
    # gets to it, and grading would then run on plans made for empty tables.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return [q.pk for q in questions], len(forecasts)


def loadavg() -> list[float]:
    """1, 5 and 15 minute load averages (the machine is shared: read figures beside them)."""
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


def server_cpu_seconds() -> float:
    """CPU seconds (user + system) used so far by the whole PostgreSQL server: the postmaster, its
    live processes (every backend, including a grading run's writer connection) and, through the
    postmaster's children totals, the backends that have exited.

    Read from /proc, so only when the server runs on this machine (scripts/with-services.sh);
    0.0 otherwise, and the CPU figure then covers the worker process alone.
    """
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]

    def stat(process: int | str) -> list[str]:
        # Fields after the ")" that closes the command name: state is [0], ppid [1], utime [11],
        # stime [12], cutime [13], cstime [14].
        return Path(f"/proc/{process}/stat").read_text().rsplit(")", 1)[1].split()

    try:
        postmaster = int(stat(pid)[1])
        fields = stat(postmaster)
    except OSError:
        return 0.0
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            child = stat(entry.name)
        except OSError:
            continue
        if int(child[1]) == postmaster:
            ticks += int(child[11]) + int(child[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def new_process() -> None:
    """Forget what this process computed, as a new worker starts: the in-memory embedding cache and
    every per-text and per-pair cache of the matchers (tokens, claims, parses, verdicts), so that only
    the store is warm. The parser stays loaded (a worker loads it once, as it loads the embedder)."""
    import functools

    from grading.embeddings import stored_embedding_cache
    from grading.scoring import event_features, guarded, pair_verdicts, polarity, text

    stored_embedding_cache.cache_clear()
    for module in (event_features, guarded, pair_verdicts, polarity, text):
        for name, value in vars(module).items():
            if isinstance(value, functools._lru_cache_wrapper) and name != "load_parser":
                value.cache_clear()
    # The parse of each text is kept in a plain dictionary.
    event_features._cache.clear()


def numpy_floor(question_ids: list[int]) -> tuple[float, int]:
    """Outcome-only scoring of the same forecasts, vectorised: (seconds, forecasts scored)."""
    import numpy as np

    from ingestion.models import Question
    from leaderboard.models import Forecast

    questions = {q.pk: q for q in Question.objects.filter(pk__in=question_ids)}
    outcomes = {q.pk: q.current_resolution.outcome for q in questions.values()}  # type: ignore[union-attr]
    binary_p, binary_y, mc_p, mc_y = [], [], [], []
    for qid, prediction in Forecast.objects.filter(question_id__in=question_ids).values_list(
        "question_id", "prediction"
    ):
        q = questions[qid]
        if q.type == Question.Type.BINARY:
            binary_p.append(prediction["probability"])
            binary_y.append(1.0 if outcomes[qid] else 0.0)
        else:
            mc_p.append([prediction["probabilities"][o] for o in q.options])
            mc_y.append(q.options.index(outcomes[qid]))
    started = time.perf_counter()
    p, y = np.asarray(binary_p), np.asarray(binary_y)
    correct = (p - 0.5) * (y - 0.5) > 0  # a 50% forecast makes no call
    brier = (p - y) ** 2
    log = np.log(np.clip(np.where(y == 1, p, 1 - p), 1e-6, 1 - 1e-6))
    m = np.asarray(mc_p) if mc_p else np.zeros((0, 1))  # (forecasts, options), also with no such question
    m = m / m.sum(axis=1, keepdims=True)
    onehot = np.zeros_like(m)
    onehot[np.arange(len(mc_y)), mc_y] = 1.0
    mc_correct = m.argmax(axis=1) == np.asarray(mc_y)
    mc_brier = 0.5 * ((m - onehot) ** 2).sum(axis=1)
    mc_log = np.log(np.clip(m[np.arange(len(mc_y)), mc_y], 1e-6, 1 - 1e-6))
    elapsed = time.perf_counter() - started
    assert correct.size + mc_correct.size == len(binary_p) + len(mc_p)
    _ = (brier.sum(), log.sum(), mc_brier.sum(), mc_log.sum())
    return elapsed, len(binary_p) + len(mc_p)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--per-question", type=int, default=100, help="Forecasts (agents) per question.")
    parser.add_argument("--ref-events", type=int, default=30)
    parser.add_argument("--forecast-events", type=int, default=15)
    parser.add_argument("--profile-questions", type=int, default=20)
    parser.add_argument("--profile-top", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--warm", action="store_true", help="Also regrade with the embedding store filled.")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    os.environ["HINDSIGHT_LLM_MODEL"] = ""
    os.environ.setdefault("DJANGO_LOG_LEVEL", "WARNING")

    started = time.perf_counter()
    question_ids, n_forecasts = setup(args)
    setup_seconds = time.perf_counter() - started

    from django.conf import settings

    from grading.embeddings import stored_embedding_cache
    from grading.models import TextEmbedding
    from grading.scoring.event_features import facts_counts
    from leaderboard.models import Grade
    from leaderboard.services.grade_runs import grade_questions

    stored_before = TextEmbedding.objects.count()
    stored_embedding_cache.cache_clear()
    load_before = loadavg()
    backend = server_cpu_seconds()
    cpu_started = time.process_time()
    started = time.perf_counter()
    # As the sweeper sends them: HINDSIGHT_GRADING_QUESTIONS_PER_RUN questions per grading task.
    per_run = max(1, settings.HINDSIGHT_GRADING_QUESTIONS_PER_RUN)
    for start in range(0, len(question_ids), per_run):
        grade_questions(question_ids=question_ids[start : start + per_run])
    full_seconds = time.perf_counter() - started
    worker_cpu = time.process_time() - cpu_started
    db_cpu = server_cpu_seconds() - backend
    load_after = loadavg()
    graded = Grade.objects.filter(forecast__question_id__in=question_ids, is_current=True).count()
    assert graded == n_forecasts, (graded, n_forecasts)
    with_reasoning = Grade.objects.filter(
        forecast__question_id__in=question_ids,
        is_current=True,
        key_event_recall__isnull=False,
        source_precision__isnull=False,
    ).count()

    embedded_cold = stored_embedding_cache().embedded
    warm: dict[str, Any] = {}
    if args.warm:
        new_process()
        parses = facts_counts.copy()
        backend = server_cpu_seconds()
        cpu_started = time.process_time()
        started = time.perf_counter()
        for start in range(0, len(question_ids), per_run):
            grade_questions(question_ids=question_ids[start : start + per_run], force=True)
        seconds = time.perf_counter() - started
        cpu = time.process_time() - cpu_started + server_cpu_seconds() - backend
        warm = {
            "warm_seconds": round(seconds, 3),
            "warm_forecasts_per_second": round(n_forecasts / seconds, 1),
            "warm_forecasts_per_cpu_second": round(n_forecasts / cpu, 1) if cpu > 0 else None,
            "warm_texts_embedded": stored_embedding_cache().embedded,
            "warm_texts_read_from_store": stored_embedding_cache().loaded,
            "warm_texts_parsed": facts_counts["parsed"] - parses["parsed"],
            "warm_facts_read_from_store": facts_counts["read"] - parses["read"],
        }

    floor_seconds, floor_n = numpy_floor(question_ids)

    profiler = cProfile.Profile()
    subset = question_ids[: args.profile_questions]
    profiled = Grade.objects.filter(forecast__question_id__in=subset, is_current=True).count()
    profile_started = time.perf_counter()
    profiler.enable()
    for start in range(0, len(subset), per_run):
        grade_questions(question_ids=subset[start : start + per_run], force=True)
    profiler.disable()
    profile_seconds = time.perf_counter() - profile_started
    stats = pstats.Stats(profiler, stream=io.StringIO())
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = profile_seconds  # percentages of the profiled run's wall time

    def label(k: tuple[str, int, str]) -> str:
        path = Path(k[0])
        where = f"{path.parent.name}/{path.name}:{k[1]}" if k[1] else k[0]
        return f"{where}({k[2]})"

    by_cumulative = sorted(raw.items(), key=lambda kv: kv[1][3], reverse=True)[: args.profile_top]
    by_own = sorted(raw.items(), key=lambda kv: kv[1][2], reverse=True)[: args.profile_top]
    profile = [f"{v[3] / total * 100:5.1f}% cum {v[3]:.3f}s calls {v[1]} {label(k)}" for k, v in by_cumulative]
    profile_own = [f"{v[2] / total * 100:5.1f}% own {v[2]:.3f}s calls {v[1]} {label(k)}" for k, v in by_own]

    rate = n_forecasts / full_seconds
    cpu_seconds = worker_cpu + db_cpu
    floor_rate = floor_n / floor_seconds if floor_seconds > 0 else float("inf")
    print(
        json.dumps(
            {
                "questions": len(question_ids),
                "forecasts": n_forecasts,
                "forecasts_with_evidence_and_reasoning": with_reasoning,
                "reference_events": args.ref_events,
                "forecast_events": args.forecast_events,
                "questions_per_run": per_run,
                "setup_seconds": round(setup_seconds, 2),
                "seconds": round(full_seconds, 3),
                "forecasts_per_second": round(rate, 1),
                "cpu_seconds_worker": round(worker_cpu, 3),
                "cpu_seconds_postgres_server": round(db_cpu, 3),
                "forecasts_per_cpu_second": round(n_forecasts / cpu_seconds, 1) if cpu_seconds > 0 else None,
                "matcher": settings.HINDSIGHT_MATCHER,
                "stored_embeddings_before": stored_before,
                "texts_embedded": embedded_cold,
                **warm,
                "loadavg_before": load_before,
                "loadavg_after": load_after,
                "floor_numpy_outcome_seconds": round(floor_seconds, 5),
                "floor_numpy_outcome_per_second": round(floor_rate, 1),
                "ratio_full_vs_floor": round(rate / floor_rate, 6),
                "goal_per_second": 2000,
                "goal_met": rate >= 2000,
                "profile_questions": len(subset),
                "profile_forecasts": profiled,
                "profile_seconds_with_profiler": round(profile_seconds, 3),
                "profile": profile,
                "profile_own_time": profile_own,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
