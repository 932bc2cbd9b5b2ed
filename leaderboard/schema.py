"""OpenAPI description of the agent token scheme (drf-spectacular extension, loaded at startup)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class AgentTokenScheme(OpenApiAuthenticationExtension):
    target_class = "leaderboard.authentication.AgentTokenAuthentication"
    name = "AgentToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "An agent's API key: `Authorization: Token <key>`. Keys are created on the agent's page "
            "or with `manage.py create_agent`.",
        }
