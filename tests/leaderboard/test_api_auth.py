"""Token auth on the agent endpoints: no, bad or revoked token -> 401; a person without a token -> 403."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from leaderboard.models import ApiToken
from leaderboard.services.teams import token_revoke
from tests.leaderboard.api_support import live_question, staff_client, stored

pytestmark = pytest.mark.django_db(transaction=True)

ENDPOINTS = [
    ("post", "/api/v1/forecasts/"),
    ("post", "/api/v1/forecasts/batch/"),
    ("get", "/api/v1/forecasts/"),
    ("post", "/api/v1/replays/"),
]


def _call(client: httpx.Client, method: str, path: str, question_id: int, **headers: str) -> httpx.Response:
    body: Any = {"question": question_id, "prediction": {"probability": 0.5}}
    if path.endswith("batch/"):
        body = [body]
    if method == "get":
        return client.get(path, headers=headers)
    return client.post(path, json=body, headers=headers)


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_anonymous_gets_401(http: httpx.Client, method: str, path: str) -> None:
    question = live_question()
    response = _call(http, method, path, question.pk)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Token"
    assert response.json()["code"] == "not_authenticated"
    assert stored() == (0, 0)


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
@pytest.mark.parametrize("header", ["Token hs_nope_nope", "Token", "Token a b"])
def test_bad_token_gets_401(http: httpx.Client, method: str, path: str, header: str) -> None:
    question = live_question()
    response = _call(http, method, path, question.pk, Authorization=header)
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"
    assert stored() == (0, 0)


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_revoked_token_gets_401(agent_http: httpx.Client, agent_key: str, method: str, path: str) -> None:
    question = live_question()
    assert _call(agent_http, method, "/api/v1/forecasts/", question.pk).status_code in (200, 201)
    token_revoke(token=ApiToken.objects.get())
    response = _call(agent_http, method, path, question.pk)
    assert response.status_code == 401
    assert "revoked" in response.json()["message"]


def test_person_without_agent_token_gets_403(live_server: Any, staff: Any) -> None:
    question = live_question()
    with staff_client(live_server.url, staff) as client:
        response = client.get("/api/v1/forecasts/")
        assert response.status_code == 403
        assert "agent API token" in response.json()["message"]
        # Questions are public: staff and anonymous read them without a token.
        assert client.get(f"/api/v1/questions/{question.pk}/").status_code == 200


def test_questions_are_public(http: httpx.Client) -> None:
    question = live_question()
    assert http.get("/api/v1/questions/").status_code == 200
    assert http.get(f"/api/v1/questions/{question.pk}/").status_code == 200
