"""The site served by the HTTP servers the project runs, as separate processes on the test database:
gunicorn with the production settings file (``config/gunicorn.py``) and the embedded default's server
(``config.http_server.serve_site``, what ``manage.py demo`` serves with)."""

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

SERVERS = ("gunicorn", "embedded")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def served(server: str, **env_overrides: str) -> Iterator[str]:
    """Start ``server`` ("gunicorn" or "embedded"), yield its base URL, stop it afterwards."""
    port = _free_port()
    env = dict(os.environ)
    env.update(
        DATABASE_URL=_test_database_url(),
        DJANGO_SETTINGS_MODULE="config.settings.test",
        PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "platform"), env.get("PYTHONPATH", "")]),
        **env_overrides,
    )
    if server == "gunicorn":
        cmd = [
            sys.executable, "-m", "gunicorn", "config.wsgi", "--config", "python:config.gunicorn",
            "--bind", f"127.0.0.1:{port}", "--worker-class", "gthread", "--workers", "1", "--threads", "4",
        ]  # fmt: skip
    else:
        code = (
            f"import django; django.setup(); from config.http_server import serve_site; serve_site('127.0.0.1', {port})"
        )
        cmd = [sys.executable, "-c", code]
    log_path = ROOT / "var" / f"served-{server}-{os.getpid()}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/api/v1/questions/?limit=1", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{server} did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.2)
        yield url
    finally:
        stop_process(proc)
