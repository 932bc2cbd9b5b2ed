"""Reads about teams, memberships, agents and tokens, scoped to what a user may see."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from leaderboard.models import Agent, ApiToken, Forecast, Membership, Team
from leaderboard.selectors.agent_access import working_tokens_q


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
        .annotate(active_token_count=Count("tokens", filter=working_tokens_q(), distinct=True))
        .order_by("team__name", "name")
    )


def team_agent_list(*, team: Team) -> QuerySet[Agent]:
    """A team's agents with their working tokens (``working_tokens_q``) and forecasts counted."""
    # Forecasts counted in a subquery: joined beside the tokens, each count would multiply the other.
    forecasts = (
        Forecast.objects.filter(agent=OuterRef("pk")).order_by().values("agent").annotate(n=Count("id")).values("n")
    )
    return team.agents.annotate(
        active_token_count=Count("tokens", filter=working_tokens_q(), distinct=True),
        forecast_count=Coalesce(Subquery(forecasts), 0),
    ).order_by("name")


def team_member_list(*, team: Team) -> QuerySet[Membership]:
    return team.memberships.select_related("user").order_by("-role", "user__username")


def token_list(*, agent: Agent) -> QuerySet[ApiToken]:
    return agent.tokens.select_related("created_by").order_by("-created_at", "-id")
