"""Running one tool call: who is calling, the work in a worker thread as one Django request, and
the REST API's errors turned into MCP tool errors with the same code and message.

A tool call is handled like a REST request: the agent's token is checked the way
``AgentTokenAuthentication`` checks it, the per-token rate limit is counted in the same budget
(``TokenRateThrottle``, 503 when its cache is down), the arguments pass the checks of the API's JSON
body parser, and Django's request_started / request_finished signals frame the work,
so database connections are recycled and the evidence access log is flushed exactly as after a
REST response.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, cast

from asgiref.sync import sync_to_async
from django.core import signals
from django.http import HttpRequest
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent
from rest_framework import exceptions

from leaderboard.api_errors import exception_handler
from leaderboard.apis.common import api_exception
from leaderboard.apis.parsing import check_json_value
from leaderboard.authentication import AgentPrincipal, AgentTokenAuthentication
from leaderboard.services.errors import ServiceError
from leaderboard.throttling import TokenRateThrottle

logger = logging.getLogger(__name__)

# The HTTP transport stores the authenticated principal in the request's ASGI scope under this key.
PRINCIPAL_SCOPE_KEY = "hindsight.principal"

SERVER_ERROR = {"code": "server_error", "message": "The server failed to handle this request; it has been logged."}

Operation = Callable[..., dict[str, Any]]


class McpToolCall:
    """The sender of the request signals around a tool call (Django's handlers send their class)."""


def authenticate(authorization: str | None) -> AgentPrincipal:
    """The agent behind an ``Authorization`` header value, checked as the REST API checks it.

    Raises the REST API's exceptions: NotAuthenticated without a token, AuthenticationFailed for
    a malformed header or an unknown or revoked token.
    """
    request = HttpRequest()
    if authorization:
        request.META["HTTP_AUTHORIZATION"] = authorization
    found = AgentTokenAuthentication().authenticate(cast(Any, request))
    if found is None:
        raise exceptions.NotAuthenticated()
    return found[0]


def error_result(exc: Exception) -> tuple[int, dict[str, Any], dict[str, str]] | None:
    """(status, body, headers) as the REST API would answer ``exc``; None for an unexpected error."""
    if isinstance(exc, ServiceError):
        exc = api_exception(exc)
    response = exception_handler(exc, {})
    if response is None:
        return None
    headers = {name: value for name, value in response.items() if name == "Retry-After"}
    if response.status_code == 401:
        # DRF's views add this from their authenticators; the token scheme is the only one here.
        headers["WWW-Authenticate"] = AgentTokenAuthentication.keyword
    return response.status_code, dict(response.data), headers


def tool_result(body: dict[str, Any], *, status: int | None = None) -> CallToolResult:
    """A tool result whose text is the JSON body and whose structured content is the body itself."""
    if status is not None:
        body = {"status": status, **body}
    text = json.dumps(body, ensure_ascii=False, allow_nan=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=body, is_error=status is not None
    )


def _throttle(principal: AgentPrincipal) -> None:
    throttle = TokenRateThrottle()
    if not throttle.allow_request(SimpleNamespace(user=principal), None):
        raise exceptions.Throttled(wait=throttle.wait())


def _run(
    operation: Operation, arguments: dict[str, Any], principal: AgentPrincipal | None, token_key: str | None
) -> CallToolResult:
    signals.request_started.send(sender=McpToolCall)
    try:
        if principal is None:
            # stdio: the launcher's token is checked on every call, so revoking it stops the agent at once.
            principal = authenticate(f"Token {token_key}" if token_key else None)
        _throttle(principal)
        # As the REST API's body parser: text no column can store (NUL, lone surrogates) and
        # nesting deeper than any forecast are refused, naming the argument, before any work.
        check_json_value(arguments)
        return tool_result(operation(principal, **arguments))
    except Exception as exc:
        rendered = error_result(exc)
        if rendered is None:
            logger.exception("MCP tool %s failed", getattr(operation, "__name__", operation))
            return tool_result(SERVER_ERROR, status=500)
        status, body, headers = rendered
        if "Retry-After" in headers:
            body["retry_after"] = int(headers["Retry-After"])
        return tool_result(body, status=status)
    finally:
        signals.request_finished.send(sender=McpToolCall)


async def call(ctx: Context[Any, Any], operation: Operation, **arguments: Any) -> CallToolResult:
    """Run ``operation`` for the calling agent in a worker thread (the ORM is synchronous)."""
    request = ctx.request_context.request
    principal = getattr(request, "scope", {}).get(PRINCIPAL_SCOPE_KEY)
    token_key = None if principal is not None else getattr(ctx.mcp_server, "token_key", None)
    result: CallToolResult = await sync_to_async(_run, thread_sensitive=False)(
        operation, arguments, principal, token_key
    )
    return result
