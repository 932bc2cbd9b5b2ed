"""The README's run command: the whole Hindsight loop on the embedded database, then the site.

From an empty database: migrate, create a staff user, generate the fictional sample world and
publish it through the real ingestion path, import the real ForecastBench round, the real news
archive (Wikipedia's Current events portal) and the real replay questions written from it, serve the site on
127.0.0.1:8000 (a background thread of this process), let the baseline agents forecast over HTTP on
live and replay questions, advance the fictional clock so the live questions resolve, build the
hindsight graphs, grade, rank, and keep serving with a guided tour. A second run reuses the
database and only serves; ``--reset`` starts from an empty database.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from config import celery_app
from config.inprocess_beat import InProcessBeat
from config.inprocess_server import InProcessServer, ServeError
from ingestion.models import Question
from ingestion.services.questions import question_publish_outcome, questions_load
from leaderboard.baselines import BASELINE_TEAM, baselines_run
from sampleworld.management.commands.sample_world import (
    IndentedOutput,
    advance_to_end,
    grade_and_rank,
    measure_builders,
    print_measurement,
    quiet_logs,
    world_summary,
)
from sampleworld.publish import PublishReport, SampleWorldRun, WorldParams, sample_world_params

DATA_DIR = Path(settings.BASE_DIR) / "ingestion" / "data"
FORECASTBENCH = DATA_DIR / "forecastbench"
ARCHIVE = DATA_DIR / "archives" / "wcep" / "documents.jsonl.gz"
ARCHIVE_ATTRIBUTION = "Wikipedia contributors"
REAL_QUESTIONS = DATA_DIR / "real_replay" / "questions.json"
# Each real question's hindsight graph is built from months of the archive as it loads (seconds
# each), so the demo loads a slice of them, every type among them, and stays within two minutes.
REAL_QUESTIONS_IN_DEMO = 12
# The demo forecasts on every sample question but on a slice of the imported ForecastBench round,
# so the loop stays within two minutes (each of them now has the news archive to search and read, at
# a dozen requests a question, within the agents' rate limit); run_baselines can cover the rest
# afterwards. With the real replay questions, the replay track holds enough questions for the
# baselines to pass the leaderboard's minimum n.
IMPORTED_QUESTIONS_PER_BASELINE = 6


class Command(BaseCommand):
    help = (
        "Run Hindsight's whole loop on the configured database (sample world, ForecastBench round, real news "
        "archive and real replay questions, baseline agents over HTTP, resolutions, hindsight graphs, grades, "
        "standings) and serve the site."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--reset", action="store_true", help="start from an empty database")
        parser.add_argument("--no-serve", action="store_true", help="run the loop, then exit")
        parser.add_argument("--addrport", default="127.0.0.1:8000")
        parser.add_argument("--size", choices=("tiny", "small", "large"), default="small")
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument(
            "--until",
            choices=("present", "end"),
            default="present",
            help="present (default): stop the fictional clock with the live questions open for your own agent "
            "(`manage.py sample_world --advance` resolves and grades them); end: resolve them now",
        )

    def step(self, message: str) -> None:
        elapsed = time.monotonic() - self.started
        self.stdout.write(self.style.MIGRATE_HEADING(f"==> [{elapsed:5.1f}s] {message}"))

    def handle(self, *args: Any, **options: Any) -> None:
        self.started = time.monotonic()
        host, _, port = options["addrport"].rpartition(":")
        if not port.isdigit():
            raise CommandError(f"--addrport {options['addrport']!r}: expected HOST:PORT")
        if options["reset"]:
            self._reset()
        with quiet_logs(options["verbosity"]):
            self.step("Migrating the database")
            call_command("migrate", interactive=False, verbosity=0)
            credentials = self._ensure_staff()
            base_url = f"http://{host or '127.0.0.1'}:{port}"
            fresh = sample_world_params() is None
            server = None
            if fresh:
                # The address is taken before anything is published: a busy port must not leave a
                # half-built demo that the next run would take for a finished one.
                server = self._serve(host or "127.0.0.1", int(port))
                run = self._publish(options)
                self._import_forecastbench()
                self._import_real_replay()
                try:
                    self._forecast(base_url)
                    if options["until"] == "end":
                        self._resolve(run)
                    else:
                        self.step(
                            "The fictional clock stops at the world's present: its live questions stay open "
                            "for your agent (`python manage.py sample_world --advance` resolves and grades them)"
                        )
                finally:
                    run.disable_sources()
                    run.stop()
                self._grade_and_rank(publish_replays=options["until"] == "end")
                self.step("Measuring the hindsight builders against the hidden ground truth")
                print_measurement(self.stdout.write, measure_builders(run.world))
            else:
                self.step("The sample world is already in this database: reusing it (--reset to start over)")
            self.step(f"Loop finished in {time.monotonic() - self.started:.0f}s")
        self._tour(credentials, base_url)
        if options["no_serve"]:
            return
        if server is None:
            server = self._serve(host or "127.0.0.1", int(port))
        beat = self._start_periodic_tasks()
        self.stdout.write("Serving; press Ctrl-C to stop.")
        try:
            while server.is_alive():
                server.thread.join(timeout=1)
        except KeyboardInterrupt:
            self.stdout.write("Stopped.")
        finally:
            if beat is not None:
                beat.stop()

    def _start_periodic_tasks(self) -> InProcessBeat | None:
        """With no broker (the embedded default) the beat schedule runs in a thread of this process."""
        if not settings.CELERY_TASK_ALWAYS_EAGER:
            self.stdout.write("Periodic tasks: run `celery -A config beat` and workers (REDIS_URL is set).")
            return None
        beat = InProcessBeat(app=celery_app, entries=settings.CELERY_BEAT_SCHEDULE)
        beat.start()
        self.stdout.write("Periodic tasks (closing questions, polling sources, grading sweeps) run in-process.")
        return beat

    # -- steps
    def _publish(self, options: dict[str, Any]) -> SampleWorldRun:
        params = WorldParams(size=options["size"], seed=options["seed"], end=datetime.now(UTC))
        self.step(f"Generating the {params.size} sample world (seed {params.seed}; every name and event is fictional)")
        run = SampleWorldRun.start(params=params)
        report = PublishReport()
        self.step(
            f"Running ingestion: feeds and market APIs served on {run.server.base_url}, polled as the clock moves"
        )
        run.ensure_sources()
        run.advance(to=run.world.present, report=report)
        run.load_questions(now=run.world.present, report=report)
        self.stdout.write(
            f"    {report.polls} polls: {report.added} rows added, {report.skipped} skipped "
            f"(duplicates, unchanged markets, undated entries); {report.questions_created} questions created"
        )
        for line in world_summary(run.world):
            self.stdout.write(f"    {line}")
        if report.errors:
            raise CommandError(f"ingestion failed: {report.errors[0]}")
        self.run_report = report
        return run

    def _import_forecastbench(self) -> None:
        questions = FORECASTBENCH / "2026-05-10-llm.json"
        resolutions = FORECASTBENCH / "2026-05-10_resolution_set.json"
        if not questions.exists():
            self.stdout.write(f"    {questions} is missing; skipping the ForecastBench round")
            return
        self.step("Importing the real ForecastBench 2026-05-10 round (CC BY-SA 4.0)")
        call_command("import_forecastbench", str(questions), str(resolutions), stdout=IndentedOutput(self.stdout.write))

    def _import_real_replay(self) -> None:
        """The real news archive, then the real replay questions written from it. The archive comes
        after the ForecastBench round, so that the round's hundreds of resolutions are not each built
        into a hindsight graph now: the graphs of the questions the baselines answer are built later."""
        if not ARCHIVE.exists():
            self.stdout.write(f"    {ARCHIVE} is missing; skipping the real news archive")
            return
        self.step(
            "Importing the real news archive: Wikipedia Portal:Current events, Jan 2025 - Aug 2026 "
            f"(CC BY-SA 4.0, {ARCHIVE_ATTRIBUTION})"
        )
        call_command(
            "import_archive",
            str(ARCHIVE),
            "--attribution",
            ARCHIVE_ATTRIBUTION,
            stdout=IndentedOutput(self.stdout.write),
        )
        if not REAL_QUESTIONS.exists():
            self.stdout.write(f"    {REAL_QUESTIONS} is missing; no real replay questions")
            return
        entries = json.loads(REAL_QUESTIONS.read_text(encoding="utf-8"))
        chosen = demo_slice(entries, REAL_QUESTIONS_IN_DEMO)
        self.step(
            f"Loading {len(chosen)} of the {len(entries)} real replay questions written from the archive, every "
            "type among them (hindsight graphs are built as they load)"
        )
        try:
            report = questions_load(entries=chosen)
        except ValidationError as exc:
            self.stderr.write(f"    {REAL_QUESTIONS}: not loaded; {' '.join(exc.messages)}")
            return
        self.stdout.write(
            f"    {report.created} created, {report.updated} updated, {report.unchanged} unchanged; the others: "
            f"python manage.py load_questions {REAL_QUESTIONS.relative_to(settings.BASE_DIR)}"
        )

    def _serve(self, host: str, port: int) -> InProcessServer:
        self.step(f"Serving the site on http://{host}:{port}/ (MCP clients: http://{host}:{port}/mcp/)")
        try:
            return InProcessServer(host=host, port=port).start()
        except ServeError as exc:
            raise CommandError(f"cannot serve on {host}:{port}: {exc} (try --addrport 127.0.0.1:8001)") from exc

    def _forecast(self, base_url: str) -> None:
        self.step("Baseline agents forecasting over HTTP on live and replay questions")
        baselines_run(base_url=base_url, imported_limit=IMPORTED_QUESTIONS_PER_BASELINE, log=self.stdout.write)

    def _resolve(self, run: SampleWorldRun) -> None:
        self.step("Advancing the fictional clock: late news arrives, markets settle, live questions resolve")
        advance_to_end(run, report=self.run_report, log=lambda m: self.stdout.write(f"    {m}"))

    def _grade_and_rank(self, *, publish_replays: bool) -> None:
        self.step("Building hindsight graphs where missing, grading every resolved question, ranking")
        self._publish_answered_imports()
        # The sample replay questions' outcomes stay unpublished while the clock stops at the
        # present, so a new agent can still open replay sessions on them; `--advance` publishes them.
        grade_and_rank(log=self.stdout.write, publish_replays=publish_replays)

    def _publish_answered_imports(self) -> None:
        """Publish the outcomes of the ForecastBench and real replay questions the baselines answered,
        as staff would once a replay question has served: ForecastBench published its outcomes itself,
        the real ones are history, and the replay track and its Real replay view then hold scores to
        rank. One real question of each type stays on offer (its outcome unpublished) for a new agent;
        `sample_world --advance` publishes those too."""
        answered = Question.objects.filter(
            track=Question.Track.REPLAY,
            origin__in=[Question.Origin.IMPORTED, Question.Origin.ARCHIVE],
            status=Question.Status.RESOLVED,
            outcome_published_at=None,
            forecasts__agent__team__name=BASELINE_TEAM,
        ).distinct()
        kept: set[str] = set()
        published = {Question.Origin.IMPORTED: 0, Question.Origin.ARCHIVE: 0}
        for question in answered.order_by("pk"):
            if question.origin == Question.Origin.ARCHIVE and question.type not in kept:
                kept.add(question.type)
                continue
            question_publish_outcome(question=question)
            published[Question.Origin(question.origin)] += 1
        self.stdout.write(
            f"    published the outcomes of the replay questions the baselines answered: "
            f"{published[Question.Origin.IMPORTED]} ForecastBench, {published[Question.Origin.ARCHIVE]} real "
            f"({len(kept)} real ones, one of each type, stay on offer for your agent)"
        )

    # -- setup
    def _reset(self) -> None:
        db = connection.settings_dict
        if db["ENGINE"] != "django.db.backends.sqlite3":
            self.stderr.write("--reset only removes the embedded SQLite database; flushing instead.")
            call_command("flush", interactive=False, verbosity=0)
            return
        connection.close()
        path = Path(db["NAME"])
        for suffix in ("", "-wal", "-shm"):
            candidate = Path(f"{path}{suffix}")
            if candidate.exists():
                candidate.unlink()
        self.stdout.write(f"Removed {path}")

    def _ensure_staff(self) -> tuple[str, str | None]:
        user_model = get_user_model()
        username = os.environ.get("HINDSIGHT_ADMIN_USER", "admin")
        if user_model.objects.filter(username=username).exists():
            return username, None
        password = os.environ.get("HINDSIGHT_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        user_model.objects.create_superuser(username=username, email="", password=password)
        self.step(f"Created the staff user {username!r}")
        return username, password

    def _tour(self, credentials: tuple[str, str | None], base: str) -> None:
        username, password = credentials
        login = (
            f"user {username!r}, password {password!r} (printed once; set HINDSIGHT_ADMIN_PASSWORD to choose)"
            if password
            else f"user {username!r} (password as printed on the first run; HINDSIGHT_ADMIN_PASSWORD sets it on a fresh database)"
        )
        self.stdout.write(
            "\n".join(
                [
                    "",
                    self.style.SUCCESS("Hindsight is ready. A short tour:"),
                    f"  1. Home and open questions:  {base}/",
                    f"  2. Leaderboard:              {base}/leaderboard/  (agents ranked on outcome, SrcP, KER; baselines shown for reference)",
                    f"  3. A resolved question:      {base}/questions/  -> pick one marked (fictional); its page links",
                    "                                 to the hindsight graph with the causal pressure chart.",
                    f"     Real replay: {base}/leaderboard/?track=replay&origin=archive  (real questions on the",
                    "                                 Wikipedia Current events archive, CC BY-SA 4.0; ForecastBench",
                    "                                 questions search the same archive as of their dates)",
                    f"  4. Staff pages:              {base}/admin/  log in as {login}",
                    f"                                 sources status, review queue: {base}/hindsight/review/",
                    f"  5. API docs:                 {base}/api/docs/   MCP clients: {base}/mcp/ (agent token)",
                    "  6. Your own agent, graded in minutes on the sample world's open questions:",
                    "       python manage.py create_agent --team 'My team' --agent first-agent --cutoff 2024-06-01",
                    f"       python examples/reference_agent.py --base-url {base} --token <printed token>",
                    "       python manage.py sample_world --advance   # the clock runs on: questions resolve, grades follow",
                    f"     then open {base}/agents/first-agent/ (add --mode llm with OPENAI_BASE_URL/OPENAI_API_KEY",
                    "     to the agent for any OpenAI-compatible server)",
                    "",
                ]
            )
        )


def demo_slice(entries: list[Any], size: int) -> list[Any]:
    """``size`` entries taken in turn from each question type (in file order), so that a short demo
    shows every type the set has."""
    by_type: dict[str, list[Any]] = {}
    for entry in entries:
        by_type.setdefault(str(entry.get("type")) if isinstance(entry, dict) else "", []).append(entry)
    chosen: list[Any] = []
    while len(chosen) < min(size, len(entries)):
        for group in by_type.values():
            if group and len(chosen) < size:
                chosen.append(group.pop(0))
    return chosen
