"""Benchmark of the standings: full rebuild and leaderboard read latency on PostgreSQL.

Loads A agents x Q binary questions with P graded forecasts per question (full size: 1,000 x 10,000 x
100 = 1,000,000 grades; ``--size fit``: 1,000 x 100,000 x 10, the same grades over ten times the
questions) using COPY, then measures in the same run:

- ``aggregation_seconds``: ``standings_rebuild()`` without the bootstrap and without the
  fixed-effects fit (every materialised view, peer and time-averaged scores included);
- ``bootstrap_pass_seconds``: with the bootstrap, without the fit;
- ``rebuild_seconds``: the full rebuild (bootstrap and fit), and what the bootstrap and the fit each
  add (aim: the fit adds no more than the bootstrap does);
- p50/p95 latency of ``/leaderboard/`` and ``/api/v1/leaderboard/`` under 20 concurrent readers
  (gunicorn on a free loopback port, httpx threads), over a mix of materialised views.

Goals: rebuild <= 60 s, page p95 <= 100 ms. Prints one JSON object.

    bash scripts/with-services.sh .venv/bin/python bench/standings.py --agents 100 --questions 1000 --per-question 20
    bash scripts/with-services.sh .venv/bin/python bench/standings.py --size full
    bash scripts/with-services.sh .venv/bin/python bench/standings.py --size fit --no-http
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import sys
import threading
import time
import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "platform"), str(ROOT / "bench")]

from submit import free_port, percentile, start_gunicorn, stop  # noqa: E402

SIZES = {
    "small": (100, 1000, 20),
    "medium": (300, 3000, 50),
    "full": (1000, 10000, 100),
    "fit": (1000, 100_000, 10),
}


def _text(value: Any) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, dict | list):
        return json.dumps(value).replace("\\", "\\\\")
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _column_text(values: Any) -> list[str]:
    """COPY text of each value of a column (vectorised for numpy arrays)."""
    if isinstance(values, np.ndarray):
        if values.dtype == np.bool_:
            return np.where(values, "t", "f").tolist()  # type: ignore[no-any-return]
        if values.dtype.kind == "f":
            return ["\\N" if v != v else repr(v) for v in values.tolist()]
        return list(map(str, values.tolist()))
    return [_text(v) for v in values]


def copy_rows(model: Any, columns: dict[str, Any], n: int, chunk: int = 250_000) -> None:
    """COPY n rows into model's table; ``columns`` maps field name -> array of n values or a constant.

    Constant columns are joined once into a shared row suffix, so each row costs one join of its
    varying columns: about a second per 10^5 rows less than formatting every field of every row.
    """
    from django.db import connection

    fields = [f for f in model._meta.concrete_fields if not (f.primary_key and f.name not in columns)]
    varying: list[tuple[str, Any]] = []
    constant: list[tuple[str, str]] = []
    for f in fields:
        if f.name in columns:
            v = columns[f.name]
        elif f.attname in columns:
            v = columns[f.attname]
        else:
            v = (
                f.get_default()
                if f.has_default()
                else (
                    ""
                    if getattr(f, "blank", False) and f.get_internal_type() in ("CharField", "TextField", "SlugField")
                    else None
                )
            )
        if isinstance(v, np.ndarray) or (isinstance(v, list) and len(v) == n and n > 0):
            varying.append((f.column, v))
        else:
            constant.append((f.column, _text(v)))
    names = [c for c, _ in varying] + [c for c, _ in constant]
    suffix = "\t".join(t for _, t in constant)
    sql = f"COPY {model._meta.db_table} ({', '.join(names)}) FROM STDIN"
    with connection.cursor() as cursor:
        for start in range(0, n, chunk):
            stop_at = min(n, start + chunk)
            cols = [_column_text(v[start:stop_at]) for _, v in varying]
            if constant:
                cols.append([suffix] * (stop_at - start))
            text = "\n".join(map("\t".join, zip(*cols, strict=True))) + "\n"
            with cursor.cursor.copy(sql) as copy:
                copy.write(text)


def load(n_agents: int, n_questions: int, per_question: int, seed: int) -> int:
    from django.db import connection, transaction

    from ingestion.models import Question, Resolution
    from leaderboard.models import Agent, Forecast, Grade, Team

    rng = np.random.default_rng(seed)
    run = uuid.uuid4().hex[:8]
    t0 = datetime(2025, 6, 1, tzinfo=UTC)
    with transaction.atomic():
        team = Team.objects.create(name=f"Bench standings {run}", slug=f"bench-standings-{run}")
        agents = Agent.objects.bulk_create(
            [
                Agent(
                    team=team,
                    name=f"bench-{run}-{i}",
                    slug=f"bench-{run}-{i}",
                    model_name="bench",
                    knowledge_cutoff=None if i % 25 == 0 else date(2025, 1 + i % 12, 1),
                )
                for i in range(n_agents)
            ]
        )
        domains = ["politics", "economy", "science", "sport", "technology"]
        origins = ["market", "news", "imported", "admin"]
        questions = Question.objects.bulk_create(
            [
                Question(
                    title=f"Bench standings {run} {i}?",
                    type=Question.Type.BINARY,
                    status=Question.Status.RESOLVED,
                    track=Question.Track.REPLAY if i % 4 == 0 else Question.Track.LIVE,
                    outcome_published_at=t0,
                    open_at=t0 + timedelta(hours=i),
                    close_at=t0 + timedelta(hours=i, days=20),
                    horizon_days=int(rng.integers(1, 200)),
                    domain=domains[i % 5],
                    origin=origins[i % 4],
                )
                for i in range(n_questions)
            ],
            batch_size=2000,
        )
        outcomes = rng.random(n_questions) < 0.4
        Resolution.objects.bulk_create(
            [
                Resolution(
                    question=q,
                    version=1,
                    kind=Resolution.Kind.RESOLVE,
                    outcome=bool(outcomes[i]),
                    resolved_at=q.close_at + timedelta(days=5),
                    created_at=q.close_at + timedelta(days=5),
                )
                for i, q in enumerate(questions)
            ],
            batch_size=2000,
        )
        agent_ids = np.array([a.pk for a in agents])
        q_ids = np.array([q.pk for q in questions])
        per = min(per_question, n_agents)
        picks = (
            np.argsort(rng.random((n_questions, n_agents)), axis=1)[:, :per]
            if n_agents * n_questions <= 2e7
            else np.stack([rng.choice(n_agents, per, replace=False) for _ in range(n_questions)])
        )
        f_agent = agent_ids[picks.ravel()]
        q_index = np.repeat(np.arange(n_questions), per)
        f_question = q_ids[q_index]
        n = f_agent.size
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {Forecast._meta.db_table}")
            first_id = int(cursor.fetchone()[0]) + 1
        ids = np.arange(first_id, first_id + n)
        p = np.clip(np.round(rng.beta(2, 2, n), 3), 0.001, 0.999)
        stamps = [(t0 + timedelta(hours=h, minutes=5)).isoformat() for h in range(n_questions)]
        received = [stamps[h] for h in q_index.tolist()]
        # Referential checks per COPY row cost more than the load itself; the rows are built
        # consistent, so the bench loads them as a replica would (superuser only: else checks run).
        with connection.cursor() as cursor:
            try:
                with transaction.atomic():
                    cursor.execute("SET LOCAL session_replication_role = replica")
            except Exception:
                pass
        copy_rows(
            Forecast,
            {
                "id": ids,
                "agent": f_agent,
                "question": f_question,
                "received_at": received,
                "prediction": [f'{{"probability": {x!r}}}' for x in p.tolist()],
                "sources": [],
                "channel": "api",
            },
            n,
        )
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{Forecast._meta.db_table}', 'id'), %s)", [int(ids[-1])]
            )
        y = outcomes[q_index].astype(float)
        p_y = np.where(y == 1, p, 1 - p)
        log = np.log(p_y)
        market_p = np.clip(rng.beta(2, 2, n), 0.01, 0.99)
        has_market = (q_index % 4) == 1
        m_y = np.where(y == 1, market_p, 1 - market_p)
        edge = np.where(has_market, log - np.log(m_y), np.nan)
        cutoff_declared = np.array([a.knowledge_cutoff is not None for a in agents])[picks.ravel()]
        copy_rows(
            Grade,
            {
                "forecast": ids,
                "version": 1,
                "is_current": True,
                "grader_version": "2.0",
                "matcher_settings": {},
                "resolution_version": 1,
                "void": False,
                "contaminated": rng.random(n) < 0.05,
                "cutoff_declared": cutoff_declared,
                "counts": True,
                "correct": (p - 0.5) * (y - 0.5) > 0,
                "brier": (p - y) ** 2,
                "log_score": log,
                "market_edge": edge,
                "source_precision": np.round(rng.random(n), 3),
                "key_event_recall": np.round(rng.random(n), 3),
                "details": {},
                "judge": "",
                "inputs_key": "",
                "created_at": t0,
            },
            n,
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return n


def readers(base: str, paths: list[str], concurrency: int, per_thread: int) -> dict[str, float]:
    """``concurrency`` threads, each with one keep-alive connection, each requesting ``per_thread``
    pages round-robin over ``paths``. Plain http.client: the client shares the 2 cores with the
    server, and a lighter client leaves more of them to what is measured."""
    host, port = base.removeprefix("http://").split(":")
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()

    def get(conn: http.client.HTTPConnection, path: str) -> int:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status

    def work(k: int) -> None:
        nonlocal errors
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        try:
            for path in paths[:3]:
                get(conn, path)  # warm up
            local: list[float] = []
            failed = 0
            for i in range(per_thread):
                t = time.perf_counter()
                try:
                    status = get(conn, paths[(k + i) % len(paths)])
                except (OSError, http.client.HTTPException):
                    conn.close()
                    conn = http.client.HTTPConnection(host, int(port), timeout=120)
                    status = 0
                local.append((time.perf_counter() - t) * 1000)
                failed += status != 200
        finally:
            conn.close()
        with lock:
            latencies.extend(local)
            errors += failed

    threads = [threading.Thread(target=work, args=(k,)) for k in range(concurrency)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    return {
        "requests": len(latencies),
        "errors": errors,
        "p50_ms": round(percentile(latencies, 50), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
        "max_ms": round(max(latencies), 1),
        "rps": round(len(latencies) / wall, 1),
    }


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def explain_grade_query() -> str:
    """EXPLAIN ANALYZE of the rebuild's grade query (the plan and where its time goes)."""
    from django.db import connection

    from leaderboard.selectors.grade_tables import grade_table_sql

    sql, params = grade_table_sql()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
        return "\n".join(r[0] for r in cursor.fetchall())


def profiled(fn: Any, top: int) -> tuple[Any, str]:
    import cProfile
    import pstats

    profile = cProfile.Profile()
    result = profile.runcall(fn)
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(top)
    return result, out.getvalue()


def cold_latency(base: str, paths: list[str]) -> dict[str, float]:
    """One uncached request per path (the first after a standings write), in ms."""
    out: dict[str, float] = {}
    with httpx.Client(base_url=base, timeout=120) as c:
        for path in paths:
            t = time.perf_counter()
            c.get(path)
            out[path] = round((time.perf_counter() - t) * 1000, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--agents", type=int)
    parser.add_argument("--questions", type=int)
    parser.add_argument("--per-question", type=int, help="graded forecasts per question")
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--requests", type=int, default=25, help="requests per reader per endpoint")
    # 2 cores: 2 processes keep both busy while one waits on PostgreSQL/Redis; 4 threads each let
    # cache hits (a Redis GET) overlap without piling 20 renders onto 2 cores.
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reuse", action="store_true", help="keep the grades already in the database (no load)")
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="print the top N of a cProfile of both passes and EXPLAIN ANALYZE of the grade query to stderr",
    )
    parser.add_argument("--no-http", action="store_true", help="measure the rebuild only")
    args = parser.parse_args()
    agents, questions, per = SIZES[args.size]
    agents, questions, per = args.agents or agents, args.questions or questions, args.per_question or per
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    import django

    django.setup()
    import logging

    from django.core.management import call_command

    from leaderboard.models import Grade
    from leaderboard.services.standings import standings_rebuild

    logging.getLogger("httpx").setLevel(logging.WARNING)
    call_command("migrate", verbosity=0, interactive=False)
    figures: dict[str, Any] = {}
    if args.reuse and Grade.objects.exists():
        grades = Grade.objects.count()
        figures["load_seconds"] = None
    else:
        t = time.perf_counter()
        grades = load(agents, questions, per, args.seed)
        figures["load_seconds"] = round(time.perf_counter() - t, 1)
        figures["load_loadavg"] = load_average()
        print(f"loaded {grades} grades in {figures['load_seconds']}s", file=sys.stderr, flush=True)
    if args.profile:
        print(explain_grade_query(), file=sys.stderr, flush=True)
    runs: dict[str, Any] = {}
    for name, bootstrap, difficulty in (
        ("aggregation", False, False),
        ("bootstrap", True, False),
        ("full", True, True),
    ):
        before = load_average()
        if args.profile:
            result, stats = profiled(
                lambda b=bootstrap, d=difficulty: standings_rebuild(bootstrap=b, difficulty=d), args.profile
            )
            print(f"== cProfile of the {name} pass\n{stats}", file=sys.stderr, flush=True)
        else:
            result = standings_rebuild(bootstrap=bootstrap, difficulty=difficulty)
        runs[name] = (result, before, load_average())
        print(
            f"{name} pass {result.seconds:.1f}s ({result.views} views, {result.rows} rows)", file=sys.stderr, flush=True
        )
    aggregation, agg_before, agg_after = runs["aggregation"]
    boot, boot_before, boot_after = runs["bootstrap"]
    full, full_before, full_after = runs["full"]
    figures.update(
        {
            "agents": agents,
            "questions": questions,
            "grades_loaded": grades,
            "grades_in_standings": full.grades,
            "views": full.views,
            "standing_rows": full.rows,
            "rebuild_seconds": round(full.seconds, 2),
            "rebuild_loadavg": [full_before, full_after],
            "aggregation_seconds": round(aggregation.seconds, 2),
            "aggregation_loadavg": [agg_before, agg_after],
            "bootstrap_pass_seconds": round(boot.seconds, 2),
            "bootstrap_pass_loadavg": [boot_before, boot_after],
            "bootstrap_adds_seconds": round(boot.seconds - aggregation.seconds, 2),
            "fit_adds_seconds": round(full.seconds - boot.seconds, 2),
            "fit_aim_met": full.seconds - boot.seconds <= boot.seconds - aggregation.seconds,
            "rebuild_vs_aggregation": round(full.seconds / aggregation.seconds, 2) if aggregation.seconds else None,
            "rebuild_goal_met": full.seconds <= 60,
            "goals": {"rebuild_seconds_max": 60, "page_p95_ms_max": 100},
        }
    )
    if not args.no_http:
        port = free_port()
        proc = start_gunicorn(port, args.workers, args.threads, probe_path="/leaderboard/")
        base = f"http://127.0.0.1:{port}"
        views = [
            "",
            "?track=live",
            "?track=replay",
            "?type=binary",
            "?domain=economy",
            "?contamination=off",
            "?sort=-accuracy",
            "?page=2",
        ]
        pages = [f"/leaderboard/{v}" for v in views]
        apis = [f"/api/v1/leaderboard/{v}" for v in views]
        try:
            # A standings write bumps the version: the next request of each view renders afresh.
            from leaderboard.selectors.standings_cache import bump_standings_version

            bump_standings_version()
            figures["cold_ms"] = {"page": cold_latency(base, pages), "api": cold_latency(base, apis)}
            figures["gunicorn"] = {
                "workers": args.workers,
                "threads": args.threads,
                "worker_class": "config.asgi_worker.UvicornWorker",
            }
            before = load_average()
            figures["leaderboard_page"] = {
                **readers(base, pages, args.concurrency, args.requests),
                "loadavg": [before, load_average()],
            }
            before = load_average()
            figures["leaderboard_api"] = {
                **readers(base, apis, args.concurrency, args.requests),
                "loadavg": [before, load_average()],
            }
        finally:
            stop(proc)
        figures["page_goal_met"] = figures["leaderboard_page"]["p95_ms"] <= 100
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
