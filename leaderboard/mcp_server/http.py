"""Streamable HTTP at ``/mcp/``, beside the Django site in one ASGI application.

``with_mcp(site)`` answers ``/mcp`` and ``/mcp/`` with the SDK's Streamable HTTP transport and
passes everything else to ``site``. Before the SDK sees a request, the Host and Origin headers are
checked against ``ALLOWED_HOSTS`` / ``CSRF_TRUSTED_ORIGINS`` (as Django checks them for the site,
and as MCP asks of servers against DNS rebinding), and the agent's ``Authorization: Token <key>``
is checked as the REST API checks it; failures answer with the REST API's JSON errors (503 with
Retry-After while the database or Redis is down).

The transport is stateless with JSON responses: every request stands alone, so any process of a
multi-worker deployment can answer it. The SDK's session manager runs for the lifetime of the
ASGI application (its lifespan), which is why the router handles lifespan events itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast
from urllib.parse import urlsplit

from a2wsgi import WSGIMiddleware
from a2wsgi.wsgi_typing import WSGIApp
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http.request import split_domain_port, validate_host
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from config.request_bodies import BoundedBodies
from leaderboard.authentication import AgentPrincipal
from leaderboard.mcp_server.calls import PRINCIPAL_SCOPE_KEY, authenticate, error_result
from leaderboard.mcp_server.tools import HindsightMCP

MCP_PATH = "/mcp/"


def _allowed_hosts() -> list[str]:
    # As django.http.HttpRequest.get_host: with DEBUG and no ALLOWED_HOSTS, local names are allowed.
    if settings.DEBUG and not settings.ALLOWED_HOSTS:
        return [".localhost", "127.0.0.1", "[::1]"]
    return list(settings.ALLOWED_HOSTS)


def _host_allowed(netloc: str) -> bool:
    domain, _port = split_domain_port(netloc)
    return bool(domain) and validate_host(domain, _allowed_hosts())


def _origin_allowed(origin: str) -> bool:
    return origin in settings.CSRF_TRUSTED_ORIGINS or _host_allowed(urlsplit(origin).netloc)


def _authenticated(authorization: str | None) -> AgentPrincipal:
    close_old_connections()
    try:
        return authenticate(authorization)
    finally:
        close_old_connections()


class McpEndpoint:
    """The ``/mcp/`` ASGI app: header checks and token authentication, then the SDK's transport."""

    def __init__(self, server: HindsightMCP | None = None) -> None:
        self.server = server or HindsightMCP()
        self.transport = self.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            max_request_body_size=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
            # Host and Origin are checked here, against the site's own settings.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.transport(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host, origin = headers.get("host", ""), headers.get("origin")
        if not _host_allowed(host):
            response = JSONResponse({"code": "bad_request", "message": f"Host {host!r} is not allowed."}, 400)
        elif origin and not _origin_allowed(origin):
            response = JSONResponse({"code": "forbidden", "message": f"Origin {origin!r} is not allowed."}, 403)
        else:
            try:
                principal = await sync_to_async(_authenticated, thread_sensitive=False)(headers.get("authorization"))
            except Exception as exc:
                # The API's errors (401, 429), and 503 with Retry-After when the database or
                # Redis is down; anything else is a bug and goes to the server's error handling.
                rendered = error_result(exc)
                if rendered is None:
                    raise
                status, body, extra = rendered
                response = JSONResponse(body, status, headers=extra)
            else:
                # "/mcp" and "/mcp/" are one endpoint (the SDK's route has the trailing slash).
                path = MCP_PATH if scope["path"] == MCP_PATH.rstrip("/") else scope["path"]
                await self.transport({**scope, "path": path, PRINCIPAL_SCOPE_KEY: principal}, receive, send)
                return
        await response(scope, receive, send)


def with_mcp(site: ASGIApp, endpoint: McpEndpoint | None = None) -> ASGIApp:
    """One ASGI application: ``/mcp/`` for MCP clients, everything else for ``site``."""
    mcp = endpoint or McpEndpoint()

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan" or (
            scope["type"] == "http" and scope["path"].rstrip("/") == MCP_PATH.rstrip("/")
        ):
            await mcp(scope, receive, send)
        else:
            await site(scope, receive, send)

    return application


def site_with_mcp(site: Callable[..., Any]) -> ASGIApp:
    """The whole server: ``/mcp/`` plus the Django site, whose WSGI application runs in a fixed pool
    of ``HINDSIGHT_SITE_THREADS`` threads (as in gunicorn's threaded workers: a thread per request
    in flight, persistent database connections reused, request signals in the request's thread),
    behind one request-body limit (``config.request_bodies``: chunked bodies read, 413, closing)."""
    threaded = WSGIMiddleware(cast(WSGIApp, site), workers=settings.HINDSIGHT_SITE_THREADS)
    return BoundedBodies(with_mcp(cast(ASGIApp, threaded)))
