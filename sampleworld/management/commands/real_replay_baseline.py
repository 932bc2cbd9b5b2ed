"""manage.py real_replay_baseline [--write]: the published baseline on the real replay track.

One command, meant for an empty database (e.g. ``DATABASE_URL=sqlite:////tmp/baseline.sqlite3``):
migrate, import the shipped news archive and the real replay questions, serve the site on a free
loopback port, let the baseline agents (the reference agent among them) forecast the real replay
questions over HTTP, build the missing hindsight graphs, grade, and print the table of outcome,
evidence and reasoning scores with the builder's pass rate. ``--write`` puts the table into the
methods text (templates/leaderboard/methods.md, so the /methods/ page) and rewrites docs/methods.md.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.inprocess_server import InProcessServer, ServeError
from grading.models import HindsightGraph
from grading.services import hindsight_build
from ingestion.models import Question
from leaderboard.baselines import baselines_run
from leaderboard.selectors.real_replay import real_replay_baseline_table
from leaderboard.services.grade_runs import grade_questions
from sampleworld.management.commands.demo import ARCHIVE, ARCHIVE_ATTRIBUTION, REAL_QUESTIONS
from sampleworld.management.commands.sample_world import IndentedOutput

METHODS_TEMPLATE = Path(settings.BASE_DIR) / "templates" / "leaderboard" / "methods.md"
SECTION = re.compile(r"(\{# real-replay-baseline:start #\}\n?)(.*?)(\n?\{# real-replay-baseline:end #\})", re.S)


class Command(BaseCommand):
    help = (
        "Import the news archive and the real replay questions, let the baseline agents forecast them over "
        "HTTP, build hindsight graphs, grade, and print the baselines' outcome, evidence and reasoning scores "
        "with the builder's pass rate (--write: into the methods text and docs/methods.md). Use an empty database."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--archive", type=Path, default=ARCHIVE)
        parser.add_argument("--questions", type=Path, default=REAL_QUESTIONS)
        parser.add_argument("--write", action="store_true", help="write the table into the methods text")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        out = IndentedOutput(self.stdout.write)
        if not options["questions"].is_file():
            raise CommandError(f"{options['questions']}: no such file (the real replay questions)")
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write("Importing the archive and the real replay questions")
        call_command("import_archive", str(options["archive"]), "--attribution", ARCHIVE_ATTRIBUTION, stdout=out)
        call_command("load_questions", str(options["questions"]), stdout=out)
        try:
            server = InProcessServer(host="127.0.0.1", port=0).start()
        except ServeError as exc:
            raise CommandError(f"cannot serve on a loopback port: {exc}") from exc
        try:
            base_url = f"http://127.0.0.1:{server.port}"
            self.stdout.write(f"Baseline agents forecasting the real replay questions through {base_url}/api/v1/")
            baselines_run(base_url=base_url, origins=(Question.Origin.ARCHIVE,), log=out.write)
        finally:
            server.stop()
        ids = list(
            Question.objects.filter(origin=Question.Origin.ARCHIVE, status=Question.Status.RESOLVED).values_list(
                "pk", flat=True
            )
        )
        with_graph = set(
            HindsightGraph.objects.filter(question_id__in=ids, is_current=True).values_list("question_id", flat=True)
        )
        self.stdout.write(f"Building the {len(set(ids) - with_graph)} missing hindsight graphs; grading")
        for qid in ids:
            if qid not in with_graph:
                hindsight_build(question_id=qid)
        grade_questions(question_ids=ids)
        table = real_replay_baseline_table().markdown()
        self.stdout.write("")
        self.stdout.write(table)
        if options["write"]:
            self._write(table)
        self.stdout.write(f"Done in {time.monotonic() - started:.0f}s.")

    def _write(self, table: str) -> None:
        text = METHODS_TEMPLATE.read_text(encoding="utf-8")
        if not SECTION.search(text):
            raise CommandError(f"{METHODS_TEMPLATE} has no real-replay-baseline section to rewrite")
        METHODS_TEMPLATE.write_text(
            SECTION.sub(lambda m: m.group(1) + table + m.group(3), text, count=1), encoding="utf-8"
        )
        call_command("methods_doc", stdout=self.stdout)
        self.stdout.write(f"Wrote the table into {METHODS_TEMPLATE}.")
