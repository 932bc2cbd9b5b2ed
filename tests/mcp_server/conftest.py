"""The MCP tests' server: the embedded default's (uvicorn in a thread, the composition of config.asgi)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from config.inprocess_server import InProcessServer
from leaderboard.services.evidence import evidence_log_flush


@pytest.fixture
def site(transactional_db: Any) -> Iterator[InProcessServer]:
    """The site and /mcp/ on uvicorn, as ``manage.py demo`` serves them."""
    server = InProcessServer(port=0).start()
    yield server
    server.stop()
    evidence_log_flush()
