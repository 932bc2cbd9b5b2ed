"""Benchmark of forecast submission through the API (issue 2).

Migrates the database named by DATABASE_URL (PostgreSQL), loads N agents (one token each) and N
open live binary questions, starts gunicorn on a free loopback port against that database, and
measures over real HTTP:

- single endpoint paced at --rate requests/s (default 50): p50/p95/p99 latency;
- single endpoint unpaced with --concurrency clients: forecasts accepted per second;
- batch endpoint (--batch-size forecasts per request): forecasts accepted per second;

beside the rate of inserting the same rows directly with the ORM's bulk_create in the same run
(the baseline). Prints one JSON object; ``batch_vs_direct`` is the ratio of the batch rate to the
direct rate. Goals: batch_vs_direct >= 0.25, single p95 < 50 ms at 50 requests/s.

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
    from leaderboard.services.teams import agent_create, team_create, token_create

    run = uuid.uuid4().hex[:8]
    team = team_create(name=f"Bench {run}", owner=None)
    agents = [agent_create(team=team, name=f"bench-{run}-{i}", model_name="bench") for i in range(n_agents)]
    keys = [token_create(agent=a).key for a in agents]
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


def start_gunicorn(port: int, workers: int, threads: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY", "bench-" + uuid.uuid4().hex),
        "DJANGO_SECURE_COOKIES": "0",
        "DJANGO_LOG_LEVEL": "WARNING",
        # The limiter still runs (one Redis increment per request); the budget just never runs out.
        "HINDSIGHT_RATE_LIMIT_REQUESTS": "1000000000",
        "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}",
    }
    cmd = [
        str(Path(sys.executable).parent / "gunicorn"),
        "config.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--threads",
        str(threads),
        "--log-level",
        "warning",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v1/questions/?limit=1", timeout=2).status_code == 200:
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


def paced_single(base: str, keys: list[str], questions: list[int], n: int, rate: float) -> dict[str, Any]:
    clients = [httpx.Client(base_url=base, headers={"Authorization": f"Token {k}"}, timeout=30) for k in keys]
    latencies: list[float] = []
    accepted = 0
    interval = 1.0 / rate
    # Warm the connections and the workers' code paths before measuring.
    for c in clients:
        c.get("/api/v1/questions/?limit=1")
    start = time.perf_counter()
    for i in range(n):
        target = start + i * interval
        delay = target - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        t = time.perf_counter()
        response = clients[i % len(clients)].post("/api/v1/forecasts/", json=body(questions[i % len(questions)], i))
        latencies.append((time.perf_counter() - t) * 1000)
        accepted += response.status_code == 201
    elapsed = time.perf_counter() - start
    for c in clients:
        c.close()
    return {
        "requests": n,
        "accepted": accepted,
        "offered_rate_per_s": rate,
        "achieved_rate_per_s": round(n / elapsed, 1),
        "p50_ms": round(statistics.median(latencies), 2),
        "p95_ms": round(percentile(latencies, 95), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        "max_ms": round(max(latencies), 2),
    }


def unpaced_single(base: str, keys: list[str], questions: list[int], n: int, concurrency: int) -> dict[str, Any]:
    counts = [0] * concurrency
    per_thread = n // concurrency

    def run(t: int) -> None:
        with httpx.Client(base_url=base, headers={"Authorization": f"Token {keys[t % len(keys)]}"}, timeout=30) as c:
            for i in range(per_thread):
                k = t * per_thread + i
                counts[t] += (
                    c.post("/api/v1/forecasts/", json=body(questions[k % len(questions)], k)).status_code == 201
                )

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


def batch(base: str, keys: list[str], questions: list[int], n: int, size: int) -> dict[str, Any]:
    clients = [httpx.Client(base_url=base, headers={"Authorization": f"Token {k}"}, timeout=120) for k in keys]
    accepted = 0
    latencies: list[float] = []
    batches = max(1, n // size)
    payloads = [
        [body(questions[(b * size + i) % len(questions)], b * size + i) for i in range(size)] for b in range(batches)
    ]
    start = time.perf_counter()
    for b, items in enumerate(payloads):
        t = time.perf_counter()
        response = clients[b % len(clients)].post("/api/v1/forecasts/batch/", json=items)
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
    parser.add_argument("--concurrency", type=int, default=4, help="clients in the unpaced single phase")
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--batch-forecasts", type=int, default=10_000, help="forecasts sent through batch")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=2, help="threads per gunicorn worker")
    args = parser.parse_args()

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        raise SystemExit("DATABASE_URL must name PostgreSQL: run inside scripts/with-services.sh")
    if not os.environ.get("REDIS_URL"):
        raise SystemExit("REDIS_URL must be set (the rate limiter's cache): run inside scripts/with-services.sh")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

    keys, questions, agent_ids = setup(args.agents, args.questions)
    port = free_port()
    proc = start_gunicorn(port, args.workers, args.threads)
    base = f"http://127.0.0.1:{port}"
    try:
        paced = paced_single(base, keys, questions, args.requests, args.rate)
        unpaced = unpaced_single(base, keys, questions, args.requests, args.concurrency)
        batched = batch(base, keys, questions, args.batch_forecasts, args.batch_size)
    finally:
        stop(proc)
    baseline = direct(agent_ids, questions, args.batch_forecasts, args.batch_size)
    ratio = batched["accepted_per_s"] / baseline["rows_per_s"]
    print(
        json.dumps(
            {
                "benchmark": "submit",
                "database": "postgresql",
                "agents": args.agents,
                "questions": args.questions,
                "gunicorn": {"workers": args.workers, "threads": args.threads},
                "single_paced": paced,
                "single_unpaced": unpaced,
                "batch": batched,
                "direct_bulk_create": baseline,
                "batch_vs_direct": round(ratio, 3),
                "goals": {
                    "batch_vs_direct_at_least_0.25": ratio >= 0.25,
                    "single_p95_under_50ms_at_50rps": paced["p95_ms"] < 50 and args.rate >= 50,
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
