"""The staff admin: teams, agents, tokens, forecasts and grades; history read-only; token hashes
never shown; declared cutoff changes recorded with who and when (admin and team pages alike)."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from django.test import Client

from leaderboard.models import Agent, AgentCutoffChange, ApiToken, Forecast, Grade, Team
from leaderboard.services.grade_runs import grade_question
from leaderboard.services.teams import token_create
from tests.factories import UserFactory
from tests.leaderboard.grading_support import add_forecast, make_question, resolve

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def admin_client(client: Client) -> Client:
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def graded(agent: Agent, settings: Any) -> Forecast:
    settings.LLM_MODEL = ""
    question = make_question("binary")
    forecast = add_forecast(agent, question, {"probability": 0.7})
    resolve(question, True)
    grade_question(question_id=question.pk)
    return forecast


def test_every_staff_page_lists_its_rows(admin_client: Client, agent: Agent, graded: Forecast) -> None:
    for model, needle in (
        ("team", "Owls"),
        ("agent", "Owl One"),
        ("forecast", graded.question.title),
        ("grade", graded.agent.name),
        ("agentcutoffchange", "0 agent cutoff changes"),
    ):
        response = admin_client.get(f"/admin/leaderboard/{model}/")
        assert response.status_code == 200, model
        assert needle in response.content.decode(), model
    assert admin_client.get(f"/admin/leaderboard/team/{agent.team.pk}/change/").status_code == 200


def test_token_hash_and_key_are_never_shown(admin_client: Client, agent: Agent) -> None:
    issued = token_create(agent=agent, issued_by="command")
    token = ApiToken.objects.get(pk=issued.token.pk)
    for url in (
        "/admin/leaderboard/apitoken/",
        f"/admin/leaderboard/apitoken/{token.pk}/change/",
        f"/admin/leaderboard/agent/{agent.pk}/change/",
    ):
        page = admin_client.get(url).content.decode()
        assert token.prefix in page
        assert token.key_hash not in page and issued.key not in page, url
    assert admin_client.get("/admin/leaderboard/apitoken/add/").status_code == 403


def test_revoke_action(admin_client: Client, agent: Agent) -> None:
    token = token_create(agent=agent, issued_by="command").token
    response = admin_client.post(
        "/admin/leaderboard/apitoken/", {"action": "revoke", "_selected_action": [token.pk]}, follow=True
    )
    assert "Revoked 1 token(s)." in response.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_a_team_with_agents_cannot_be_deleted_an_empty_one_can(admin_client: Client, agent: Agent) -> None:
    # Deleting the team would delete its agents' forecasts and grades: staff retire the agents instead.
    assert admin_client.get(f"/admin/leaderboard/team/{agent.team.pk}/delete/").status_code == 403
    listing = admin_client.get("/admin/leaderboard/team/").content.decode()
    assert 'value="delete_selected"' not in listing
    empty = Team.objects.create(name="Typo", slug="typo")
    assert admin_client.post(f"/admin/leaderboard/team/{empty.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Team.objects.filter(pk=empty.pk).exists() and Team.objects.filter(pk=agent.team.pk).exists()


def test_forecasts_and_grades_cannot_be_edited_or_deleted(admin_client: Client, graded: Forecast) -> None:
    grade = Grade.objects.get(forecast=graded)
    change = admin_client.get(f"/admin/leaderboard/forecast/{graded.pk}/change/")
    assert change.status_code == 200 and 'name="_save"' not in change.content.decode()
    assert admin_client.post(f"/admin/leaderboard/forecast/{graded.pk}/change/", {"rationale": "x"}).status_code == 403
    assert admin_client.post(f"/admin/leaderboard/grade/{grade.pk}/delete/", {"post": "yes"}).status_code == 403
    assert admin_client.get("/admin/leaderboard/forecast/add/").status_code == 403
    assert Grade.objects.filter(pk=grade.pk, brier=grade.brier).exists()


def test_cutoff_change_in_the_admin_is_recorded_with_who(admin_client: Client, agent: Agent) -> None:
    old = agent.knowledge_cutoff
    response = admin_client.post(
        f"/admin/leaderboard/agent/{agent.pk}/change/",
        {
            "name": agent.name,
            "model_name": agent.model_name,
            "provider": agent.provider,
            "knowledge_cutoff": "2025-03-31",
            "tools_description": "",
            "cutoff_changes-TOTAL_FORMS": "0",
            "cutoff_changes-INITIAL_FORMS": "0",
            "tokens-TOTAL_FORMS": "0",
            "tokens-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    change = AgentCutoffChange.objects.get(agent=agent)
    assert (change.old_cutoff, change.new_cutoff) == (old, date(2025, 3, 31))
    assert change.changed_by.username == "root" and change.via == "admin"
    page = admin_client.get(f"/admin/leaderboard/agent/{agent.pk}/change/").content.decode()
    assert "declared cutoff changes" in page.lower() and "root" in page


def test_cutoff_change_on_the_team_page_is_recorded(client: Client, owner: Any, agent: Agent) -> None:
    client.force_login(owner)
    response = client.post(
        f"/teams/{agent.team.slug}/agents/{agent.slug}/edit/",
        {"name": agent.name, "model_name": "m", "provider": "", "knowledge_cutoff": "", "tools_description": ""},
    )
    assert response.status_code == 302
    change = AgentCutoffChange.objects.get(agent=agent)
    assert change.new_cutoff is None and change.changed_by == owner and change.via == "web"
