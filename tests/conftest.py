"""Fixtures shared by every app's tests: personas, API clients over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from celery.signals import task_prerun

from leaderboard.models import Agent, Membership
from leaderboard.services.teams import token_create
from tests.browser import browser, browser_page  # noqa: F401  (fixtures for browser tests)
from tests.factories import AgentFactory, MembershipFactory, TeamFactory, UserFactory


@pytest.fixture
def owner(db: Any) -> Any:
    """A user who owns a team with one agent."""
    return UserFactory(username="owner")


@pytest.fixture
def team(owner: Any) -> Any:
    team = TeamFactory(name="Owls", slug="owls")
    MembershipFactory(team=team, user=owner, role=Membership.Role.OWNER)
    return team


@pytest.fixture
def agent(team: Any) -> Agent:
    return AgentFactory(team=team, name="Owl One", slug="owl-one")


@pytest.fixture
def agent_key(agent: Agent, owner: Any) -> str:
    return token_create(agent=agent, created_by=owner).key


@pytest.fixture
def rival(db: Any) -> Any:
    """A member of another team, with an agent of their own."""
    user = UserFactory(username="rival")
    rival_team = TeamFactory(name="Ravens", slug="ravens")
    MembershipFactory(team=rival_team, user=user, role=Membership.Role.OWNER)
    return user


@pytest.fixture
def rival_agent(rival: Any) -> Agent:
    return AgentFactory(team=rival.teams.get(), name="Raven One", slug="raven-one")


@pytest.fixture
def rival_key(rival_agent: Agent, rival: Any) -> str:
    return token_create(agent=rival_agent, created_by=rival).key


@pytest.fixture
def staff(db: Any) -> Any:
    return UserFactory(username="staff", is_staff=True, is_superuser=True)


@pytest.fixture
def http(live_server: Any) -> Iterator[httpx.Client]:
    """An anonymous client speaking real HTTP to the live test server."""
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        yield client


@pytest.fixture
def agent_http(live_server: Any, agent_key: str) -> Iterator[httpx.Client]:
    """The owner's agent, authenticated with its token, over real HTTP."""
    with httpx.Client(base_url=live_server.url, timeout=30, headers={"Authorization": f"Token {agent_key}"}) as c:
        yield c


@pytest.fixture
def rival_http(live_server: Any, rival_key: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.url, timeout=30, headers={"Authorization": f"Token {rival_key}"}) as c:
        yield c


@pytest.fixture(autouse=True)
def _evidence_log_settled(request: pytest.FixtureRequest) -> Iterator[None]:
    """The live server flushes the evidence access log after each response, in its own thread; flush
    (and wait for that flush) before the test database is truncated, so the two never race."""
    uses_live_server = "live_server" in request.fixturenames
    if uses_live_server:
        # Set the database up first, so that it is torn down after this fixture's flush.
        request.getfixturevalue("transactional_db")
        request.getfixturevalue("live_server")
    yield
    if uses_live_server:
        from leaderboard.services.evidence import evidence_log_flush

        evidence_log_flush()


@pytest.fixture(autouse=True)
def _tasks_run_in_process() -> Iterator[None]:
    """Every test starts with tasks executed in-process (tests.celery_worker.running_worker switches
    to Redis for its block); a test that changed the Celery app cannot leak into the next one."""
    from config import celery_app

    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = True


@pytest.fixture
def tasks_run() -> Iterator[list[str]]:
    """Names of the Celery tasks that run in this process (in-process tasks), in order."""
    names: list[str] = []

    def count(sender: Any = None, task: Any = None, **kwargs: Any) -> None:
        names.append(task.name)

    task_prerun.connect(count, weak=False)
    yield names
    task_prerun.disconnect(count)
