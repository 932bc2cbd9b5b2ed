from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingestion.services.questions import questions_load


class Command(BaseCommand):
    help = "Load questions from a JSON list (see README: 'Question files'). Safe to run twice."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise CommandError(f"{path}: no such file") from exc
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: not valid JSON ({exc})") from exc
        try:
            report = questions_load(entries=entries)
        except ValidationError as exc:
            raise CommandError(f"{path}: nothing loaded; {' '.join(exc.messages)}") from exc
        self.stdout.write(f"{path}: {report.created} created, {report.updated} updated, {report.unchanged} unchanged")
