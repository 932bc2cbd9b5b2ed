"""Create (or reuse) a team and an agent and issue a new API token for it.

The token is printed alone on the last line of output so that scripts can capture it:
    KEY=$(python manage.py create_agent --team Owls --agent "Owl One" | tail -n1)
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from leaderboard.models import AgentCutoffChange, ApiToken
from leaderboard.services.teams import agent_create, agent_update, team_ensure, token_create


def _cutoff(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise CommandError(f"--cutoff {value!r} is not a date: use the format YYYY-MM-DD.") from exc


def _one_line(error: ValidationError) -> str:
    if hasattr(error, "error_dict"):
        return "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in error.message_dict.items())
    return " ".join(error.messages)


class Command(BaseCommand):
    help = (
        "Create the team and agent if missing (reusing existing ones) and print a new API token alone on the last line."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--team", required=True, help="Team name (or slug of an existing team).")
        parser.add_argument("--agent", required=True, help="Agent name within the team.")
        parser.add_argument("--model", default=None, help="Model name, e.g. gpt-4o-2024-08-06.")
        parser.add_argument("--provider", default=None, help="Model provider, e.g. OpenAI.")
        parser.add_argument("--cutoff", default=None, help="Declared knowledge cutoff, YYYY-MM-DD.")
        parser.add_argument("--tools", default=None, help="Description of the tools the agent uses.")
        parser.add_argument("--owner", default=None, help="Username to make an owner of the team.")
        parser.add_argument("--token-name", default="cli", help="Label of the new token (default: cli).")

    def handle(self, *args: Any, **options: Any) -> None:
        cutoff = _cutoff(options["cutoff"]) if options["cutoff"] else None
        owner = None
        if options["owner"]:
            owner = get_user_model().objects.filter(username=options["owner"]).first()
            if owner is None:
                raise CommandError(
                    f"--owner: no user named {options['owner']!r}; create it first (createsuperuser or sign up)."
                )
        try:
            with transaction.atomic():
                lines, key = self._run(options, cutoff=cutoff, owner=owner)
        except ValidationError as exc:
            raise CommandError(_one_line(exc)) from exc
        for line in lines:
            self.stdout.write(line)
        self.stdout.write(key)

    def _run(self, options: dict[str, Any], *, cutoff: date | None, owner: Any) -> tuple[list[str], str]:
        lines: list[str] = []
        team, created = team_ensure(name=options["team"], owner=owner)
        lines.append(f"{'Created' if created else 'Reusing'} team {team.name!r} (slug {team.slug}).")
        if owner is not None:
            lines.append(f"{owner.get_username()!r} is a member of {team.name!r}.")
        name = options["agent"].strip()
        agent = team.agents.filter(name__iexact=name).first()
        if agent is None:
            agent = agent_create(
                team=team,
                name=name,
                model_name=options["model"] or "",
                provider=options["provider"] or "",
                knowledge_cutoff=cutoff,
                tools_description=options["tools"] or "",
            )
            lines.append(f"Created agent {agent.name!r} (slug {agent.slug}).")
        else:
            lines.append(f"Reusing agent {agent.name!r} (slug {agent.slug}).")
            changes = {
                "model_name": options["model"],
                "provider": options["provider"],
                "knowledge_cutoff": cutoff,
                "tools_description": options["tools"],
            }
            # Only options given on the command line change an existing agent.
            changed = {k: v for k, v in changes.items() if v is not None and getattr(agent, k) != v}
            if changed:
                fields = {
                    "model_name": agent.model_name,
                    "provider": agent.provider,
                    "knowledge_cutoff": agent.knowledge_cutoff,
                    "tools_description": agent.tools_description,
                    **changed,
                }
                agent_update(agent=agent, name=agent.name, via=AgentCutoffChange.Via.COMMAND, **fields)
                lines.append("Updated " + ", ".join(f"{k}={v}" for k, v in changed.items()) + ".")
        if agent.knowledge_cutoff is None:
            lines.append(
                "Note: no knowledge cutoff declared; the agent is excluded from replay rankings (use --cutoff)."
            )
        # Without --owner no person makes the token: it ends only with the agent's retirement.
        issued = token_create(
            agent=agent,
            name=options["token_name"],
            created_by=owner,
            issued_by=None if owner is not None else ApiToken.IssuedBy.COMMAND,
        )
        lines.append(f"Issued token {issued.token.prefix}… for agent {agent.slug}; it is shown once, on the next line.")
        return lines, issued.key
