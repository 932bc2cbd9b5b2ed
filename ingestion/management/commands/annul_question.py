from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingestion.management.commands._resolution import describe, lookup_or_fail
from ingestion.services.questions import question_annul


class Command(BaseCommand):
    help = "Annul a question (cancelled, 50-50, unresolvable): annul_question ID --reason TEXT"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question", help="question id or external id")
        parser.add_argument("--reason", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        question = lookup_or_fail(options["question"])
        try:
            resolution = question_annul(
                question=question, reason=options["reason"], author_label="staff (command line)"
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(describe(question, resolution, "already annulled; nothing changed"))
