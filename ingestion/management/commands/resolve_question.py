from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingestion.management.commands._resolution import describe, lookup_or_fail
from ingestion.question_data import parse_aware_datetime
from ingestion.services.questions import question_resolve


class Command(BaseCommand):
    help = "Resolve (or amend) a question: resolve_question ID --outcome JSON [--note TEXT] [--resolved-at ISO]"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question", help="question id or external id")
        parser.add_argument("--outcome", required=True, help='JSON, e.g. true, "Option A", 12.5, "2026-Q3"')
        parser.add_argument("--note", default="")
        parser.add_argument("--resolved-at", default=None, help="ISO 8601 with offset; default now")
        parser.add_argument("--provisional", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        question = lookup_or_fail(options["question"])
        try:
            outcome = json.loads(options["outcome"])
        except json.JSONDecodeError as exc:
            raise CommandError(f"--outcome is not valid JSON: {exc}") from exc
        try:
            resolved_at = (
                parse_aware_datetime(options["resolved_at"], field_name="--resolved-at")
                if options["resolved_at"]
                else None
            )
            resolution = question_resolve(
                question=question,
                outcome=outcome,
                resolved_at=resolved_at,
                provisional=options["provisional"],
                note=options["note"],
                author_label="staff (command line)",
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(describe(question, resolution, "already resolved with that outcome; nothing changed"))
