"""Tokens and retirement as the team pages state them: "Active tokens" counts the tokens that still
grant access (one token is one, however many forecasts the agent made; none once the agent is
retired or the token's creator left the team), a retired agent's "Submit a forecast" says it is
retired, and staff retire an agent from the team page."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from leaderboard.models import Agent, Membership
from leaderboard.services.teams import agent_retire, token_create
from tests.factories import UserFactory
from tests.leaderboard.grading_support import add_forecast, make_question

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _agent_row(client: Client, url: str, agent: Agent) -> str:
    html = client.get(url).content.decode()
    row = re.search(rf"<tr>\s*<td><a href=\"[^\"]*/{agent.slug}/\">.*?</tr>", html, re.S)
    assert row is not None, html
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", row.group(0))).split())


def test_active_tokens_count_the_tokens_that_work(owner: Any, agent: Agent) -> None:
    token_create(agent=agent, created_by=owner)
    for _ in range(7):
        add_forecast(agent, make_question(), {"probability": 0.6})
    team_page = reverse("leaderboard:team_detail", args=[agent.team.slug])
    owner_client = client_for(owner)
    # Columns: name, model, provider, cutoff, active tokens, forecasts.
    assert _agent_row(owner_client, team_page, agent).endswith("1 7 Retire agent")
    assert " 1 " in _agent_row(owner_client, reverse("leaderboard:dashboard"), agent)

    # A token made by a member who left the team no longer works: not counted, and its row says why.
    leaver = UserFactory(username="leaver")
    membership = Membership.objects.create(team=agent.team, user=leaver)
    token_create(agent=agent, created_by=leaver)
    assert _agent_row(owner_client, team_page, agent).endswith("2 7 Retire agent")
    membership.delete()
    assert _agent_row(owner_client, team_page, agent).endswith("1 7 Retire agent")
    detail = owner_client.get(reverse("leaderboard:agent_detail", args=[agent.team.slug, agent.slug])).content
    assert "creator left the team" in detail.decode()

    agent_retire(agent=agent, retired_by=owner)
    row = _agent_row(owner_client, team_page, agent)
    assert "retired" in row and row.endswith("0 7")


def test_a_retired_agents_forecast_link_says_it_is_retired(owner: Any, agent: Agent) -> None:
    agent_retire(agent=agent, retired_by=owner)
    owner_client = client_for(owner)
    dashboard = owner_client.get(reverse("leaderboard:dashboard")).content.decode()
    assert f"?agent={agent.slug}" not in dashboard and "takes no forecasts" in dashboard
    form = owner_client.get(reverse("leaderboard:forecast_form"), {"agent": agent.slug}).content.decode()
    assert f"was retired on {agent.retired_at:%Y-%m-%d}: it takes no new forecasts" in form
    assert "You need an agent first" not in form
    assert "You need an agent first" not in owner_client.get(reverse("leaderboard:forecast_form")).content.decode()


def test_staff_retire_an_agent_from_the_team_page(owner: Any, agent: Agent, staff: Any) -> None:
    team_page = reverse("leaderboard:team_detail", args=[agent.team.slug])
    retire = reverse("leaderboard:agent_retire", args=[agent.team.slug, agent.slug])
    member = UserFactory(username="member")
    Membership.objects.create(team=agent.team, user=member)
    assert "Retire agent" not in client_for(member).get(team_page).content.decode()
    assert client_for(member).post(retire).status_code == 403

    staff_client = client_for(staff)
    page = staff_client.get(team_page).content.decode()
    assert f'aria-label="Retire agent {agent.name}"' in page
    done = staff_client.post(retire, {"back": "team"}, follow=True)
    assert done.redirect_chain[-1][0] == team_page
    agent.refresh_from_db()
    assert agent.retired_at is not None and agent.retired_by == staff
    assert "its forecasts and grades stay on the leaderboard" in done.content.decode()
    assert f'aria-label="Retire agent {agent.name}"' not in done.content.decode()
