"""`Authorization: Token hsev_…` on the evidence endpoints: a delivery's session-scoped evidence token.

Only the evidence views list this class; everywhere else the key is looked up as an API key and
refused (401). The principal it yields is deliberately not an ``AgentPrincipal``, so code that asks
``request_agent`` never mistakes a scoped token for the agent's full key.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from leaderboard.authentication import AccessEndedError, TokenPrincipal
from leaderboard.selectors.agent_access import AccessEnded
from leaderboard.services.evidence_tokens import (
    EvidenceGrant,
    EvidenceTokenInvalid,
    evidence_token_grant,
    is_evidence_token,
)


class EvidenceGrantPrincipal(TokenPrincipal):
    """The request.user of an evidence-token request: one agent, one replay session, until expiry."""

    def __init__(self, grant: EvidenceGrant) -> None:
        super().__init__()
        self.grant = grant

    def __str__(self) -> str:
        return f"evidence-token:{self.grant.agent.slug}:{self.grant.session.pk}"


class EvidenceTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request: Request) -> tuple[EvidenceGrantPrincipal, EvidenceGrant] | None:
        header = authentication.get_authorization_header(request).split()
        if len(header) != 2 or header[0].lower() != self.keyword.lower().encode():
            return None
        try:
            key = header[1].decode()
        except UnicodeError:
            return None  # the API-key authentication names the problem
        if not is_evidence_token(key):
            return None
        try:
            grant = evidence_token_grant(key=key, now=timezone.now())
        except EvidenceTokenInvalid as exc:
            raise exceptions.AuthenticationFailed(str(exc)) from exc
        except AccessEnded as exc:
            raise AccessEndedError(exc.refusal) from exc
        return EvidenceGrantPrincipal(grant), grant

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


def request_evidence_grant(request: Any) -> EvidenceGrant | None:
    user = getattr(request, "user", None)
    return user.grant if isinstance(user, EvidenceGrantPrincipal) else None


class EvidenceTokenScheme(OpenApiAuthenticationExtension):
    target_class = "leaderboard.evidence_token_auth.EvidenceTokenAuthentication"
    name = "EvidenceToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "A delivery's evidence token, `Authorization: Token hsev_…`: reads evidence in one "
            "replay session only, until it expires.",
        }
