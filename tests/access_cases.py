"""The ways an agent's access ends while its credentials stay, for the tests of every way in (API,
MCP, deliveries, the site)."""

from __future__ import annotations

from typing import Any

from leaderboard.models import Agent, Membership
from leaderboard.services.teams import agent_retire

# case -> (error code, words the message must hold)
ENDINGS: dict[str, tuple[str, str]] = {
    "retired": ("agent_retired", "was retired on"),
    "deleted": ("owner_deleted", "the person who created this"),
    "deactivated": ("owner_deactivated", "'owner', who created this"),
    "removed": ("not_a_member", "'owner', who created this"),
}
WHY: dict[str, str] = {
    "retired": "retired",
    "deleted": "was deleted",
    "deactivated": "is deactivated",
    "removed": "no longer a member",
}


def end_access(case: str, *, agent: Agent, owner: Any) -> None:
    """Retire the agent, or delete, deactivate or take off the agent's team its token's creator."""
    if case == "retired":
        agent_retire(agent=agent, retired_by=owner)
    elif case == "deleted":
        type(owner).objects.filter(pk=owner.pk).delete()  # as the admin's delete does: created_by goes empty
    elif case == "deactivated":
        owner.is_active = False
        owner.save(update_fields=["is_active"])
    else:
        Membership.objects.filter(team_id=agent.team_id, user=owner).delete()


def assert_refused(response_status: int, body: dict[str, Any], case: str) -> None:
    code, words = ENDINGS[case]
    assert response_status == 403, body
    assert body["code"] == code, body
    assert words in body["message"] and WHY[case] in body["message"], body
