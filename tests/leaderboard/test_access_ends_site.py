"""The site ends a person's access with the account, as the API ends a token's: over real HTTP, a
member signed in keeps nothing once the agent is retired, their account is deleted or deactivated,
they are taken off the team or the team is deleted (no forecast from the browser, no team page).
The members who stay see on the agent's page which tokens and which endpoint stopped, and why."""

from __future__ import annotations

import re
from typing import Any

import pytest

from endpoints.services.registration import endpoint_register
from ingestion.models import Question
from leaderboard.models import Agent, Forecast, Membership
from leaderboard.services.teams import token_create
from tests.access_cases import end_access
from tests.factories import UserFactory
from tests.leaderboard.api_support import live_question, staff_client

pytestmark = pytest.mark.django_db(transaction=True)


def _form(agent: Agent, question: Question) -> str:
    return f"/forecast/?agent={agent.slug}&question={question.pk}"


def _hidden(page: str, name: str) -> str:
    match = re.search(rf'name="{name}"(?: value="([^"]*)")?', page)
    assert match, f"no {name} in the page"
    return match.group(1) or ""


@pytest.mark.parametrize("case", ["retired", "deleted", "deactivated", "removed", "team deleted"])
def test_a_signed_in_member_can_do_nothing_more(case: str, live_server: Any, agent: Agent, owner: Any) -> None:
    question = live_question()
    agent_page = f"/teams/{agent.team.slug}/agents/{agent.slug}/"
    with staff_client(live_server.url, owner) as site:
        page = site.get(_form(agent, question))
        assert page.status_code == 200 and 'name="probability"' in page.text
        post = {
            "csrfmiddlewaretoken": _hidden(page.text, "csrfmiddlewaretoken"),
            "idempotency_key": _hidden(page.text, "idempotency_key"),
            "action": "submit",
            "probability": "0.7",
        }
        assert site.get(agent_page).status_code == 200

        if case == "team deleted":
            agent.team.delete()  # its agents, tokens and endpoints go with it
        else:
            end_access(case, agent=agent, owner=owner)

        sent = site.post(_form(agent, question), data=post)
        assert not Forecast.objects.exists()
        form, team = site.get(_form(agent, question)), site.get(agent_page)
    if case in ("deleted", "deactivated"):
        # The session no longer signs anyone in: every page asks to log in.
        for response in (sent, form, team):
            assert response.status_code == 302 and response.headers["Location"].startswith("/accounts/login/")
        return
    # Signed in, but the agent is no longer theirs to forecast with: it is not offered.
    assert sent.status_code in (200, 404) and "stored for" not in sent.text
    assert form.status_code in (200, 404) and 'name="probability"' not in form.text
    if case == "retired":
        assert team.status_code == 200 and "Retired on" in team.text and "Create a token" not in team.text
    else:
        assert team.status_code == 404


def test_the_members_who_stay_see_which_credentials_ended_and_why(
    live_server: Any, agent: Agent, owner: Any, settings: Any
) -> None:
    settings.HINDSIGHT_DELIVERY_ALLOW_LOOPBACK = True
    colleague, leaver, gone = (UserFactory(username=name) for name in ("colleague", "leaver", "gone"))
    for person in (colleague, leaver, gone):
        Membership.objects.create(team=agent.team, user=person)
    tokens = {
        "colleague": token_create(agent=agent, name="mine", created_by=colleague).token.prefix,
        "cli": token_create(agent=agent, name="cli", issued_by="command").token.prefix,
        "owner": token_create(agent=agent, name="owner's", created_by=owner).token.prefix,
        "leaver": token_create(agent=agent, name="leaver's", created_by=leaver).token.prefix,
        "gone": token_create(agent=agent, name="gone's", created_by=gone).token.prefix,
    }
    endpoint_register(agent=agent, url="https://127.0.0.1:9/agent", created_by=gone)

    end_access("deactivated", agent=agent, owner=owner)
    end_access("removed", agent=agent, owner=leaver)
    end_access("deleted", agent=agent, owner=gone)

    with staff_client(live_server.url, colleague) as site:
        page = site.get(f"/teams/{agent.team.slug}/agents/{agent.slug}/").text
    rows = {prefix: _row(page, prefix) for prefix in tokens.values()}
    assert "active" in rows[tokens["colleague"]] and "colleague" in rows[tokens["colleague"]]
    assert "active" in rows[tokens["cli"]] and "the command line" in rows[tokens["cli"]]
    assert "ended: creator&#x27;s account deactivated" in rows[tokens["owner"]]
    assert "ended: creator left the team" in rows[tokens["leaver"]]
    gone_row = rows[tokens["gone"]]
    assert "ended: creator&#x27;s account deleted" in gone_row and "a deleted account" in gone_row
    status = re.search(r'data-testid="endpoint-status">(.*?)</td>', page, re.S)
    assert status and "ended: creator&#x27;s account deleted" in status.group(1)
    assert "The account of the person who created this endpoint was deleted" in status.group(1)


def _row(page: str, prefix: str) -> str:
    match = re.search(rf'<tr data-token="{prefix}">(.*?)</tr>', page, re.S)
    assert match, f"no row for token {prefix}"
    return match.group(1)
