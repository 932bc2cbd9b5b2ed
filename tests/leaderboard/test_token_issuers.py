"""What made a token lasts beside it: a person (whose account's deletion ends the token), the command
line or the platform (which no account ends). A token whose creator was deleted is never mistaken
for one no person made, from `create_agent` on, and in a database upgraded from before the record."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from leaderboard.authentication import _active_token
from leaderboard.models import Agent, ApiToken
from leaderboard.selectors.agent_access import agent_access_refusal, token_creator_deleted
from leaderboard.services.teams import token_create
from tests.factories import UserFactory

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]

BEFORE = ("leaderboard", "0012_agent_retired_at")
AFTER = ("leaderboard", "0013_apitoken_issued_by")


def _refusal_code(key: str) -> str | None:
    token = _active_token(key)
    assert token is not None
    refusal = agent_access_refusal(
        agent=token.agent, holder=token.created_by, holder_deleted=token_creator_deleted(token)
    )
    return None if refusal is None else refusal.code


def test_create_agent_says_who_issued_each_token_and_a_deleted_owner_ends_only_theirs() -> None:
    owner = UserFactory(username="ada")
    with_owner = _create_agent("--owner", "ada")
    without = _create_agent()
    issuers = dict(ApiToken.objects.values_list("created_by__username", "issued_by"))
    assert issuers == {"ada": "person", None: "command"}

    owner.delete()

    assert _refusal_code(with_owner) == "owner_deleted"
    assert _refusal_code(without) is None
    assert set(ApiToken.objects.values_list("created_by", "issued_by")) == {(None, "person"), (None, "command")}


def test_a_token_no_person_makes_names_what_issues_it(agent: Agent, owner: Any) -> None:
    with pytest.raises(ValueError, match="must say what issues it"):
        token_create(agent=agent)
    with pytest.raises(ValueError, match="issued by a person"):
        token_create(agent=agent, created_by=owner, issued_by="command")
    assert token_create(agent=agent, issued_by="platform").token.created_by is None


def test_tokens_stored_before_the_record_keep_working_as_they_did(agent: Agent, owner: Any) -> None:
    baseline = Agent.objects.create(team=agent.team, name="always-half", slug="always-half", is_baseline=True)
    migrate(BEFORE)
    try:
        old_token = MigrationExecutor(connection).loader.project_state(BEFORE).apps.get_model("leaderboard", "ApiToken")
        for n, (agent_id, creator) in enumerate([(agent.pk, owner.pk), (agent.pk, None), (baseline.pk, None)]):
            old_token.objects.create(
                agent_id=agent_id, prefix=f"p{n}", key_hash=f"h{n}", created_by_id=creator, created_at=owner.date_joined
            )
        migrate(AFTER)
    finally:
        # Every later migration too, so the tests after this one meet the schema the code expects.
        migrate(*MigrationExecutor(connection).loader.graph.leaf_nodes())
    issuers = dict(ApiToken.objects.values_list("prefix", "issued_by"))
    assert issuers == {"p0": "person", "p1": "command", "p2": "platform"}


def _create_agent(*options: str) -> str:
    out = StringIO()
    call_command("create_agent", "--team", "Owls", "--agent", "Owl One", *options, stdout=out)
    return out.getvalue().strip().splitlines()[-1]


def migrate(*targets: tuple[str, str]) -> None:
    MigrationExecutor(connection).migrate(list(targets))
