"""Retire an agent: its tokens, MCP access and endpoint deliveries end at once; its forecasts,
grades and standings stay.

    python manage.py retire_agent owl-one [--by USERNAME]
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from leaderboard.models import Agent
from leaderboard.services.teams import agent_retire


class Command(BaseCommand):
    help = "Retire an agent (by slug): its API tokens, MCP access and endpoint deliveries stop; its grades stay."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("agent", help="The agent's slug (as in /agents/<slug>/).")
        parser.add_argument("--by", default=None, help="Username recorded as having retired it.")

    def handle(self, *args: Any, **options: Any) -> None:
        agent = Agent.objects.filter(slug=options["agent"]).first()
        if agent is None:
            raise CommandError(f"No agent with slug {options['agent']!r}.")
        by = None
        if options["by"]:
            by = get_user_model().objects.filter(username=options["by"]).first()
            if by is None:
                raise CommandError(f"--by: no user named {options['by']!r}.")
        if agent_retire(agent=agent, retired_by=by):
            self.stdout.write(
                f"Retired agent {agent.slug!r} at {agent.retired_at:%Y-%m-%d %H:%M} UTC: its tokens, MCP access and "
                "endpoint deliveries have ended; its forecasts and grades stay."
            )
        else:
            self.stdout.write(f"Agent {agent.slug!r} was already retired on {agent.retired_at:%Y-%m-%d}.")
