from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from common.progress import progress_to
from ingestion.services.imports import forecastbench_import


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise CommandError(f"{path}: no such file") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CommandError(f"{path}: not valid JSON ({exc})") from exc


class Command(BaseCommand):
    help = (
        "Import a ForecastBench round: its question set and optionally its resolution set. Resolved "
        "questions go to the replay track, the others stay live; rounds add up in any order (nothing "
        "resolved goes back to live), and importing a round again changes nothing. Metaculus and "
        "combination questions are skipped and counted."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question_set", type=Path, help="e.g. ingestion/data/forecastbench/2026-05-10-llm.json")
        parser.add_argument("resolution_set", type=Path, nargs="?", help="the matching *_resolution_set.json")

    def handle(self, *args: Any, **options: Any) -> None:
        question_path: Path = options["question_set"]
        resolution_path: Path | None = options["resolution_set"]
        question_set = _read_json(question_path)
        resolution_set = _read_json(resolution_path) if resolution_path else None
        verbose = int(options.get("verbosity", 1)) >= 1

        def progress(text: str) -> None:
            if verbose:
                self.stdout.write(f"  {text}")

        try:
            # The follow-up work of the new resolutions (hindsight builds, regrades) reports here
            # when it runs in this process (no broker); with one, the workers log it.
            with progress_to(progress):
                report = forecastbench_import(
                    question_set=question_set,
                    resolution_set=resolution_set,
                    question_set_name=question_path.name,
                    resolution_set_name=resolution_path.name if resolution_path else "",
                    progress=progress,
                )
        except ValidationError as exc:
            raise CommandError(f"nothing imported; {' '.join(exc.messages)}") from exc
        self.stdout.write(f"{question_path}: {report.summary()}")
