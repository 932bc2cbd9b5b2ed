"""The site served as the README tells people to serve it, as a separate process on the test database:
the production command (gunicorn with uvicorn workers on ``config.asgi``, production settings) and the
embedded default's server (``config.inprocess_server``, what ``manage.py demo`` serves with, on the
development settings as ``scripts/run.sh`` sets them)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from tests.celery_worker import ROOT, _test_database_url, stop_process

SERVERS = ("production", "embedded")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _command(server: str, port: int, workers: int) -> tuple[list[str], dict[str, str]]:
    if server == "production":
        # The README's production command (only the address and the number of workers differ).
        command = [
            sys.executable, "-m", "gunicorn", "config.asgi:application", "--bind", f"127.0.0.1:{port}",
            "--worker-class", "config.asgi_worker.UvicornWorker", "--workers", str(workers),
        ]  # fmt: skip
        settings = {
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DJANGO_SECRET_KEY": "production-test-key",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
            "DJANGO_SECURE_COOKIES": "0",
            # Plain HTTP on loopback stands for the TLS-terminating proxy, which would redirect and send HSTS.
            "DJANGO_SECURE_SSL_REDIRECT": "0",
            "DJANGO_SECURE_HSTS_SECONDS": "0",
        }
        return command, settings
    code = (
        "import django; django.setup(); from config.inprocess_server import InProcessServer; "
        f"InProcessServer(host='127.0.0.1', port={port}).start().thread.join()"
    )
    # As scripts/run.sh runs it (in-process tasks, local-memory cache, DEBUG off), on the test database.
    return [sys.executable, "-c", code], {
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "DJANGO_DEBUG": "0",
        "REDIS_URL": "",
    }


@contextmanager
def served(server: str, *, workers: int = 1, **env_overrides: str) -> Iterator[str]:
    """Start ``server`` ("production" or "embedded"), yield its base URL, stop it afterwards."""
    port = _free_port()
    command, settings = _command(server, port, workers)
    env = dict(os.environ)
    env.update(
        DATABASE_URL=_test_database_url(),
        PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "platform"), env.get("PYTHONPATH", "")]),
    )
    env.update(settings)
    env.update(env_overrides)  # may name another database (a test's own, which it stops)
    log_path = ROOT / "var" / f"served-{server}-{os.getpid()}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                # A page, not the API: a probe must not count in the API rate limit under test.
                if httpx.get(f"{url}/", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{server} did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.2)
        yield url
    finally:
        stop_process(proc)
