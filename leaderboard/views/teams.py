"""Team pages: members, agents and their API tokens. Only members see a team (staff may read)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from leaderboard.forms import AgentForm, MemberAddForm, TeamForm, TokenForm
from leaderboard.models import Agent, ApiToken, Membership, Team
from leaderboard.selectors.agent_access import token_access_refusals
from leaderboard.selectors.teams import (
    membership_get,
    team_agent_list,
    team_member_list,
    team_visible_to,
    token_list,
)
from leaderboard.services.teams import (
    agent_create,
    agent_retire,
    agent_update,
    team_add_member_by_username,
    team_create,
    token_create,
    token_revoke,
)


@dataclass(frozen=True)
class TeamAccess:
    team: Team
    membership: Membership | None

    @property
    def is_member(self) -> bool:
        return self.membership is not None

    @property
    def is_owner(self) -> bool:
        return self.membership is not None and self.membership.role == Membership.Role.OWNER


def _team_access(request: HttpRequest, slug: str, *, manage: bool = False, owner: bool = False) -> TeamAccess:
    """The team if the user may see it: a non-member gets 404 (the team's existence stays private);
    staff may read any team but only members manage it."""
    team = get_object_or_404(team_visible_to(user=request.user).distinct(), slug=slug)
    access = TeamAccess(team=team, membership=membership_get(team=team, user=request.user))
    if (manage or owner) and not access.is_member:
        raise PermissionDenied("Only members of this team can do that.")
    if owner and not access.is_owner:
        raise PermissionDenied("Only the team's owners can do that.")
    return access


def _agent(access: TeamAccess, agent_slug: str) -> Agent:
    return get_object_or_404(Agent, team=access.team, slug=agent_slug)


def _form_errors_from(form: TeamForm | MemberAddForm | AgentForm, error: ValidationError) -> None:
    for field, msgs in error.message_dict.items():
        for msg in msgs:
            form.add_error(field if field in form.fields else None, msg)


@login_required
def team_new(request: HttpRequest) -> HttpResponse:
    form = TeamForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            team = team_create(name=form.cleaned_data["name"], owner=request.user)  # type: ignore[arg-type]
        except ValidationError as exc:
            _form_errors_from(form, exc)
        else:
            messages.success(request, f"Team {team.name} created; you are its owner.")
            return redirect("leaderboard:team_detail", slug=team.slug)
    return render(request, "leaderboard/team_form.html", {"form": form})


@login_required
def team_detail(request: HttpRequest, slug: str) -> HttpResponse:
    access = _team_access(request, slug)
    agents = team_agent_list(team=access.team)
    return render(
        request,
        "leaderboard/team_detail.html",
        {
            "team": access.team,
            "access": access,
            "memberships": team_member_list(team=access.team),
            "agents": agents,
            "can_retire": access.is_owner or request.user.is_staff,
            "member_form": MemberAddForm(),
        },
    )


@login_required
def team_member_add(request: HttpRequest, slug: str) -> HttpResponse:
    access = _team_access(request, slug, owner=True)
    form = MemberAddForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            membership = team_add_member_by_username(team=access.team, username=form.cleaned_data["username"])
        except ValidationError as exc:
            _form_errors_from(form, exc)
        else:
            messages.success(request, f"{membership.user.get_username()} joined {access.team.name}.")
            return redirect("leaderboard:team_detail", slug=access.team.slug)
    return render(request, "leaderboard/team_member_add.html", {"team": access.team, "form": form})


@login_required
def agent_new(request: HttpRequest, slug: str) -> HttpResponse:
    access = _team_access(request, slug, manage=True)
    form = AgentForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            agent = agent_create(team=access.team, **form.cleaned_data)
        except ValidationError as exc:
            _form_errors_from(form, exc)
        else:
            messages.success(request, f"Agent {agent.name} registered. Create an API token for it below.")
            return redirect("leaderboard:agent_detail", slug=access.team.slug, agent_slug=agent.slug)
    return render(request, "leaderboard/agent_form.html", {"team": access.team, "form": form, "agent": None})


@login_required
def agent_edit(request: HttpRequest, slug: str, agent_slug: str) -> HttpResponse:
    access = _team_access(request, slug, manage=True)
    agent = _agent(access, agent_slug)
    initial = {
        "name": agent.name,
        "model_name": agent.model_name,
        "provider": agent.provider,
        "knowledge_cutoff": agent.knowledge_cutoff,
        "tools_description": agent.tools_description,
    }
    form = AgentForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            agent_update(agent=agent, changed_by=request.user, **form.cleaned_data)  # type: ignore[arg-type]
        except ValidationError as exc:
            _form_errors_from(form, exc)
        else:
            messages.success(request, f"Agent {agent.name} updated.")
            return redirect("leaderboard:agent_detail", slug=access.team.slug, agent_slug=agent.slug)
    return render(request, "leaderboard/agent_form.html", {"team": access.team, "form": form, "agent": agent})


@login_required
def agent_detail(request: HttpRequest, slug: str, agent_slug: str) -> HttpResponse:
    access = _team_access(request, slug)
    agent = _agent(access, agent_slug)
    tokens = list(token_list(agent=agent))
    ended = token_access_refusals(agent=agent, tokens=tokens)
    return render(
        request,
        "leaderboard/agent_detail.html",
        {
            "team": access.team,
            "access": access,
            "agent": agent,
            "tokens": [(t, ended.get(t.pk)) for t in tokens],
            "token_form": TokenForm(),
            "recent_forecasts": agent.forecasts.select_related("question")[:10],
        },
    )


@never_cache
@login_required
@require_POST
def token_new(request: HttpRequest, slug: str, agent_slug: str) -> HttpResponse:
    access = _team_access(request, slug, manage=True)
    agent = _agent(access, agent_slug)
    form = TokenForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(str(m) for msgs in form.errors.values() for m in msgs))
        return redirect("leaderboard:agent_detail", slug=access.team.slug, agent_slug=agent.slug)
    try:
        issued = token_create(agent=agent, name=form.cleaned_data["name"], created_by=request.user)  # type: ignore[arg-type]
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
        return redirect("leaderboard:agent_detail", slug=access.team.slug, agent_slug=agent.slug)
    # Rendered directly (no redirect) so that the key exists in this one response only.
    return render(request, "leaderboard/token_created.html", {"team": access.team, "agent": agent, "issued": issued})


@login_required
@require_POST
def token_revoke_view(request: HttpRequest, slug: str, agent_slug: str, token_id: int) -> HttpResponse:
    access = _team_access(request, slug, manage=True)
    agent = _agent(access, agent_slug)
    try:
        token = agent.tokens.get(pk=token_id)
    except ApiToken.DoesNotExist as exc:
        raise Http404("No such token for this agent.") from exc
    already = token.revoked_at is not None
    token_revoke(token=token)
    if already:
        messages.info(request, f"Token {token.prefix}… was already revoked.")
    else:
        messages.success(request, f"Token {token.prefix}… revoked; requests using it now get 401.")
    return redirect("leaderboard:agent_detail", slug=access.team.slug, agent_slug=agent.slug)


@login_required
@require_POST
def agent_retire_view(request: HttpRequest, slug: str, agent_slug: str) -> HttpResponse:
    """A team owner or staff retire an agent: its access ends at once; its forecasts and grades stay."""
    access = _team_access(request, slug)
    if not (access.is_owner or request.user.is_staff):
        raise PermissionDenied("Only the team's owners and staff can retire its agents.")
    agent = _agent(access, agent_slug)
    if agent_retire(agent=agent, retired_by=request.user):  # type: ignore[arg-type]
        messages.success(
            request,
            f"Agent {agent.name} retired: its tokens, MCP access and endpoint deliveries have ended; "
            "its forecasts and grades stay on the leaderboard.",
        )
    else:
        messages.info(request, f"Agent {agent.name} was already retired.")
    if request.POST.get("back") == "team":
        return redirect("leaderboard:team_detail", slug=access.team.slug)
    return redirect("leaderboard:agent_detail", slug=access.team.slug, agent_slug=agent.slug)
