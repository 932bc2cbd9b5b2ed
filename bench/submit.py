"""Benchmark of forecast submission through the API.

Migrates the database named by DATABASE_URL (PostgreSQL), loads N agents (one token each) and N
open live binary questions, starts the production command (gunicorn with uvicorn workers on
config.asgi, production settings) on a free loopback port against that database, and measures over
real HTTP:

- in process (Django's test client, no HTTP): database statements and wall/CPU ms per submission;
- single endpoint paced at --rate requests/s (default 50), open loop: request i is due at
  start + i/rate and is sent by one of --client-threads threads with its own keep-alive
  connection; latency is from send to response. p50/p95/p99, the achieved send rate and the send
  lag (how late the client got a request out) for each of --paced-runs runs, plus best/median;
- single endpoint unpaced with --concurrency clients: forecasts accepted per second;
- batch endpoint (--batch-size forecasts per request): forecasts accepted per second;

beside the rate of inserting the same rows directly with the ORM's bulk_create in the same run
(the baseline). Prints one JSON object; ``batch_vs_direct`` is the ratio of the batch rate to the
direct rate. Goals: batch_vs_direct >= 0.25; single p95 < 50 ms at 50 requests/s (median of the
paced runs, achieved rate >= 95% of the offered one). The 1-minute load average is printed with
each paced run: on a shared machine, latency follows it.

    bash scripts/with-services.sh .venv/bin/python bench/submit.py
    bash scripts/with-services.sh .venv/bin/python bench/submit.py --agents 20 --questions 200 --requests 5000

Each body carries a probability, a rationale, two cited URLs and a three-event forecast graph.
Every run adds its own team, agents and questions; the database may hold earlier runs.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "platform")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def body(question_id: int, n: int) -> dict[str, Any]:
    return {
        "question": question_id,
        "prediction": {"probability": round(0.05 + (n % 90) / 100, 2)},
        "rationale": "Base rates of comparable events and the latest polling suggest a moderate chance. " * 2,
        "sources": [f"https://news.example.org/bench/{n % 97}", f"https://wire.example.com/item/{n % 89}"],
        "graph": {
            "events": [
                {"id": "e1", "title": "Talks open", "description": "Delegations meet.", "date": "2026-03-01"},
                {"id": "e2", "title": "Draft agreed", "description": "A draft text is agreed.", "date": "2026-04-10"},
                {"id": "e3", "title": "Vote scheduled", "description": "Parliament sets a date.", "date": "2026-05-02"},
            ],
            "edges": [
                {"source": "e1", "target": "e2", "relation": "Enables", "strength": 0.6, "confidence": 0.7},
                {"source": "e2", "target": "e3", "relation": "Triggers", "strength": 0.5, "confidence": 0.8},
            ],
        },
        "idempotency_key": f"bench-{uuid.uuid4().hex}",
    }


def setup(n_agents: int, n_questions: int) -> tuple[list[str], list[int], list[int]]:
    import django

    django.setup()
    import logging
    from datetime import UTC, datetime, timedelta

    from django.core.management import call_command

    logging.getLogger("httpx").setLevel(logging.WARNING)
    call_command("migrate", verbosity=0, interactive=False)
    from ingestion.models import Question
    from leaderboard.models import ApiToken
    from leaderboard.services.teams import agent_create, team_create, token_create

    run = uuid.uuid4().hex[:8]
    team = team_create(name=f"Bench {run}", owner=None)
    agents = [agent_create(team=team, name=f"bench-{run}-{i}", model_name="bench") for i in range(n_agents)]
    keys = [token_create(agent=a, issued_by=ApiToken.IssuedBy.COMMAND).key for a in agents]
    now = datetime.now(UTC)
    questions = Question.objects.bulk_create(
        [
            Question(
                title=f"Bench question {run}-{i}?",
                type=Question.Type.BINARY,
                status=Question.Status.OPEN,
                track=Question.Track.LIVE,
                open_at=now - timedelta(days=1),
                close_at=now + timedelta(days=30),
                domain="bench",
            )
            for i in range(n_questions)
        ]
    )
    return keys, [q.pk for q in questions], [a.pk for a in agents]


def start_gunicorn(
    port: int, workers: int, threads: int, *, probe_path: str = "/api/v1/questions/?limit=1"
) -> subprocess.Popen[bytes]:
    """The README's production command on 127.0.0.1:``port`` (gunicorn, uvicorn workers, config.asgi,
    production settings, ``threads`` site threads per worker), once ``probe_path`` answers 200."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY", "bench-" + uuid.uuid4().hex),
        "DJANGO_SECURE_COOKIES": "0",
        # Plain HTTP on loopback stands for the TLS-terminating proxy, which would redirect and send HSTS.
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_SECURE_HSTS_SECONDS": "0",
        "DJANGO_LOG_LEVEL": "WARNING",
        # The limiter still runs (one Redis increment per request); the budget just never runs out.
        "HINDSIGHT_RATE_LIMIT_REQUESTS": "1000000000",
        "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}",
        "HINDSIGHT_SITE_THREADS": str(threads),
    }
    cmd = [
        str(Path(sys.executable).parent / "gunicorn"),
        "config.asgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--worker-class",
        "config.asgi_worker.UvicornWorker",
        "--log-level",
        "warning",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}{probe_path}", timeout=5).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited with status {proc.returncode}")
        time.sleep(0.2)
    stop(proc)
    raise SystemExit("gunicorn did not answer within 60 s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _client(base: str, key: str, timeout: float = 30) -> httpx.Client:
    return httpx.Client(
        base_url=base,
        headers={"Authorization": f"Token {key}", "Content-Type": "application/json"},
        timeout=timeout,
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
    )


def encoded_bodies(questions: list[int], n: int, offset: int) -> list[bytes]:
    """Request bodies encoded before the clock starts, so the client spends its time sending."""
    return [json.dumps(body(questions[(offset + i) % len(questions)], offset + i)).encode() for i in range(n)]


def warm_up(base: str, keys: list[str], questions: list[int], n: int, threads: int) -> None:
    """Enough submissions over several connections that every gunicorn worker has served some."""
    bodies = encoded_bodies(questions, n, offset=10_000_000)

    def run(t: int) -> None:
        with _client(base, keys[t % len(keys)]) as c:
            for payload in bodies[t::threads]:
                c.post("/api/v1/forecasts/", content=payload)

    pool = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()


def paced_single(
    base: str, keys: list[str], questions: list[int], n: int, rate: float, threads: int, offset: int
) -> dict[str, Any]:
    """Open-loop load: request i is due at start + i/rate, whatever happened to earlier requests.

    Request i is sent by client thread i % threads, each with its own keep-alive connection, so a
    slow answer delays only that thread's next sends (shown as send lag) instead of the whole
    schedule. Latency is measured per request from send to the end of the response.
    """
    bodies = encoded_bodies(questions, n, offset)
    latencies: list[float] = [0.0] * n
    lags: list[float] = [0.0] * n
    accepted = [0] * threads
    sent_at: list[float] = [0.0] * n
    clients = [_client(base, keys[t % len(keys)]) for t in range(threads)]
    for c in clients:
        c.get("/api/v1/forecasts/?limit=1")  # open the connection before the clock starts
    interval = 1.0 / rate
    start = time.perf_counter() + 0.05

    def run(t: int) -> None:
        c = clients[t]
        for i in range(t, n, threads):
            due = start + i * interval
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            sent = time.perf_counter()
            response = c.post("/api/v1/forecasts/", content=bodies[i])
            done = time.perf_counter()
            sent_at[i] = sent
            latencies[i] = (done - sent) * 1000
            lags[i] = max(0.0, sent - due) * 1000
            accepted[t] += response.status_code == 201

    pool = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    finished = time.perf_counter()
    for c in clients:
        c.close()
    return {
        "requests": n,
        "accepted": sum(accepted),
        "client_threads": threads,
        "offered_rate_per_s": rate,
        # Sends per second over the span from the first send to the last.
        "achieved_rate_per_s": round((n - 1) / max(1e-9, max(sent_at) - min(sent_at)), 1),
        "completed_rate_per_s": round(n / (finished - start), 1),
        "p50_ms": round(statistics.median(latencies), 2),
        "p95_ms": round(percentile(latencies, 95), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        "max_ms": round(max(latencies), 2),
        "send_lag_p95_ms": round(percentile(lags, 95), 2),
        "loadavg_1m": loadavg(),
    }


def unpaced_single(base: str, keys: list[str], questions: list[int], n: int, concurrency: int) -> dict[str, Any]:
    counts = [0] * concurrency
    per_thread = n // concurrency
    bodies = encoded_bodies(questions, per_thread * concurrency, offset=20_000_000)

    def run(t: int) -> None:
        with _client(base, keys[t % len(keys)]) as c:
            for payload in bodies[t * per_thread : (t + 1) * per_thread]:
                counts[t] += c.post("/api/v1/forecasts/", content=payload).status_code == 201

    threads = [threading.Thread(target=run, args=(t,)) for t in range(concurrency)]
    start = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    elapsed = time.perf_counter() - start
    return {
        "requests": per_thread * concurrency,
        "accepted": sum(counts),
        "concurrency": concurrency,
        "accepted_per_s": round(sum(counts) / elapsed, 1),
    }


def loadavg() -> float | None:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def in_process(keys: list[str], questions: list[int], n: int) -> dict[str, Any]:
    """Database round trips and wall time of one submission through Django's test client (no HTTP)."""
    from django.conf import settings
    from django.db import connection
    from django.test import Client

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    client = Client(HTTP_AUTHORIZATION=f"Token {keys[0]}")
    bodies = encoded_bodies(questions, n + 10, offset=30_000_000)
    for payload in bodies[n:]:
        client.post("/api/v1/forecasts/", payload, content_type="application/json")
    statements: list[str] = []

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        client.post("/api/v1/forecasts/", bodies[0], content_type="application/json")
    start, cpu_start = time.perf_counter(), time.process_time()
    for payload in bodies[1:n]:
        client.post("/api/v1/forecasts/", payload, content_type="application/json")
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    return {
        # Statements sent to PostgreSQL (each one round trip; psycopg also sends BEGIN/COMMIT/SAVEPOINT
        # as round trips of their own when a transaction is open, and none is on this path).
        "db_statements_per_request": len(statements),
        "mean_ms": round(elapsed / max(1, n - 1) * 1000, 2),
        # CPU of this process only (Django and the test client), which the machine's load barely changes.
        "cpu_ms": round(cpu / max(1, n - 1) * 1000, 2),
    }


def batch(base: str, keys: list[str], questions: list[int], n: int, size: int) -> dict[str, Any]:
    clients = [httpx.Client(base_url=base, headers={"Authorization": f"Token {k}"}, timeout=120) for k in keys]
    accepted = 0
    latencies: list[float] = []
    batches = max(1, n // size)
    payloads = [
        json.dumps([body(questions[(b * size + i) % len(questions)], b * size + i) for i in range(size)]).encode()
        for b in range(batches)
    ]
    start = time.perf_counter()
    for b, items in enumerate(payloads):
        t = time.perf_counter()
        response = clients[b % len(clients)].post(
            "/api/v1/forecasts/batch/", content=items, headers={"Content-Type": "application/json"}
        )
        latencies.append((time.perf_counter() - t) * 1000)
        response.raise_for_status()
        accepted += response.json()["created"]
    elapsed = time.perf_counter() - start
    for c in clients:
        c.close()
    return {
        "forecasts": batches * size,
        "accepted": accepted,
        "batch_size": size,
        "accepted_per_s": round(accepted / elapsed, 1),
        "p50_request_ms": round(statistics.median(latencies), 1),
    }


def direct(agent_ids: list[int], questions: list[int], n: int, size: int) -> dict[str, Any]:
    """The same rows (normalised as the API stores them) inserted with bulk_create, same batch size."""
    import hashlib

    from django.utils import timezone

    from leaderboard.models import Forecast

    rows_total = 0
    batches = max(1, n // size)
    prepared = []
    for b in range(batches):
        rows = []
        for i in range(size):
            k = b * size + i
            raw = body(questions[k % len(questions)], k)
            rows.append(
                Forecast(
                    agent_id=agent_ids[k % len(agent_ids)],
                    question_id=raw["question"],
                    received_at=timezone.now(),
                    prediction=raw["prediction"],
                    sources=raw["sources"],
                    rationale=raw["rationale"].strip(),
                    graph=raw["graph"],
                    idempotency_key=raw["idempotency_key"],
                    body_hash=hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest(),
                    channel=Forecast.Channel.API,
                )
            )
        prepared.append(rows)
    start = time.perf_counter()
    for rows in prepared:
        rows_total += len(Forecast.objects.bulk_create(rows))
    elapsed = time.perf_counter() - start
    return {"rows": rows_total, "batch_size": size, "rows_per_s": round(rows_total / elapsed, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=5)
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--requests", type=int, default=500, help="single-endpoint requests in each phase")
    parser.add_argument("--rate", type=float, default=50.0, help="paced single-endpoint requests per second")
    parser.add_argument("--paced-runs", type=int, default=3, help="repetitions of the paced phase")
    parser.add_argument("--client-threads", type=int, default=8, help="client threads in the paced phase")
    parser.add_argument("--concurrency", type=int, default=4, help="clients in the unpaced single phase")
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--batch-forecasts", type=int, default=10_000, help="forecasts sent through batch")
    # 2 * cores + 1 workers, each running the site in threads: requests wait on PostgreSQL and Redis,
    # so threads keep up with the offered rate, and more runnable threads get a larger share of a
    # busy machine.
    cores = os.cpu_count() or 2
    parser.add_argument("--workers", type=int, default=2 * cores + 1, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=2, help="site threads per worker (HINDSIGHT_SITE_THREADS)")
    parser.add_argument("--skip-in-process", action="store_true", help="skip the in-process round-trip count")
    args = parser.parse_args()

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        raise SystemExit("DATABASE_URL must name PostgreSQL: run inside scripts/with-services.sh")
    if not os.environ.get("REDIS_URL"):
        raise SystemExit("REDIS_URL must be set (the rate limiter's cache): run inside scripts/with-services.sh")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    os.environ["HINDSIGHT_RATE_LIMIT_REQUESTS"] = "1000000000"

    keys, questions, agent_ids = setup(args.agents, args.questions)
    inproc = None if args.skip_in_process else in_process(keys, questions, 200)
    port = free_port()
    proc = start_gunicorn(port, args.workers, args.threads)
    base = f"http://127.0.0.1:{port}"
    try:
        warm_up(base, keys, questions, 30 * args.workers, min(args.client_threads, 4))
        paced_runs = [
            paced_single(base, keys, questions, args.requests, args.rate, args.client_threads, offset=r * args.requests)
            for r in range(max(1, args.paced_runs))
        ]
        unpaced = unpaced_single(base, keys, questions, args.requests, args.concurrency)
        batched = batch(base, keys, questions, args.batch_forecasts, args.batch_size)
    finally:
        stop(proc)
    baseline = direct(agent_ids, questions, args.batch_forecasts, args.batch_size)
    ratio = batched["accepted_per_s"] / baseline["rows_per_s"]
    p95s = [r["p95_ms"] for r in paced_runs]
    best = min(paced_runs, key=lambda r: r["p95_ms"])
    print(
        json.dumps(
            {
                "benchmark": "submit",
                "database": "postgresql",
                "agents": args.agents,
                "questions": args.questions,
                "gunicorn": {
                    "workers": args.workers,
                    "threads": args.threads,
                    "worker_class": "config.asgi_worker.UvicornWorker",
                    "app": "config.asgi",
                },
                "cpu_count": os.cpu_count(),
                "in_process": inproc,
                "single_paced_runs": paced_runs,
                "single_paced": {
                    "best_p95_ms": best["p95_ms"],
                    "median_p95_ms": round(statistics.median(p95s), 2),
                    "best_run": best,
                },
                "single_unpaced": unpaced,
                "batch": batched,
                "direct_bulk_create": baseline,
                "batch_vs_direct": round(ratio, 3),
                "loadavg_1m_at_end": loadavg(),
                "goals": {
                    "batch_vs_direct_at_least_0.25": ratio >= 0.25,
                    "single_p95_under_50ms_at_50rps": bool(
                        statistics.median(p95s) < 50
                        and args.rate >= 50
                        and statistics.median([r["achieved_rate_per_s"] for r in paced_runs]) >= 0.95 * args.rate
                    ),
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
