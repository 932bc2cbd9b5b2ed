from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingestion.models import Source
from ingestion.selectors.sources import source_list
from ingestion.services.sources import source_create, source_validate


def parse_option(text: str) -> tuple[str, Any]:
    """KEY=VALUE; the value is JSON when it parses as JSON (numbers, booleans, lists), else text."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise CommandError(f"--option {text!r}: expected KEY=VALUE")
    try:
        return key, json.loads(raw)
    except json.JSONDecodeError:
        return key, raw


class Command(BaseCommand):
    help = (
        "Add a feed or market source; prints the new source's id alone on the last line. "
        "Safe to run twice: an existing source with the same kind and URL is reported, not duplicated."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kind", help=f"one of: {', '.join(Source.Kind.values)}")
        parser.add_argument("url")
        parser.add_argument("--name", default="")
        parser.add_argument(
            "--option",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="source option; VALUE is parsed as JSON when possible (repeatable)",
        )
        parser.add_argument("--interval", type=float, default=15.0, metavar="MINUTES", help="poll interval")
        parser.add_argument("--disabled", action="store_true", help="create the source disabled")

    def handle(self, *args: Any, **options: Any) -> None:
        kind: str = options["kind"].strip().lower()
        url: str = options["url"].strip()
        source_options = dict(parse_option(text) for text in options["option"])
        interval = timedelta(minutes=options["interval"])
        try:
            source_validate(kind=kind, url=url, options=source_options, poll_interval=interval)
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from exc
        existing = source_list(kind=kind, url=url).first()
        if existing is not None:
            self.stdout.write(f"Source {existing.pk} ({existing.name}) already exists for {kind} {url}; unchanged.")
            self.stdout.write(str(existing.pk))
            return
        try:
            source = source_create(
                kind=kind,
                url=url,
                name=options["name"],
                options=source_options,
                poll_interval=interval,
                enabled=not options["disabled"],
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(
            f"Added {source.kind} source {source.pk} ({source.name}) polling {source.url} "
            f"every {options['interval']:g} min{'' if source.enabled else ' (disabled)'}."
        )
        self.stdout.write(str(source.pk))
