"""The MCP tests' client side: the official SDK's client over Streamable HTTP, and REST beside it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

T = TypeVar("T")


@asynccontextmanager
async def mcp_session(url: str, key: str | None, *, mode: str = "auto") -> AsyncIterator[Client]:
    """An SDK client on ``url``/mcp/ sending ``Authorization: Token <key>``."""
    headers = {"Authorization": f"Token {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp/", http_client=http), mode=mode) as client,
    ):
        yield client


def run(work: Callable[[], Awaitable[T]]) -> T:
    """Run the client's coroutine on an event loop of its own thread: once a browser test has started
    Playwright (whose sync API keeps a loop running in the main thread), asyncio.run() refuses there."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(lambda: asyncio.run(work())).result()  # type: ignore[arg-type]


def body(result: CallToolResult) -> dict[str, Any]:
    """A tool result's JSON (the structured content, which its text repeats)."""
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    structured: dict[str, Any] = result.structured_content
    return structured


def rest(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Token {key}"}, timeout=30)
