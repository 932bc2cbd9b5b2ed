"""Evidence tokens: short-lived keys that read the evidence gateway for one replay session only.

The platform hands one to an agent with a question it delivers to the agent's endpoint, so the
agent (or a tool it runs) can search and read as of the session's simulated date without its API
key. A token is a self-contained value signed with the site's secret key (its own salt, so no other
signed value of the site passes as one): agent, session, question and expiry. Nothing is stored;
after ``expires_at`` it is refused, and only the evidence endpoints accept it (other endpoints
answer 401, because it is no API key).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from django.contrib.auth import get_user_model
from django.core import signing

from ingestion.selectors.evidence import require_aware
from leaderboard.models import Agent, ReplaySession
from leaderboard.selectors.agent_access import AccessEnded, agent_access_refusal

EVIDENCE_TOKEN_PREFIX: Final = "hsev_"
_SALT: Final = "hindsight.evidence-token"


class EvidenceTokenInvalid(Exception):
    """The presented evidence token is forged, malformed, expired, or its session is gone."""


@dataclass(frozen=True)
class IssuedEvidenceToken:
    key: str
    expires_at: datetime


@dataclass(frozen=True)
class EvidenceGrant:
    """What a valid evidence token allows: reading evidence in one replay session until ``expires_at``."""

    agent: Agent
    session: ReplaySession
    expires_at: datetime

    def refusal(self, *, session_id: Any = None, question_id: Any = None) -> str | None:
        """Why a query naming this session / question is outside the grant, or None if it is inside."""
        other_session = session_id is not None and str(session_id) != str(self.session.pk)
        other_question = question_id is not None and str(question_id) != str(self.session.question_id)
        if other_session or other_question:
            return (
                f"This evidence token reads only replay session {self.session.pk} "
                f"(question {self.session.question_id}); use your API token for anything else."
            )
        return None


def evidence_token_issue(
    *, session: ReplaySession, now: datetime, lifetime: timedelta, holder_id: int | None = None
) -> IssuedEvidenceToken:
    """A token for ``session`` valid from ``now`` for ``lifetime`` (whole seconds).

    ``holder_id`` is the user who registered the endpoint it is delivered to: the token stops
    working, as the endpoint does, when that user is deactivated or leaves the agent's team."""
    now = require_aware(now, "now")
    expires_at = (now + lifetime).replace(microsecond=0)
    payload: dict[str, Any] = {
        "a": session.agent_id,
        "s": str(session.pk),
        "q": session.question_id,
        "e": int(expires_at.timestamp()),
    }
    if holder_id is not None:
        payload["u"] = holder_id
    return IssuedEvidenceToken(key=EVIDENCE_TOKEN_PREFIX + signing.dumps(payload, salt=_SALT), expires_at=expires_at)


def is_evidence_token(key: str) -> bool:
    return key.startswith(EVIDENCE_TOKEN_PREFIX)


def evidence_token_grant(*, key: str, now: datetime) -> EvidenceGrant:
    """The grant of a presented token; EvidenceTokenInvalid with a message fit for the agent, or
    AccessEnded when the agent is retired or the endpoint's registrant lost access."""
    now = require_aware(now, "now")
    if not is_evidence_token(key):
        raise EvidenceTokenInvalid("Not an evidence token.")
    try:
        payload = signing.loads(key[len(EVIDENCE_TOKEN_PREFIX) :], salt=_SALT)
    except signing.BadSignature as exc:
        raise EvidenceTokenInvalid("Invalid evidence token (the signature does not match).") from exc
    try:
        agent_id, question_id, expires = int(payload["a"]), int(payload["q"]), int(payload["e"])
        session_id = uuid.UUID(str(payload["s"]))
        holder_id = int(payload["u"]) if payload.get("u") is not None else None
    except (KeyError, TypeError, ValueError) as exc:
        raise EvidenceTokenInvalid("Invalid evidence token (malformed).") from exc
    expires_at = datetime.fromtimestamp(expires, tz=UTC)
    if now >= expires_at:
        raise EvidenceTokenInvalid(
            f"This evidence token expired at {expires_at.isoformat()}; each delivery carries a fresh one, "
            "and your API token keeps working."
        )
    session = (
        ReplaySession.objects.select_related("agent", "agent__team", "question")
        .filter(pk=session_id, agent_id=agent_id, question_id=question_id)
        .first()
    )
    if session is None:
        raise EvidenceTokenInvalid("The replay session of this evidence token no longer exists.")
    holder = get_user_model().objects.filter(pk=holder_id).first() if holder_id is not None else None
    refusal = agent_access_refusal(
        agent=session.agent,
        holder=holder,
        credential="endpoint",
        holder_deleted=holder_id is not None and holder is None,
    )
    if refusal is not None:
        raise AccessEnded(refusal)
    return EvidenceGrant(agent=session.agent, session=session, expires_at=expires_at)
