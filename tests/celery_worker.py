"""Start a real Celery worker process against the test database and the test Redis."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

from config import celery_app

ROOT = Path(__file__).resolve().parents[1]


def _test_database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"] != "django.db.backends.postgresql":
        raise RuntimeError("a real Celery worker needs the PostgreSQL test database (run scripts/test.sh)")
    user = db.get("USER") or ""
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    return f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


@contextmanager
def running_worker(
    *,
    queues: str = "default,ingest,grade",
    beat: bool = False,
    concurrency: int = 1,
    redis_url: str | None = None,
    name: str = "worker",
) -> Iterator[subprocess.Popen[bytes]]:
    """Run a worker (optionally with embedded beat) until the block ends; tasks go over Redis (the
    suite's, or ``redis_url``). The worker leads a process group of its own (its pool's children
    with it), so that a test can kill the whole worker at once."""
    redis_url = redis_url or os.environ.get("REDIS_URL") or getattr(settings, "REDIS_URL", "")
    if not redis_url:
        raise RuntimeError("a real Celery worker needs REDIS_URL (run scripts/test.sh)")
    env = dict(os.environ)
    env.update(
        DATABASE_URL=_test_database_url(),
        REDIS_URL=redis_url,
        DJANGO_SETTINGS_MODULE="config.settings.test",
        PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "platform"), env.get("PYTHONPATH", "")]),
        HINDSIGHT_WORKER_IN_TESTS="1",
    )
    cmd = [
        sys.executable, "-m", "celery", "-A", "config", "worker",
        "-Q", queues, "--pool", "prefork" if concurrency > 1 else "solo",
        "--concurrency", str(concurrency), "--loglevel", "INFO", "--without-gossip", "--without-mingle",
        "--hostname", f"{name}-{os.getpid()}@%h",
    ]  # fmt: skip
    if beat:
        cmd += ["--beat", "--schedule", str(ROOT / "var" / f"celerybeat-{os.getpid()}")]
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    log_path = ROOT / "var" / f"celery-{name}-{os.getpid()}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    proc.log_path = log_path  # type: ignore[attr-defined]
    try:
        yield proc
    finally:
        celery_app.conf.task_always_eager = previous
        stop_process(proc)
        if os.environ.get("HINDSIGHT_SHOW_WORKER_LOG"):
            print(log_path.read_text())


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """Ask a process to stop, and kill it if it has not within 20 seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_until(predicate: Callable[[], bool], *, timeout: float = 60.0, interval: float = 0.25) -> bool:
    """Poll a condition that a separate worker process makes true."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
