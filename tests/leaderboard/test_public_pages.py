"""Every public page renders with data and empty; replay outcomes stay hidden until published."""

from __future__ import annotations

import pytest
from django.urls import reverse

from leaderboard.services.standings import standings_rebuild
from tests.leaderboard.standings_data import build_world

pytestmark = pytest.mark.django_db

PAGES = ["/", "/leaderboard/", "/leaderboard/?track=live&domain=politics&type=binary", "/questions/", "/methods/"]


@pytest.mark.parametrize("url", PAGES)
def test_pages_render_empty(client, url: str) -> None:
    assert client.get(url).status_code == 200


def test_pages_render_with_data(client, owner, settings) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 3
    world = build_world()
    standings_rebuild()
    for url in [
        *PAGES,
        "/leaderboard/?contamination=off&sort=-accuracy",
        "/leaderboard/?from=2026-01-20&to=2026-02-10",
    ]:
        response = client.get(url)
        assert response.status_code == 200, url
    board = client.get("/leaderboard/").content.decode()
    assert "Sharp Falcon" in board and "Always 0.5" in board and "no cutoff declared" in board
    assert 'role="img"' in board  # interval bars
    agent = client.get(reverse("leaderboard:agent_public", args=["sharp-falcon"])).content.decode()
    assert "Reliability diagram" in agent and "<figcaption" in agent
    question = client.get(reverse("leaderboard:question", args=[world.live[0].pk])).content.decode()
    assert "Market price" in question and "Sharp Falcon" in question
    assert "/hindsight/questions/" not in question  # no graph was built: no link to a 404
    home = client.get("/").content.decode()
    assert "Will the open thing happen?" in home and "Sharp Falcon" in home
    methods = client.get("/methods/").content.decode()
    assert "1e-06" in methods and "hybrid-bm25rs-tokf1" in methods
    client.force_login(owner)
    assert client.get(reverse("leaderboard:dashboard")).status_code == 200


def test_bad_filters_get_a_clear_error(client) -> None:
    response = client.get("/leaderboard/?track=sideways&from=yesterday")
    assert response.status_code == 400
    body = response.content.decode()
    assert "track" in body and "from" in body


def test_replay_outcome_hidden_until_published(client) -> None:
    world = build_world()
    standings_rebuild()
    page = client.get(reverse("leaderboard:question", args=[world.replay_hidden.pk])).content.decode()
    assert "SECRET-NOTE" not in page and "hidden until staff publish" in page
    assert "shown once staff publish its outcome" in page and "sharp-falcon" not in page
    agent = client.get(reverse("leaderboard:agent_public", args=["sharp-falcon"])).content.decode()
    assert world.replay_hidden.title not in agent
    world.replay_hidden.outcome_published_at = world.replay_hidden.close_at
    world.replay_hidden.save()
    page = client.get(reverse("leaderboard:question", args=[world.replay_hidden.pk])).content.decode()
    assert "SECRET-NOTE" in page and "sharp-falcon" in page
    assert client.get("/questions/999999/").status_code == 404
    assert client.get("/agents/nobody/").status_code == 404
