from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingestion.services.events import (
    DEFAULT_HORIZON_DAYS,
    DEFAULT_MIN_ARTICLES,
    DEFAULT_MIN_MENTIONS,
    events_import_file,
)


class Command(BaseCommand):
    help = (
        "Import MIRAI-style structured events from a CSV (date, subject, object, relation, articles[, mentions]) "
        "and generate replay relation questions per (date, subject, object). Safe to run twice."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--min-mentions",
            type=int,
            default=DEFAULT_MIN_MENTIONS,
            help=f"an event counts toward a question with at least this many daily mentions (MIRAI: {DEFAULT_MIN_MENTIONS}); "
            "events without a mention count are not filtered on it",
        )
        parser.add_argument(
            "--min-articles",
            type=int,
            default=DEFAULT_MIN_ARTICLES,
            help=f"...and at least this many linked news articles (MIRAI: {DEFAULT_MIN_ARTICLES})",
        )
        parser.add_argument(
            "--min-events", type=int, default=1, help="a (date, subject, object) needs this many qualifying events"
        )
        parser.add_argument(
            "--horizon-days",
            type=int,
            action="append",
            help=f"temporal distance l in days; repeat for several (MIRAI: {DEFAULT_HORIZON_DAYS}; ablation 1, 7, 30, 90)",
        )
        parser.add_argument("--no-questions", action="store_true", help="only store the events")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        try:
            text = path.read_text(encoding="utf-8-sig")
        except FileNotFoundError as exc:
            raise CommandError(f"{path}: no such file") from exc
        except UnicodeDecodeError as exc:
            raise CommandError(f"{path}: not a UTF-8 text file ({exc})") from exc
        horizons = tuple(dict.fromkeys(options["horizon_days"] or [DEFAULT_HORIZON_DAYS]))
        try:
            report = events_import_file(
                text=text,
                source_label=path.name,
                generate_questions=not options["no_questions"],
                min_mentions=options["min_mentions"],
                min_articles=options["min_articles"],
                min_events=options["min_events"],
                horizons=horizons,
            )
        except ValidationError as exc:
            raise CommandError(f"{path}: nothing imported; {' '.join(exc.messages)}") from exc
        self.stdout.write(f"{path}: {report.events.summary()}")
        for horizon, questions in report.questions:
            self.stdout.write(f"horizon {horizon} day(s): {questions.summary()}")
