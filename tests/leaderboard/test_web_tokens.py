"""API tokens from the web: shown once, listed by prefix, revoked with a CSRF-protected POST,
after which the API answers 401 (checked over real HTTP)."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from django.test import Client
from django.urls import reverse

from leaderboard.models import Agent, ApiToken
from leaderboard.services.teams import hash_token

pytestmark = pytest.mark.django_db(transaction=True)

FORECASTS_API = "/api/v1/forecasts/"


def logged_in(user: Any, **kwargs: Any) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def create_token(client: Client, agent: Agent, name: str = "laptop") -> tuple[str, Any]:
    response = client.post(reverse("leaderboard:token_new", args=[agent.team.slug, agent.slug]), {"name": name})
    assert response.status_code == 200
    match = re.search(r'data-testid="token-key">([^<]+)<', response.content.decode())
    assert match, "the new key is on the page"
    return match.group(1), response


def test_token_is_shown_once_and_stored_hashed(owner: Any, agent: Agent, http: httpx.Client) -> None:
    client = logged_in(owner)
    key, response = create_token(client, agent)
    assert "shown only once" in response.content.decode()
    assert "no-cache" in response["Cache-Control"] or "no-store" in response["Cache-Control"]
    token = ApiToken.objects.get(agent=agent)
    assert token.key_hash == hash_token(key) and key not in (token.prefix, token.key_hash)
    assert key.startswith(f"hs_{token.prefix}_") and token.name == "laptop" and token.created_by == owner

    page = client.get(reverse("leaderboard:agent_detail", args=[agent.team.slug, agent.slug])).content.decode()
    assert key not in page and token.prefix in page and "laptop" in page and "never" in page

    assert http.get(FORECASTS_API, headers={"Authorization": f"Token {key}"}).status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_revoke_makes_the_api_answer_401(owner: Any, agent: Agent, http: httpx.Client) -> None:
    client = logged_in(owner)
    key, _ = create_token(client, agent)
    other_key, _ = create_token(client, agent, name="server")
    token = ApiToken.objects.get(name="laptop")
    revoke_url = reverse("leaderboard:token_revoke", args=[agent.team.slug, agent.slug, token.pk])

    assert client.get(revoke_url).status_code == 405
    csrf_client = logged_in(owner, enforce_csrf_checks=True)
    assert csrf_client.post(revoke_url).status_code == 403
    token.refresh_from_db()
    assert token.revoked_at is None

    response = client.post(revoke_url)
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert http.get(FORECASTS_API, headers={"Authorization": f"Token {key}"}).status_code == 401
    assert http.get(FORECASTS_API, headers={"Authorization": f"Token {other_key}"}).status_code == 200

    page = client.get(reverse("leaderboard:agent_detail", args=[agent.team.slug, agent.slug])).content.decode()
    assert "revoked" in page
    # Revoking twice keeps the first revocation time.
    first = token.revoked_at
    client.post(revoke_url)
    token.refresh_from_db()
    assert token.revoked_at == first


def test_other_team_cannot_create_or_revoke(owner: Any, agent: Agent, rival: Any, http: httpx.Client) -> None:
    key, _ = create_token(logged_in(owner), agent)
    token = ApiToken.objects.get()
    rival_client = logged_in(rival)
    assert rival_client.post(reverse("leaderboard:token_new", args=[agent.team.slug, agent.slug])).status_code == 404
    revoke_url = reverse("leaderboard:token_revoke", args=[agent.team.slug, agent.slug, token.pk])
    assert rival_client.post(revoke_url).status_code == 404
    assert Client().post(revoke_url).status_code == 302  # anonymous: to the login page
    token.refresh_from_db()
    assert token.revoked_at is None and ApiToken.objects.count() == 1
    assert http.get(FORECASTS_API, headers={"Authorization": f"Token {key}"}).status_code == 200


def test_a_token_of_another_agent_cannot_be_revoked_through_this_agent(owner: Any, team: Any, agent: Agent) -> None:
    from tests.factories import AgentFactory

    second = AgentFactory(team=team, name="Owl Two", slug="owl-two")
    client = logged_in(owner)
    create_token(client, second)
    token = ApiToken.objects.get()
    url = reverse("leaderboard:token_revoke", args=[team.slug, agent.slug, token.pk])
    assert client.post(url).status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None
