"""Accounts, teams, members and agents through the web pages, for every persona."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from leaderboard.models import Agent, Membership, Team
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def client_for(user: Any | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def test_signup_logs_in_and_logout_logs_out() -> None:
    client = Client()
    response = client.post(
        reverse("leaderboard:signup"),
        {"username": "newbie", "email": "", "password1": "a-long-Passphrase-9", "password2": "a-long-Passphrase-9"},
    )
    assert response.status_code == 302 and response["Location"] == reverse("leaderboard:dashboard")
    assert client.get(reverse("leaderboard:dashboard")).status_code == 200
    client.post(reverse("logout"))
    assert client.get(reverse("leaderboard:dashboard")).status_code == 302


def test_login_with_wrong_password_shows_error(owner: Any) -> None:
    response = Client().post(reverse("login"), {"username": "owner", "password": "wrong"})
    assert response.status_code == 200
    assert "correct username and password" in response.content.decode()


def test_creating_a_team_makes_the_user_its_owner(owner: Any) -> None:
    client = client_for(owner)
    response = client.post(reverse("leaderboard:team_new"), {"name": "Foxes"})
    team = Team.objects.get(name="Foxes")
    assert response["Location"] == reverse("leaderboard:team_detail", args=[team.slug])
    assert Membership.objects.get(team=team, user=owner).role == Membership.Role.OWNER
    duplicate = client.post(reverse("leaderboard:team_new"), {"name": "foxes"})
    assert "already exists" in duplicate.content.decode()
    assert Team.objects.filter(name__iexact="foxes").count() == 1


def test_owner_adds_member_and_unknown_user_is_a_clear_error(owner: Any, team: Team) -> None:
    UserFactory(username="newcomer")
    client = client_for(owner)
    url = reverse("leaderboard:team_member_add", args=[team.slug])
    unknown = client.post(url, {"username": "nobody"})
    assert unknown.status_code == 200
    assert "No one has the username &#x27;nobody&#x27;" in unknown.content.decode()
    assert client.post(url, {"username": "newcomer"}).status_code == 302
    assert team.members.filter(username="newcomer").exists()
    again = client.post(url, {"username": "newcomer"})
    assert "already a member" in again.content.decode()
    page = client.get(reverse("leaderboard:team_detail", args=[team.slug])).content.decode()
    assert "newcomer" in page


def test_only_owners_add_members(owner: Any, team: Team) -> None:
    member = UserFactory(username="member")
    Membership.objects.create(team=team, user=member, role=Membership.Role.MEMBER)
    UserFactory(username="someone")
    response = client_for(member).post(
        reverse("leaderboard:team_member_add", args=[team.slug]), {"username": "someone"}
    )
    assert response.status_code == 403
    assert not team.members.filter(username="someone").exists()


def test_member_registers_and_edits_agent(owner: Any, team: Team) -> None:
    member = UserFactory(username="member")
    Membership.objects.create(team=team, user=member, role=Membership.Role.MEMBER)
    client = client_for(member)
    response = client.post(
        reverse("leaderboard:agent_new", args=[team.slug]),
        {
            "name": "Owl Two",
            "model_name": "m-1",
            "provider": "Acme",
            "knowledge_cutoff": "",
            "tools_description": "search",
        },
    )
    agent = Agent.objects.get(name="Owl Two")
    assert agent.slug == "owl-two" and agent.knowledge_cutoff is None
    assert response["Location"] == reverse("leaderboard:agent_detail", args=[team.slug, agent.slug])
    team_page = client.get(reverse("leaderboard:team_detail", args=[team.slug])).content.decode()
    assert "no cutoff declared — excluded from replay rankings" in team_page

    bad = client.post(
        reverse("leaderboard:agent_edit", args=[team.slug, agent.slug]),
        {"name": "Owl Two", "knowledge_cutoff": "31/12/2024"},
    )
    assert "Enter the cutoff as YYYY-MM-DD." in bad.content.decode()
    client.post(
        reverse("leaderboard:agent_edit", args=[team.slug, agent.slug]),
        {
            "name": "Owl Deux",
            "model_name": "m-2",
            "provider": "Acme",
            "knowledge_cutoff": "2024-12-31",
            "tools_description": "",
        },
    )
    agent.refresh_from_db()
    assert (agent.name, agent.model_name, str(agent.knowledge_cutoff), agent.slug) == (
        "Owl Deux",
        "m-2",
        "2024-12-31",
        "owl-two",
    )


def test_duplicate_agent_name_is_refused(owner: Any, team: Team, agent: Agent) -> None:
    response = client_for(owner).post(reverse("leaderboard:agent_new", args=[team.slug]), {"name": "owl one"})
    assert "already has an agent named" in response.content.decode()
    assert team.agents.count() == 1


def _team_urls(team: Team, agent: Agent) -> dict[str, str]:
    return {
        "team": reverse("leaderboard:team_detail", args=[team.slug]),
        "agent": reverse("leaderboard:agent_detail", args=[team.slug, agent.slug]),
        "agent_new": reverse("leaderboard:agent_new", args=[team.slug]),
        "agent_edit": reverse("leaderboard:agent_edit", args=[team.slug, agent.slug]),
        "member_add": reverse("leaderboard:team_member_add", args=[team.slug]),
    }


def test_anonymous_is_sent_to_login(team: Team, agent: Agent) -> None:
    client = Client()
    for url in [
        *_team_urls(team, agent).values(),
        reverse("leaderboard:dashboard"),
        reverse("leaderboard:forecast_form"),
    ]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login") + "?next="), url


def test_member_of_another_team_gets_404_everywhere(team: Team, agent: Agent, rival: Any) -> None:
    client = client_for(rival)
    for name, url in _team_urls(team, agent).items():
        assert client.get(url).status_code == 404, name
        assert client.post(url, {"name": "x", "username": "rival"}).status_code == 404, name
    token_url = reverse("leaderboard:token_new", args=[team.slug, agent.slug])
    assert client.post(token_url, {"name": "stolen"}).status_code == 404
    assert agent.tokens.count() == 0 and team.agents.count() == 1 and team.members.count() == 1


def test_owner_sees_team_and_agent_pages(owner: Any, team: Team, agent: Agent) -> None:
    client = client_for(owner)
    for name, url in _team_urls(team, agent).items():
        assert client.get(url).status_code == 200, name
    dashboard = client.get(reverse("leaderboard:dashboard")).content.decode()
    assert "Owls" in dashboard and "Owl One" in dashboard and reverse("leaderboard:forecast_form") in dashboard


def test_staff_may_read_any_team_but_not_manage_it(team: Team, agent: Agent, staff: Any) -> None:
    client = client_for(staff)
    urls = _team_urls(team, agent)
    assert client.get(urls["team"]).status_code == 200
    assert client.get(urls["agent"]).status_code == 200
    assert client.post(urls["agent_new"], {"name": "Staff bot"}).status_code == 403
    assert client.post(reverse("leaderboard:token_new", args=[team.slug, agent.slug])).status_code == 403
    assert client.post(urls["member_add"], {"username": "staff"}).status_code == 403
    assert team.agents.count() == 1 and agent.tokens.count() == 0
