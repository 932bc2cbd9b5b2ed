"""The endpoint section of an agent's page: register (secret shown once, stored encrypted),
https-only outside development, members only, deliver now, pause, rotate and remove."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from endpoints.models import AgentEndpoint, Delivery
from endpoints.secret_box import secret_decrypt
from leaderboard.models import Agent
from tests.leaderboard.api_support import replay_question

pytestmark = pytest.mark.django_db

AGENT_PAGE = "/teams/owls/agents/owl-one/"


def member(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def register(client: Client, url: str = "http://127.0.0.1:8765/hook", **extra: Any) -> Any:
    data = {"url": url, "max_concurrency": 2, "offer_live": "on", **extra}
    return client.post(f"{AGENT_PAGE}endpoint/register/", data, follow=True)


def messages_of(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_the_secret_is_shown_once_and_stored_encrypted(owner: Any, agent: Agent) -> None:
    client = member(owner)
    response = register(client)
    assert response.status_code == 200 and "no-cache" in response["Cache-Control"]
    match = re.search(r'data-testid="endpoint-secret">(whsec_[^<]+)<', response.content.decode())
    assert match and "shown only once" in response.content.decode()
    secret = match.group(1)

    stored = AgentEndpoint.objects.get(agent=agent)
    assert secret not in stored.secret_ciphertext and secret_decrypt(stored.secret_ciphertext) == secret
    page = client.get(AGENT_PAGE).content.decode()
    assert secret not in page and f"{stored.secret_prefix}…" in page and "http://127.0.0.1:8765/hook" in page

    rotated = client.post(f"{AGENT_PAGE}endpoint/rotate/")
    new_secret = re.search(r'data-testid="endpoint-secret">(whsec_[^<]+)<', rotated.content.decode())
    assert new_secret and new_secret.group(1) != secret
    stored.refresh_from_db()
    assert secret_decrypt(stored.secret_ciphertext) == new_secret.group(1)


def test_endpoints_must_be_https_on_public_addresses_outside_development(
    settings: Any, owner: Any, agent: Agent
) -> None:
    settings.HINDSIGHT_DELIVERY_ALLOW_LOOPBACK = False
    client = member(owner)
    for url, message in [
        ("http://agent.example.org/hook", "The endpoint must use https://"),
        ("https://127.0.0.1/hook", "127.0.0.1 is a loopback address"),
        ("https://localhost:8443/", "localhost is this machine"),
        ("https://10.1.2.3/hook", "10.1.2.3 is not a public address"),
        ("https://169.254.169.254/latest", "169.254.169.254 is not a public address"),
        ("https://user:pw@agent.example.org/", "Put no credentials in the URL"),
        ("agent.example.org/hook", "Enter the full address of your endpoint"),
    ]:
        shown = messages_of(register(client, url))
        assert any(message in m for m in shown), (url, shown)
    assert not AgentEndpoint.objects.exists()
    assert "Endpoint registered" in register(client, "https://agent.example.org/hook").content.decode()


def test_only_members_manage_the_endpoint(owner: Any, rival: Any, staff: Any, agent: Agent) -> None:
    assert register(member(rival)).status_code == 404
    assert not AgentEndpoint.objects.exists()
    register(member(owner))
    staff_page = member(staff).get(AGENT_PAGE).content.decode()
    assert "http://127.0.0.1:8765/hook" in staff_page and "Deliver a question now" not in staff_page
    assert member(staff).post(f"{AGENT_PAGE}endpoint/remove/").status_code == 403
    assert AgentEndpoint.objects.exists()


def test_deliver_now_pause_and_remove(owner: Any, agent: Agent) -> None:
    client = member(owner)
    register(client)
    question = replay_question()
    queued = client.post(f"{AGENT_PAGE}endpoint/deliver/", {"question": question.pk}, follow=True)
    delivery = Delivery.objects.get()
    assert messages_of(queued) == [f"Question {question.pk} queued for delivery {delivery.pk}."]
    assert delivery.requested_by == owner and delivery.session is not None
    assert "Requested by owner" in queued.content.decode()

    unknown = client.post(f"{AGENT_PAGE}endpoint/deliver/", {"question": 987654}, follow=True)
    assert messages_of(unknown) == ["Question 987654 does not exist."]

    paused = client.post(f"{AGENT_PAGE}endpoint/pause/", follow=True)
    assert "paused" in paused.content.decode()
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.CANCELLED
    refused = client.post(f"{AGENT_PAGE}endpoint/deliver/", {"question": question.pk}, follow=True)
    assert messages_of(refused) == ["Agent owl-one's endpoint is paused; resume it first."]
    client.post(f"{AGENT_PAGE}endpoint/pause/", {"resume": "1"})
    assert AgentEndpoint.objects.get().is_active

    removed = client.post(f"{AGENT_PAGE}endpoint/remove/", follow=True)
    assert not AgentEndpoint.objects.exists() and "No endpoint registered" in removed.content.decode()
    assert Delivery.objects.count() == 1  # the log stays
