"""``manage.py mcp_stdio --token KEY`` serves the same tools over stdio to a client that runs it as a
subprocess (the SDK's stdio client here): the replay flow works, evidence is logged, a revoked token
stops the next call, and a bad token stops the launcher before it speaks the protocol."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from leaderboard.models import Agent, ApiToken, EvidenceAccess, Forecast
from leaderboard.services.teams import token_revoke
from tests.celery_worker import _test_database_url
from tests.factories import ArticleFactory
from tests.leaderboard.api_support import T_RES, replay_question
from tests.mcp_server.support import body, run

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]


def launcher_env() -> dict[str, str]:
    return {
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": _test_database_url(),
        "REDIS_URL": os.environ.get("REDIS_URL", ""),
        "HINDSIGHT_VAR_DIR": str(ROOT / "var"),
    }


def launcher(key: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp_stdio", "--token", key], env=launcher_env(), cwd=str(ROOT)
    )


def test_stdio_replay_flow_and_revocation(agent: Agent, agent_key: str, tmp_path: Path) -> None:
    question = replay_question("binary", title="Will the ferry service restart?")
    # Every simulated date of the window [open_at, t_res) lies between these two stories.
    early = ArticleFactory(title="Ferry service suspended", published_at=question.open_at - timedelta(days=2))
    ArticleFactory(title="Ferry service restarts", published_at=T_RES + timedelta(days=1))

    async def flow() -> dict[str, Any]:
        with open(tmp_path / "launcher.log", "w") as errlog:
            async with Client(stdio_client(launcher(agent_key), errlog=errlog)) as client:
                found: dict[str, Any] = {"tools": {t.name for t in (await client.list_tools()).tools}}
                session = body(await client.call_tool("open_replay_session", {"question": question.pk}))
                found["session"] = session
                found["search"] = body(
                    await client.call_tool("search_articles", {"q": "ferry", "session": session["id"]})
                )
                found["read"] = body(
                    await client.call_tool("read_article", {"article": early.pk, "session": session["id"]})
                )
                found["forecast"] = body(
                    await client.call_tool(
                        "submit_forecast",
                        {"question": question.pk, "session": session["id"], "prediction": {"probability": 0.2},
                         "sources": [early.pk], "idempotency_key": "stdio-1"},
                    )
                )  # fmt: skip
                await _revoke(agent)
                found["after_revoke"] = await client.call_tool("list_questions", {})
                return found

    found = run(flow)
    assert len(found["tools"]) == 9
    simulated = datetime.fromisoformat(found["session"]["simulated_date"].replace("Z", "+00:00"))
    assert [hit["id"] for hit in found["search"]["results"]] == [early.pk]
    assert simulated > early.published_at
    forecast = Forecast.objects.get(pk=found["forecast"]["id"])
    assert (forecast.agent, forecast.channel, str(forecast.session_id)) == (agent, "mcp", found["session"]["id"])
    logged = EvidenceAccess.objects.filter(agent=agent)
    assert Counter(logged.values_list("kind", flat=True)) == {"search": 1, "read": 1}
    assert {row.as_of for row in logged} == {simulated}
    revoked = found["after_revoke"]
    assert revoked.is_error and body(revoked) == {
        "status": 401,
        "code": "authentication_failed",
        "message": "Invalid or revoked token.",
    }


async def _revoke(agent: Agent) -> None:
    await sync_to_async(lambda: token_revoke(token=ApiToken.objects.get(agent=agent)), thread_sensitive=False)()


def test_a_bad_token_stops_the_launcher_before_the_protocol(transactional_db: Any) -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "mcp_stdio", "--token", "not-a-key"],
        cwd=ROOT,
        env={**os.environ, **launcher_env()},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "Invalid or revoked token." in done.stderr
    assert done.stdout == ""
