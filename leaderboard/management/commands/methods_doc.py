"""Write docs/methods.md from the methods template (the source of the /methods/ page too)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from leaderboard.methods import DOC_PATH, methods_markdown, overridden_settings


class Command(BaseCommand):
    help = (
        "Render templates/leaderboard/methods.md with the constants the code applies and write it to "
        "docs/methods.md; with --check, only report whether the file is up to date."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--check", action="store_true", help="Exit non-zero when the file is out of date.")
        parser.add_argument("--output", type=Path, default=DOC_PATH, help=f"Where to write (default {DOC_PATH}).")

    def handle(self, *args: Any, **options: Any) -> None:
        overridden = overridden_settings()
        if overridden:
            raise CommandError(
                "docs/methods.md documents the settings that ship, but the environment sets "
                f"{', '.join(overridden)}: unset {'it' if len(overridden) == 1 else 'them'} and run again."
            )
        path: Path = options["output"]
        text = methods_markdown()
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if options["check"]:
            if current != text:
                raise CommandError(f"{path} is out of date: run python manage.py methods_doc")
            self.stdout.write(f"{path} is up to date.")
            return
        if current == text:
            self.stdout.write(f"{path} is up to date; nothing written.")
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"could not write {path}: {exc.strerror or exc}") from exc
        self.stdout.write(f"Wrote {path} ({len(text.splitlines())} lines).")
