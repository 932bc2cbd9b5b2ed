"""`Authorization: Token <key>` for agents."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from leaderboard.models import Agent, ApiToken
from leaderboard.services.teams import hash_token


class TokenPrincipal(AnonymousUser):
    """The request.user of a request authenticated by a token: authenticated, yet no person (no
    staff rights, no permissions, no team membership)."""

    @property
    def is_authenticated(self) -> bool:  # type: ignore[override]
        return True

    @property
    def is_anonymous(self) -> bool:  # type: ignore[override]
        return False


class AgentPrincipal(TokenPrincipal):
    """The request.user of an API-token request: an agent, not a person."""

    def __init__(self, agent: Agent, token: ApiToken) -> None:
        super().__init__()
        self.agent = agent
        self.token = token

    def __str__(self) -> str:
        return f"agent:{self.agent.slug}"


def _active_token(key: str) -> ApiToken | None:
    """``token_authenticate``'s lookup (active token by key hash, with its agent and team) without
    the ORDER BY that ``.first()`` adds: the hash is unique, and compiling the ordering costs about
    a millisecond of CPU on every API request."""
    tokens = ApiToken.objects.select_related("agent", "agent__team").filter(key_hash=hash_token(key), revoked_at=None)
    return next(iter(tokens.order_by()[:1]), None)


class AgentTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request: Request) -> tuple[AgentPrincipal, ApiToken] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization header must be 'Token <key>'.")
        try:
            key = header[1].decode()
        except UnicodeError as exc:
            raise exceptions.AuthenticationFailed("Token contains invalid characters.") from exc
        token = _active_token(key)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        now = timezone.now()
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
            # Throttled so that a busy agent does not write on every request.
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return AgentPrincipal(token.agent, token), token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


def request_agent(request: Any) -> Agent | None:
    user = getattr(request, "user", None)
    return user.agent if isinstance(user, AgentPrincipal) else None
