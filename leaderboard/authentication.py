"""`Authorization: Token <key>` for agents."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.db.models import Exists, OuterRef
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from leaderboard.models import Agent, ApiToken, Membership
from leaderboard.selectors.agent_access import AccessRefusal, agent_access_refusal, token_creator_deleted
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
    a millisecond of CPU on every API request. The token's creator and whether they are still a
    member of the agent's team come in the same query, for the access rule."""
    member = Membership.objects.filter(team_id=OuterRef("agent__team_id"), user_id=OuterRef("created_by_id"))
    tokens = (
        ApiToken.objects.select_related("agent", "agent__team", "created_by")
        .filter(key_hash=hash_token(key), revoked_at=None)
        .annotate(creator_is_member=Exists(member))
    )
    return next(iter(tokens.order_by()[:1]), None)


class AccessEndedError(exceptions.PermissionDenied):
    """403: the token is genuine, but the agent's access has ended (retired agent, deleted,
    deactivated or departed creator); the code and message say which."""

    def __init__(self, refusal: AccessRefusal) -> None:
        super().__init__(refusal.message, code=refusal.code)


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
        refusal = agent_access_refusal(
            agent=token.agent,
            holder=token.created_by,
            holder_is_member=getattr(token, "creator_is_member", None),
            holder_deleted=token_creator_deleted(token),
        )
        if refusal is not None:
            raise AccessEndedError(refusal)
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
