"""Reads about teams, memberships, agents and tokens, scoped to what a user may see."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, QuerySet

from leaderboard.models import Agent, ApiToken, Membership, Team


def team_list_for_user(*, user: Any) -> QuerySet[Team]:
    """The teams the user belongs to, with member and agent counts."""
    if not getattr(user, "is_authenticated", False):
        return Team.objects.none()
    return (
        Team.objects.filter(memberships__user=user)
        .annotate(
            member_count=Count("memberships", distinct=True),
            agent_count=Count("agents", distinct=True),
        )
        .order_by("name")
    )


def team_visible_to(*, user: Any) -> QuerySet[Team]:
    """Teams whose pages the user may read: their own, or every team for staff."""
    if not getattr(user, "is_authenticated", False):
        return Team.objects.none()
    if user.is_staff:
        return Team.objects.all()
    return Team.objects.filter(memberships__user=user)


def membership_get(*, team: Team, user: Any) -> Membership | None:
    if not getattr(user, "is_authenticated", False):
        return None
    return Membership.objects.filter(team=team, user=user).first()


def agent_list_for_user(*, user: Any) -> QuerySet[Agent]:
    """Agents of the user's teams: the agents the user may manage and submit forecasts for."""
    if not getattr(user, "is_authenticated", False):
        return Agent.objects.none()
    return (
        Agent.objects.filter(team__memberships__user=user)
        .select_related("team")
        .annotate(
            active_token_count=Count("tokens", filter=Q(tokens__revoked_at=None), distinct=True),
        )
        .order_by("team__name", "name")
    )


def team_member_list(*, team: Team) -> QuerySet[Membership]:
    return team.memberships.select_related("user").order_by("-role", "user__username")


def token_list(*, agent: Agent) -> QuerySet[ApiToken]:
    return agent.tokens.select_related("created_by").order_by("-created_at", "-id")
