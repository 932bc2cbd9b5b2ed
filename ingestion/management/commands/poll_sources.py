from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from ingestion.models import Source
from ingestion.selectors.sources import source_list
from ingestion.services.sources import source_poll


class Command(BaseCommand):
    help = (
        "Poll sources now (all enabled ones, or --source ID even if disabled) and print per source "
        "what was added, skipped and failed. Exits non-zero if any poll failed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--source", type=int, action="append", default=[], metavar="ID", help="repeatable")
        parser.add_argument("--details", action="store_true", help="also list skipped entries")

    def handle(self, *args: Any, **options: Any) -> None:
        ids: list[int] = options["source"]
        if ids:
            sources = list(Source.objects.filter(pk__in=ids).order_by("id"))
            missing = sorted(set(ids) - {s.pk for s in sources})
            if missing:
                raise CommandError(f"no source with id {', '.join(map(str, missing))}")
        else:
            sources = list(source_list().filter(enabled=True))
            if not sources:
                self.stdout.write("No enabled sources; add one with `manage.py add_source KIND URL`.")
                return
        failures = 0
        for source in sources:
            report = source_poll(source_id=source.pk, now=timezone.now(), include_disabled=bool(ids))
            self.stdout.write(f"source {source.pk} {source.name} [{source.kind}]: {report.summary()}")
            if options["details"]:
                for problem in report.problems:
                    self.stdout.write(f"  {problem}")
            if report.error:
                failures += 1
        if failures:
            raise CommandError(f"{failures} of {len(sources)} source(s) failed; see the errors above")
