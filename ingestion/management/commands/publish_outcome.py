from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingestion.management.commands._resolution import lookup_or_fail
from ingestion.services.questions import question_publish_outcome


class Command(BaseCommand):
    help = "Reveal a replay question's outcome (and its hindsight graph) to everyone."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question", help="question id or external id")

    def handle(self, *args: Any, **options: Any) -> None:
        question = lookup_or_fail(options["question"])
        try:
            question = question_publish_outcome(question=question)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(
            f"Question {question.pk}: outcome published at {question.outcome_published_at:%Y-%m-%d %H:%M} UTC"
        )
