"""The README's production commands start from a virtual environment built from requirements.txt
alone, as scripts/setup.sh builds it (the test environment has more packages, which would hide a
missing one): a Celery worker and beat connect to Redis and report ready, and gunicorn with the
uvicorn worker serves a request.

The environment is built once per content of the requirements and kept under the git-ignored var/
(keyed by their hash), so only the first run pays for the install.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "var" / "production-venv"
INPUTS = ("requirements.txt", "clients/python/pyproject.toml")

pytestmark = pytest.mark.slow


def _key() -> str:
    digest = hashlib.sha256(sys.version.encode())
    for name in INPUTS:
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()[:16]


def _build(venv: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r",
         "requirements.txt"],
        cwd=ROOT, check=True, timeout=900, capture_output=True, text=True,
    )  # fmt: skip
    (venv / ".complete").touch()


@pytest.fixture(scope="module")
def production_venv() -> Path:
    """A venv from requirements.txt only; rebuilt when the requirements change."""
    CACHE.mkdir(parents=True, exist_ok=True)
    venv = CACHE / _key()
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time, also across test processes
        if not (venv / ".complete").exists():
            shutil.rmtree(venv, ignore_errors=True)
            for stale in CACHE.iterdir():
                if stale.is_dir():
                    shutil.rmtree(stale, ignore_errors=True)
            try:
                _build(venv)
            except subprocess.CalledProcessError as exc:
                pytest.fail(f"pip install -r requirements.txt failed:\n{exc.stdout}\n{exc.stderr}")
    return venv


def _environment() -> dict[str, str]:
    redis_url = os.environ.get("REDIS_URL", "")
    database_url = os.environ.get("DATABASE_URL", "")
    if not redis_url.startswith("redis") or not database_url.startswith("postgres"):
        pytest.skip("needs the PostgreSQL and Redis of scripts/test.sh")
    keep = ("PATH", "HOME", "LANG", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        PYTHONPATH=f"{ROOT}:{ROOT / 'platform'}",  # as the README exports it
    )
    return env


@contextmanager
def _started(cmd: list[str], *, ready: str, log: Path, timeout: float = 60) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``cmd`` and wait until its output shows ``ready``; fail with the output if it exits."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=_environment(), stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while ready not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{' '.join(cmd)} did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_worker_beat_and_web_server_start(production_venv: Path, tmp_path: Path) -> None:
    bin_dir = production_venv / "bin"
    check = subprocess.run(
        [str(bin_dir / "python"), "manage.py", "check"], cwd=ROOT, env=_environment(), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    worker = [str(bin_dir / "celery"), "-A", "config", "worker", "-Q", "default", "--pool", "solo",
              "-n", f"install-check-{os.getpid()}@%h", "--without-gossip", "--without-mingle", "--loglevel", "INFO"]  # fmt: skip
    with _started(worker, ready="ready.", log=tmp_path / "worker.log"):
        pass
    beat = [
        str(bin_dir / "celery"),
        "-A",
        "config",
        "beat",
        "--loglevel",
        "INFO",
        "--schedule",
        str(tmp_path / "beat-schedule"),
    ]
    with _started(beat, ready="beat: Starting", log=tmp_path / "beat.log"):
        pass
    port = _free_port()
    web = [str(bin_dir / "gunicorn"), "config.asgi:application", "--bind", f"127.0.0.1:{port}",
           "--worker-class", "config.asgi_worker.UvicornWorker", "--workers", "1"]  # fmt: skip
    with _started(web, ready="Booting worker", log=tmp_path / "web.log"):
        deadline = time.monotonic() + 30
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/methods/", timeout=5)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
    # Production redirects plain HTTP to HTTPS: the site answered through the whole stack.
    assert response.status_code == 301, (response.status_code, (tmp_path / "web.log").read_text()[-3000:])
    assert response.headers["location"] == f"https://127.0.0.1:{port}/methods/"
