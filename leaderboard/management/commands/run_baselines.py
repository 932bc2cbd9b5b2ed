"""manage.py run_baselines --base-url URL: the platform's own baseline agents forecast over HTTP."""

from __future__ import annotations

from typing import Any

import httpx
from django.core.management.base import BaseCommand, CommandError, CommandParser

from leaderboard.baselines import RUNNERS, baselines_run


class Command(BaseCommand):
    help = (
        "Register the 'Hindsight baselines' team (market-follower, always-half, reference-offline) if "
        "missing and let each agent forecast every offered question through the public API at --base-url. "
        "Safe to run twice: idempotency keys make a rerun submit nothing new."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base-url", required=True, help="the served site, e.g. http://127.0.0.1:8000")
        parser.add_argument("--only", action="append", choices=sorted(RUNNERS), help="run only these (repeatable)")
        parser.add_argument("--limit", type=int, default=0, help="at most N questions per agent (0: all)")
        parser.add_argument(
            "--imported-limit", type=int, default=None, help="at most N imported (ForecastBench) questions per agent"
        )
        parser.add_argument(
            "--origin", action="append", default=[], help="only questions of this origin, e.g. archive (repeatable)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        base_url = options["base_url"].rstrip("/")
        try:
            httpx.get(f"{base_url}/api/v1/questions/", params={"limit": 1}, timeout=10).raise_for_status()
        except httpx.HTTPError as exc:
            raise CommandError(f"no Hindsight API answers at {base_url}: {exc}") from exc
        self.stdout.write(f"Baseline agents forecasting through {base_url}/api/v1/ (submissions by HTTP status):")
        results = baselines_run(
            base_url=base_url,
            only=options["only"],
            limit=options["limit"],
            imported_limit=options["imported_limit"],
            origins=tuple(options["origin"]),
            log=self.stdout.write,
        )
        failed = {name: r for name, r in results.items() if any(status >= 500 for status in r)}
        if failed:
            raise CommandError(f"server errors while forecasting: {failed}")
