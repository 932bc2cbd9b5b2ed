"""The README's production command (gunicorn, uvicorn workers, config.asgi) serves the site and /mcp/
from several worker processes: an MCP client submits, and the REST API shows the forecast."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from leaderboard.models import Agent
from tests.celery_worker import _test_database_url
from tests.leaderboard.api_support import live_question
from tests.mcp_server.support import body, mcp_session, rest, run

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def production_url(transactional_db: Any, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "production-test-key",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_COOKIES": "0",
        "DATABASE_URL": _test_database_url(),
        "REDIS_URL": os.environ.get("REDIS_URL", ""),
        "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}",
    }
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "config.asgi:application",
        "--bind", f"127.0.0.1:{port}",
        "--workers", "2",
        "--worker-class", "uvicorn_worker.UvicornWorker",
    ]  # fmt: skip
    with open(tmp_path / "gunicorn.log", "w") as log:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/api/v1/questions/?limit=1", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "gunicorn.log").read_text()
            time.sleep(0.2)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def test_gunicorn_serves_mcp_and_the_site(production_url: str, agent: Agent, agent_key: str) -> None:
    question = live_question("binary")

    async def submitting() -> list[dict[str, Any]]:
        # Several requests, so both worker processes answer some: the transport keeps no state.
        async with mcp_session(production_url, agent_key) as client:
            listed = body(await client.call_tool("list_questions", {"track": "live", "status": "open"}))
            detail = body(await client.call_tool("get_question", {"question": question.pk}))
            submitted = body(
                await client.call_tool(
                    "submit_forecast", {"question": question.pk, "prediction": {"probability": 0.3}, "session": None}
                )
            )
            return [listed, detail, submitted]

    listed, detail, submitted = run(submitting)
    assert [q["id"] for q in listed["results"]] == [question.pk] and detail["title"] == question.title
    with rest(production_url, agent_key) as api:
        mine = api.get("/api/v1/forecasts/").json()["results"]
        assert [(f["id"], f["channel"]) for f in mine] == [(submitted["id"], "mcp")]
        assert api.get("/leaderboard/").status_code == 200
