"""Request bodies as the site and /mcp/ need them, in front of the one ASGI application both server
modes run (uvicorn in the embedded default, gunicorn with uvicorn workers in production).

- A body sent with ``Transfer-Encoding: chunked`` has no Content-Length, and the WSGI bridge
  (a2wsgi) and Django read exactly Content-Length bytes, so without help it reads as empty. Such a
  body is read here, at most ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes of it, and passed on with its
  length.
- A body declared, or found, larger than that limit is answered 413 here, before the site or the
  MCP transport sees it.
- After a 413 or a chunked request the answer says ``Connection: close`` and the server closes the
  connection. Before a 413 closes it, up to ``LINGER_MAX_BYTES`` of what the client is still
  sending are read and dropped (for at most ``LINGER_SECONDS``): closing a socket with unread data
  sends a reset, which can destroy the answer before the client reads it.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from django.conf import settings
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LINGER_MAX_BYTES = 8 * 1024 * 1024
LINGER_SECONDS = 2.0
CLOSE = (b"connection", b"close")


def body_limit() -> int | None:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return None if limit is None else int(limit)


def too_large_body(limit: int | None) -> dict[str, str]:
    """The JSON answer to a body over the limit (the API's error shape)."""
    return {"code": "request_too_large", "message": f"The request body is larger than the limit of {limit} bytes."}


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


def _declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    value = _header(headers, b"content-length")
    return int(value) if value is not None and value.strip().isdigit() else None


async def _linger(receive: Receive) -> None:
    """Read and drop the rest of the request body, within LINGER_MAX_BYTES and LINGER_SECONDS."""
    deadline = time.monotonic() + LINGER_SECONDS
    dropped = 0
    while dropped <= LINGER_MAX_BYTES:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        try:
            message = await asyncio.wait_for(receive(), left)
        except TimeoutError:
            return
        if message["type"] != "http.request":
            return
        dropped += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


async def _refuse_too_large(limit: int | None, receive: Receive, send: Send, *, body_done: bool) -> None:
    payload = json.dumps(too_large_body(limit)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()), CLOSE]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    # The whole answer goes out now; the response ends (and the server closes) after the linger.
    await send({"type": "http.response.body", "body": payload, "more_body": True})
    if not body_done:
        await _linger(receive)
    await send({"type": "http.response.body", "body": b"", "more_body": False})


class BoundedBodies:
    """ASGI middleware: chunked bodies read within the limit and given a length; 413 past the limit;
    ``Connection: close`` after a 413 or a chunked request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: list[tuple[bytes, bytes]] = list(scope["headers"])
        limit = body_limit()
        declared = _declared_length(headers)
        if declared is not None:
            if limit is not None and declared > limit:
                await _refuse_too_large(limit, receive, send, body_done=False)
            else:
                await self.app(scope, receive, send)
            return
        if b"chunked" not in (_header(headers, b"transfer-encoding") or b"").lower():
            await self.app(scope, receive, send)
            return

        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away (or sent a malformed chunk, answered 400 by the server)
            body += message.get("body", b"")
            more = bool(message.get("more_body", False))
            if limit is not None and len(body) > limit:
                await _refuse_too_large(limit, receive, send, body_done=not more)
                return
            if not more:
                break

        sized = [(k, v) for k, v in headers if k.lower() != b"transfer-encoding"]
        sized.append((b"content-length", str(len(body)).encode()))
        delivered = False

        async def receive_sized() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        async def send_closing(message: Message) -> None:
            if message["type"] == "http.response.start":
                response_headers: list[Any] = [
                    (k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"
                ]
                message = {**message, "headers": [*response_headers, CLOSE]}
            await send(message)

        await self.app({**scope, "headers": sized}, receive_sized, send_closing)
