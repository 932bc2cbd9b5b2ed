from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ingestion.management.commands._resolution import describe, lookup_or_fail
from ingestion.services.questions import question_unresolve


class Command(BaseCommand):
    help = "Withdraw a question's resolution (adds an un-resolve version)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question", help="question id or external id")
        parser.add_argument("--note", default="")

    def handle(self, *args: Any, **options: Any) -> None:
        question = lookup_or_fail(options["question"])
        resolution = question_unresolve(question=question, note=options["note"], author_label="staff (command line)")
        self.stdout.write(describe(question, resolution, "not resolved; nothing changed"))
