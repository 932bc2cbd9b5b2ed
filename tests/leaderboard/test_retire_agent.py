"""Retiring an agent from the team page (owners only), the admin (staff) and ``retire_agent``:
the pages show it retired, it takes no new token nor browser forecast, its forecasts stay."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from leaderboard.models import Agent, Membership
from tests.factories import UserFactory
from tests.leaderboard.grading_support import add_forecast, make_question

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_owner_retires_from_the_team_page(owner: Any, agent: Agent) -> None:
    add_forecast(agent, make_question(), {"probability": 0.6})
    member = UserFactory(username="member")
    Membership.objects.create(team=agent.team, user=member)
    retire = reverse("leaderboard:agent_retire", args=[agent.team.slug, agent.slug])
    page = reverse("leaderboard:agent_detail", args=[agent.team.slug, agent.slug])

    assert "Retire agent" not in client_for(member).get(page).content.decode()
    assert client_for(member).post(retire).status_code == 403  # members may not; owners may
    agent.refresh_from_db()
    assert agent.retired_at is None

    owner_client = client_for(owner)
    assert "Retire agent" in owner_client.get(page).content.decode()
    done = owner_client.post(retire, follow=True).content.decode()
    agent.refresh_from_db()
    assert agent.retired_at is not None and agent.retired_by == owner
    assert "its forecasts and grades stay" in done and "Create a token" not in done
    team_page = owner_client.get(reverse("leaderboard:team_detail", args=[agent.team.slug])).content.decode()
    assert f"retired {agent.retired_at:%Y-%m-%d}" in team_page
    public = Client().get(reverse("leaderboard:agent_public", args=[agent.slug])).content.decode()
    assert "retired" in public and agent.forecasts.count() == 1

    # No new token, no forecast from the browser.
    refused = owner_client.post(
        reverse("leaderboard:token_new", args=[agent.team.slug, agent.slug]), {"name": "again"}, follow=True
    )
    assert "is retired: it takes no new tokens" in refused.content.decode() and not agent.tokens.exists()
    form = owner_client.get(reverse("leaderboard:forecast_form"), {"agent": agent.slug})
    assert form.status_code == 200 and form.context["agents"] == []  # not offered


def test_staff_retire_in_the_admin_and_operators_with_the_command(agent: Agent) -> None:
    staff = client_for(UserFactory(username="root", is_staff=True, is_superuser=True))
    changelist = reverse("admin:leaderboard_agent_changelist")
    done = staff.post(changelist, {"action": "retire", "_selected_action": [agent.pk]}, follow=True)
    assert "Retired 1 agent(s)." in done.content.decode()
    agent.refresh_from_db()
    assert agent.retired_at is not None and agent.retired_by.username == "root"

    other = Agent.objects.create(team=agent.team, name="Owl Two", slug="owl-two")
    out = StringIO()
    call_command("retire_agent", "owl-two", stdout=out)
    assert "Retired agent 'owl-two'" in out.getvalue()
    call_command("retire_agent", "owl-two", stdout=out)
    assert "was already retired" in out.getvalue()
    other.refresh_from_db()
    assert other.retired_at is not None
    with pytest.raises(CommandError, match="No agent with slug 'nobody'"):
        call_command("retire_agent", "nobody")
