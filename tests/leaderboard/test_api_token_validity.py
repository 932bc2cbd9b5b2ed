"""A token that is revoked or unknown is refused with 401 everywhere, public endpoints included,
rather than being served as an anonymous request."""

from __future__ import annotations

import httpx
import pytest

from leaderboard.models import Agent
from leaderboard.services.teams import token_create, token_revoke
from tests.leaderboard.api_support import live_question

pytestmark = pytest.mark.django_db(transaction=True)

PUBLIC = [
    "/api/v1/questions/",
    "/api/v1/questions/{q}/",
    "/api/v1/questions/{q}/hindsight/",
    "/api/v1/leaderboard/",
    "/api/v1/agents/owl-one/",
    "/api/v1/schema/?format=json",
]


@pytest.mark.parametrize("endpoint", PUBLIC)
def test_revoked_and_unknown_tokens_get_401(endpoint: str, agent: Agent, owner: object, http: httpx.Client) -> None:
    url = endpoint.format(q=live_question().pk)
    revoked = token_create(agent=agent, created_by=owner)
    token_revoke(token=revoked.token)
    for key in (revoked.key, "not-a-token-anyone-was-given"):
        response = http.get(url, headers={"Authorization": f"Token {key}"})
        assert response.status_code == 401, (key, response.text)
        assert response.json() == {"code": "authentication_failed", "message": "Invalid or revoked token."}
        assert response.headers["WWW-Authenticate"] == "Token"
    assert http.get(url).status_code in (200, 404)  # anonymous is still served
