"""Whether an agent's credential still grants access: the one rule every way in asks.

A credential is an agent's API token (REST API and MCP), its registered endpoint (the platform's
deliveries, the evidence tokens they carry, the forecasts they store) or a person forecasting from
the browser. Each carries the agent and, when a person made it, that person (the token's or the
endpoint's ``created_by``, the signed-in user). Access ends at once, without touching the
credential, when

- the agent is retired (``agent_retired``);
- the person's account is deleted (``owner_deleted``): the credential was made by a person and
  its ``created_by`` is now empty;
- the person's account is deactivated (``owner_deactivated``);
- the person is no longer a member of the agent's team (``not_a_member``).

A credential no person made (a token issued by ``create_agent`` without ``--owner``, or the
platform's own baselines; ``ApiToken.issued_by`` says so) ends only with the agent's retirement.
When the team or the agent itself is deleted, its credentials go with it (401: no such token).
The agent's past forecasts and grades stay.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import F, Q

from leaderboard.models import Agent, ApiToken, Membership

# What a team's pages say beside a credential that no longer works.
ENDED_LABELS = {
    "agent_retired": "agent retired",
    "owner_deleted": "creator's account deleted",
    "owner_deactivated": "creator's account deactivated",
    "not_a_member": "creator left the team",
}


@dataclass(frozen=True)
class AccessRefusal:
    """Why a credential no longer works: a machine-readable code and a sentence for the agent."""

    code: str
    message: str

    @property
    def label(self) -> str:
        return ENDED_LABELS[self.code]


class AccessEnded(Exception):
    """Raised where a refusal must stop the work (a service call, a delivery)."""

    def __init__(self, refusal: AccessRefusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


def agent_access_refusal(
    *,
    agent: Agent,
    holder: Any = None,
    credential: str = "token",
    holder_is_member: bool | None = None,
    holder_deleted: bool = False,
) -> AccessRefusal | None:
    """Why ``agent``'s credential held by ``holder`` (a user, or None) no longer works, or None.

    ``credential`` names it in the message ("token", "endpoint"); ``holder_is_member``, when the
    caller already knows it (read in the same query as the credential), saves the membership read;
    ``holder_deleted`` says a person made the credential and their account no longer exists.
    """
    if agent.retired_at is not None:
        return AccessRefusal(
            code="agent_retired",
            message=(
                f"Agent {agent.slug!r} was retired on {agent.retired_at:%Y-%m-%d}: its tokens, MCP access and "
                "endpoint deliveries have ended. Its past forecasts and grades stay on the leaderboard."
            ),
        )
    if holder_deleted:
        return AccessRefusal(
            code="owner_deleted",
            message=(
                f"The account of the person who created this {credential} was deleted, so the {credential} no "
                f"longer works for agent {agent.slug!r}. A member of the team can create a new one."
            ),
        )
    if holder is None:
        return None
    name = holder.get_username()
    if not holder.is_active:
        return AccessRefusal(
            code="owner_deactivated",
            message=(
                f"The account of {name!r}, who created this {credential}, is deactivated, so the {credential} no "
                f"longer works for agent {agent.slug!r}. An active member of the team can create a new one."
            ),
        )
    if holder_is_member is None:
        holder_is_member = Membership.objects.filter(team_id=agent.team_id, user_id=holder.pk).exists()
    if not holder_is_member:
        return AccessRefusal(
            code="not_a_member",
            message=(
                f"{name!r}, who created this {credential}, is no longer a member of the team of agent "
                f"{agent.slug!r}, so the {credential} no longer works. A member of the team can create a new one."
            ),
        )
    return None


def token_creator_deleted(token: ApiToken) -> bool:
    """A person made the token and their account is gone (deleting a user empties ``created_by``)."""
    return token.issued_by == ApiToken.IssuedBy.PERSON and token.created_by_id is None


def token_access_refusals(*, agent: Agent, tokens: Iterable[ApiToken]) -> dict[int, AccessRefusal]:
    """Token id -> why it no longer works, for the agent's tokens not revoked (what the team's page
    shows beside each); the creators' memberships are read at once."""
    live = [t for t in tokens if t.revoked_at is None]
    members = memberships_of(pairs=[(agent.team_id, t.created_by_id) for t in live])
    refusals = {
        t.pk: agent_access_refusal(
            agent=agent,
            holder=t.created_by,
            holder_is_member=(agent.team_id, t.created_by_id) in members,
            holder_deleted=token_creator_deleted(t),
        )
        for t in live
    }
    return {pk: refusal for pk, refusal in refusals.items() if refusal is not None}


def memberships_of(*, pairs: Iterable[tuple[int, int | None]]) -> set[tuple[int, int]]:
    """Of (team id, user id) pairs, those that are memberships, in one read (for checking many at once)."""
    wanted = {(team_id, user_id) for team_id, user_id in pairs if user_id is not None}
    if not wanted:
        return set()
    found = Membership.objects.filter(
        team_id__in={t for t, _ in wanted}, user_id__in={u for _, u in wanted}
    ).values_list("team_id", "user_id")
    return {pair for pair in found if pair in wanted}


def working_tokens_q() -> Q:
    """The rule above as a filter on an Agent queryset's ``tokens``: the tokens that still grant
    access (not revoked, the agent not retired, and their creator, if any, active and still a
    member of the agent's team). Count them with ``distinct=True``: the membership join repeats rows."""
    return Q(retired_at=None, tokens__revoked_at=None) & (
        Q(tokens__issued_by__in=(ApiToken.IssuedBy.COMMAND, ApiToken.IssuedBy.PLATFORM))
        | Q(tokens__created_by__is_active=True, tokens__created_by__memberships__team=F("team"))
    )
