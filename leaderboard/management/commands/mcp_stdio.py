"""``manage.py mcp_stdio --token KEY``: Hindsight's MCP tools over stdio, for clients that run a
server as a subprocess. The token (or ``HINDSIGHT_TOKEN``) is the agent's API token; it is checked
at start and again on every tool call, so revoking it stops the agent at once. stdout carries only
the protocol; logs go to stderr.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections
from rest_framework.exceptions import APIException

from leaderboard.mcp_server.calls import authenticate
from leaderboard.mcp_server.tools import HindsightMCP


class Command(BaseCommand):
    help = "Serve Hindsight's MCP tools over stdio for the agent whose API token is given."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--token",
            default=os.environ.get("HINDSIGHT_TOKEN", ""),
            help="the agent's API token (default: $HINDSIGHT_TOKEN)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        key = options["token"].strip()
        if not key:
            raise CommandError("give --token KEY or set HINDSIGHT_TOKEN (manage.py create_agent prints one)")
        try:
            principal = authenticate(f"Token {key}")
        except APIException as exc:
            raise CommandError(str(exc.detail)) from exc
        finally:
            connections.close_all()  # tool calls use their own threads' connections
        self.stderr.write(f"Hindsight MCP over stdio for agent {principal.agent.slug}")
        anyio.run(HindsightMCP(token_key=key).run_stdio_async)
