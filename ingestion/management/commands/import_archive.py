"""manage.py import_archive PATH: a news archive (JSON Lines) into the evidence store."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from ingestion.archives import archive_lines
from ingestion.question_data import parse_aware_datetime
from ingestion.services.archives import archive_import

# Rejected lines printed one by one; the rest are counted in the summary.
SHOWN_REJECTIONS = 100


class Command(BaseCommand):
    help = (
        "Import a news archive of dated documents (JSON Lines: id, published_at, title, text, url, source, "
        "license; other fields kept; a .gz file is read as it is decompressed) as evidence articles, searchable "
        "through the gateway as of each item's published_at. Bad lines are rejected by number and the others "
        "imported; a file cut short has every line before the cut imported, and the command says where it "
        "stopped; importing the same file again changes nothing, and a changed item is updated in place."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="e.g. ingestion/data/archives/wcep/documents.jsonl.gz")
        parser.add_argument("--license", default="", help="licence of the lines that give none (e.g. CC-BY-4.0)")
        parser.add_argument(
            "--allow-unlicensed", action="store_true", help="import lines with no licence (else they are rejected)"
        )
        parser.add_argument(
            "--attribution", default="", help='credit shown with every item, e.g. "Wikipedia contributors"'
        )
        parser.add_argument("--now", help="ISO 8601 time of the import: later-dated lines are rejected (default: now)")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        now: datetime = timezone.now()
        if options["now"]:
            try:
                now = parse_aware_datetime(options["now"], field_name="--now")
            except Exception as exc:
                raise CommandError(f"--now {options['now']!r}: not an ISO 8601 time with a time zone") from exc
        verbose = int(options.get("verbosity", 1)) >= 1
        shown = 0
        started = time.monotonic()

        def progress(text: str) -> None:
            if verbose:
                self.stdout.write(f"  {text} ({time.monotonic() - started:.0f}s)")

        def on_reject(number: int, reason: str, detail: str) -> None:
            nonlocal shown
            shown += 1
            if shown <= SHOWN_REJECTIONS:
                self.stderr.write(f"  {path}:{number}: rejected: {detail}")

        self.stdout.write(f"Importing {path} (lines dated after {now:%Y-%m-%dT%H:%M:%SZ} are rejected)")
        report = archive_import(
            lines=_lines(path),
            now=now,
            default_license=options["license"],
            allow_unlicensed=options["allow_unlicensed"],
            attribution=options["attribution"],
            location=str(path.resolve()),
            progress=progress,
            on_reject=on_reject,
        )
        if shown > SHOWN_REJECTIONS:
            self.stderr.write(f"  ... and {shown - SHOWN_REJECTIONS:,} more rejected lines (counted below)")
        for name, items in report.sources.items():
            self.stdout.write(f"  archive source {name!r}: {items:,} items")
        self.stdout.write(f"{path}: {report.summary()} in {time.monotonic() - started:.1f}s")
        if report.stopped:
            # Everything read is stored; the exit status tells a script that the file was not whole.
            raise CommandError(
                f"{path}: {report.stopped}. The lines before were imported; import the whole file again "
                "to add the rest (what is stored already is left alone)."
            )


def _lines(path: Path) -> Iterator[bytes]:
    try:
        yield from archive_lines(path)
    except OSError as exc:  # opening it (reading it on is the import's: it reports where it stopped)
        raise CommandError(f"{path}: cannot be read ({exc})") from exc
