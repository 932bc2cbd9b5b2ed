"""Teams, members, agents and their API tokens."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, date, datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from leaderboard.models import Agent, AgentCutoffChange, ApiToken, Membership, Team
from leaderboard.services.grade_contamination import grades_refresh_contamination

TOKEN_PREFIX_LENGTH = 8


def hash_token(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _unique_slug(model: type[Team] | type[Agent], name: str) -> str:
    base = slugify(name)[:180] or "x"
    slug, n = base, 2
    while model.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug


@transaction.atomic
def team_create(*, name: str, owner: User | None) -> Team:
    name = name.strip()
    if not name:
        raise ValidationError({"name": "A team needs a name."})
    if len(name) > 200:
        raise ValidationError({"name": "Team names are at most 200 characters."})
    if Team.objects.filter(name__iexact=name).exists():
        raise ValidationError({"name": f"A team named {name!r} already exists."})
    team = Team.objects.create(name=name, slug=_unique_slug(Team, name))
    if owner is not None:
        Membership.objects.create(team=team, user=owner, role=Membership.Role.OWNER)
    return team


@transaction.atomic
def team_add_member(*, team: Team, user: User, role: str = Membership.Role.MEMBER) -> Membership:
    membership, _ = Membership.objects.get_or_create(team=team, user=user, defaults={"role": role})
    return membership


@transaction.atomic
def team_add_member_by_username(*, team: Team, username: str, role: str = Membership.Role.MEMBER) -> Membership:
    """Add an existing user to a team; an unknown user or an existing member is a field error."""
    username = username.strip()
    if not username:
        raise ValidationError({"username": "Enter the username of the person to add."})
    user = get_user_model().objects.filter(username__iexact=username).first()
    if user is None:
        raise ValidationError({"username": f"No one has the username {username!r}: they must sign up first."})
    if Membership.objects.filter(team=team, user=user).exists():
        raise ValidationError({"username": f"{user.get_username()!r} is already a member of {team.name!r}."})
    return Membership.objects.create(team=team, user=user, role=role)


@transaction.atomic
def team_ensure(*, name: str, owner: User | None = None) -> tuple[Team, bool]:
    """The team with this name (case-insensitive) or slug, created if missing; (team, created).

    An owner given for an existing team becomes its owner if not a member yet.
    """
    name = name.strip()
    team = Team.objects.filter(name__iexact=name).first() or Team.objects.filter(slug=name).first()
    if team is None:
        return team_create(name=name, owner=owner), True
    if owner is not None:
        team_add_member(team=team, user=owner, role=Membership.Role.OWNER)
    return team, False


@transaction.atomic
def agent_create(
    *,
    team: Team,
    name: str,
    model_name: str = "",
    provider: str = "",
    knowledge_cutoff: date | None = None,
    tools_description: str = "",
    is_baseline: bool = False,
    now: datetime | None = None,
) -> Agent:
    name, model_name, provider = name.strip(), model_name.strip(), provider.strip()
    _check_agent_fields(name=name, model_name=model_name, provider=provider, knowledge_cutoff=knowledge_cutoff, now=now)
    if team.agents.filter(name__iexact=name).exists():
        raise ValidationError({"name": f"Team {team.name!r} already has an agent named {name!r}."})
    return Agent.objects.create(
        team=team,
        name=name,
        slug=_unique_slug(Agent, name),
        model_name=model_name,
        provider=provider,
        knowledge_cutoff=knowledge_cutoff,
        tools_description=tools_description.strip(),
        is_baseline=is_baseline,
    )


def _check_agent_fields(
    *, name: str, model_name: str, provider: str, knowledge_cutoff: date | None, now: datetime | None
) -> None:
    errors: dict[str, str] = {}
    today = (now or timezone.now()).astimezone(UTC).date()
    if knowledge_cutoff is not None and knowledge_cutoff > today:
        # A cutoff in the future would let every replay forecast count as uncontaminated.
        errors["knowledge_cutoff"] = (
            f"The knowledge cutoff {knowledge_cutoff.isoformat()} is in the future (today is {today.isoformat()}): "
            "declare the date of the newest data the model was trained on."
        )
    if not name:
        errors["name"] = "An agent needs a name."
    elif len(name) > 200:
        errors["name"] = "Agent names are at most 200 characters."
    if len(model_name) > 200:
        errors["model_name"] = "Model names are at most 200 characters."
    if len(provider) > 200:
        errors["provider"] = "Provider names are at most 200 characters."
    if errors:
        raise ValidationError(errors)


@transaction.atomic
def agent_update(
    *,
    agent: Agent,
    name: str,
    model_name: str = "",
    provider: str = "",
    knowledge_cutoff: date | None = None,
    tools_description: str = "",
    changed_by: User | None = None,
    via: str = AgentCutoffChange.Via.WEB,
    now: datetime | None = None,
) -> Agent:
    """Edit an agent's declared details; its slug never changes so that API URLs stay stable.

    A change of the declared cutoff is recorded (old, new, who, when, where) before grades follow it."""
    name, model_name, provider = name.strip(), model_name.strip(), provider.strip()
    _check_agent_fields(
        name=name,
        model_name=model_name,
        provider=provider,
        # Only a changed cutoff is checked: an agent declared earlier keeps saving its other details.
        knowledge_cutoff=knowledge_cutoff if knowledge_cutoff != agent.knowledge_cutoff else None,
        now=now,
    )
    if agent.team.agents.filter(name__iexact=name).exclude(pk=agent.pk).exists():
        raise ValidationError({"name": f"Team {agent.team.name!r} already has an agent named {name!r}."})
    old_cutoff = agent.knowledge_cutoff
    cutoff_changed = old_cutoff != knowledge_cutoff
    agent.name = name
    agent.model_name = model_name
    agent.provider = provider
    agent.knowledge_cutoff = knowledge_cutoff
    agent.tools_description = tools_description.strip()
    agent.save(update_fields=["name", "model_name", "provider", "knowledge_cutoff", "tools_description"])
    if cutoff_changed:
        AgentCutoffChange.objects.create(
            agent=agent,
            old_cutoff=old_cutoff,
            new_cutoff=knowledge_cutoff,
            changed_by=changed_by,
            via=via,
            changed_at=now or timezone.now(),
        )
        # Grades carry contamination data from the declared cutoff; the standings filter on it.
        # (The tasks module imports the services, so it is imported here, when needed.)
        from leaderboard.tasks import update_standings_for_questions

        question_ids = grades_refresh_contamination(agent_id=agent.pk)
        if question_ids:
            transaction.on_commit(lambda: update_standings_for_questions.delay(question_ids))
    return agent


@transaction.atomic
def agent_retire(*, agent: Agent, retired_by: User | None = None, now: datetime | None = None) -> bool:
    """Retire an agent: at once its tokens, MCP access, endpoint deliveries and evidence tokens stop
    working (``leaderboard.selectors.agent_access``), while its forecasts, grades and standings stay.
    Nothing is deleted or revoked, so the agent's page still shows what it did. Returns False when
    it was retired already (the first date stands)."""
    retired = Agent.objects.filter(pk=agent.pk, retired_at=None).update(
        retired_at=now or timezone.now(), retired_by=retired_by
    )
    agent.refresh_from_db(fields=["retired_at", "retired_by"])
    return bool(retired)


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    key: str  # shown once; only its hash is stored


@transaction.atomic
def token_create(
    *,
    agent: Agent,
    name: str = "",
    created_by: User | None = None,
    issued_by: str | None = None,
    now: datetime | None = None,
) -> IssuedToken:
    """A new token for ``agent``, made by ``created_by`` or, when no person makes it, by what
    ``issued_by`` names (``command`` or ``platform``). The difference lasts: a person's token stops
    when their account is deleted, one made by no person only when the agent is retired."""
    if created_by is not None:
        if issued_by not in (None, ApiToken.IssuedBy.PERSON):
            raise ValueError(f"a token created by a person is issued by a person, not {issued_by!r}")
        issued_by = ApiToken.IssuedBy.PERSON
    elif issued_by not in (ApiToken.IssuedBy.COMMAND, ApiToken.IssuedBy.PLATFORM):
        raise ValueError("a token no person creates must say what issues it: issued_by='command' or 'platform'")
    if agent.retired_at is not None:
        raise ValidationError({"agent": f"Agent {agent.slug!r} is retired: it takes no new tokens."})
    while True:
        prefix = secrets.token_hex(TOKEN_PREFIX_LENGTH // 2)
        if not ApiToken.objects.filter(prefix=prefix).exists():
            break
    key = f"hs_{prefix}_{secrets.token_urlsafe(32)}"
    token = ApiToken.objects.create(
        agent=agent,
        name=name,
        prefix=prefix,
        key_hash=hash_token(key),
        issued_by=issued_by,
        created_by=created_by,
        created_at=now or timezone.now(),
    )
    return IssuedToken(token=token, key=key)


@transaction.atomic
def token_revoke(*, token: ApiToken, now: datetime | None = None) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = now or timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def token_authenticate(*, key: str) -> ApiToken | None:
    """The active token for a presented key, or None."""
    token = (
        ApiToken.objects.select_related("agent", "agent__team")
        .filter(key_hash=hash_token(key), revoked_at=None)
        .first()
    )
    return token
