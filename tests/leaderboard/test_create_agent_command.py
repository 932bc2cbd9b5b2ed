"""`manage.py create_agent`: creates what is missing, reuses the rest, prints a new token last."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from leaderboard.models import Agent, ApiToken, Membership, Team
from leaderboard.services.teams import token_authenticate
from tests.factories import UserFactory

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


def run(*args: str) -> list[str]:
    out = StringIO()
    call_command("create_agent", *args, stdout=out)
    return out.getvalue().rstrip("\n").splitlines()


def test_creates_team_agent_and_token_then_reuses_them() -> None:
    UserFactory(username="alice")
    args = ["--team", "Owls", "--agent", "Owl One", "--model", "gpt-x", "--cutoff", "2024-10-01", "--owner", "alice"]
    first = run(*args)
    assert any("Created team 'Owls'" in line for line in first)
    assert any("Created agent 'Owl One'" in line for line in first)
    key1 = first[-1]
    token = token_authenticate(key=key1)
    assert token is not None and token.agent.name == "Owl One"
    agent = Agent.objects.get()
    assert (agent.model_name, str(agent.knowledge_cutoff)) == ("gpt-x", "2024-10-01")
    assert Membership.objects.get(team__name="Owls", user__username="alice").role == Membership.Role.OWNER

    second = run(*args)
    assert any("Reusing team 'Owls'" in line for line in second)
    assert any("Reusing agent 'Owl One'" in line for line in second)
    key2 = second[-1]
    assert key2 != key1 and " " not in key2
    assert Team.objects.count() == 1 and Agent.objects.count() == 1 and Membership.objects.count() == 1
    assert ApiToken.objects.count() == 2
    assert token_authenticate(key=key1) is not None and token_authenticate(key=key2) is not None


def test_without_cutoff_the_agent_is_labelled_and_options_update_existing_agent() -> None:
    lines = run("--team", "Ravens", "--agent", "Raven")
    assert any("no knowledge cutoff declared" in line for line in lines)
    lines = run("--team", "ravens", "--agent", "raven", "--cutoff", "2025-01-31", "--provider", "Acme")
    agent = Agent.objects.get()
    assert str(agent.knowledge_cutoff) == "2025-01-31" and agent.provider == "Acme"
    assert any(line.startswith("Updated ") for line in lines)
    assert token_authenticate(key=lines[-1]) is not None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cutoff", "31/01/2025"], "YYYY-MM-DD"),
        (["--cutoff", "2025-02-30"], "YYYY-MM-DD"),
        (["--owner", "ghost"], "no user named 'ghost'"),
    ],
)
def test_bad_input_is_a_command_error_and_changes_nothing(args: list[str], message: str, db: Any) -> None:
    with pytest.raises(CommandError, match=message):
        run("--team", "Owls", "--agent", "Owl", *args)
    assert not Team.objects.exists() and not Agent.objects.exists() and not ApiToken.objects.exists()


def test_blank_agent_name_is_refused() -> None:
    with pytest.raises(CommandError, match="name: An agent needs a name"):
        run("--team", "Owls", "--agent", "  ")
    assert not Team.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_printed_token_authenticates_over_http(http: Any) -> None:
    key = run("--team", "Owls", "--agent", "Owl One", "--cutoff", "2024-10-01")[-1]
    assert http.get("/api/v1/forecasts/", headers={"Authorization": f"Token {key}"}).status_code == 200
    assert http.get("/api/v1/forecasts/", headers={"Authorization": f"Token {key}x"}).status_code == 401
