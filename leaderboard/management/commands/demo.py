"""The README's run command: prepare the embedded database with sample data and serve the site."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection

DATA_DIR = Path(settings.BASE_DIR) / "ingestion" / "data"


class Command(BaseCommand):
    help = "Set up the sample world in the configured database and serve Hindsight on 127.0.0.1:8000."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--reset", action="store_true", help="start from an empty database")
        parser.add_argument("--no-serve", action="store_true", help="prepare the data, then exit")
        parser.add_argument("--addrport", default="127.0.0.1:8000")

    def step(self, message: str) -> None:
        self.stdout.write(self.style.MIGRATE_HEADING(f"==> {message}"))

    def handle(self, *args: Any, **options: Any) -> None:
        if options["reset"]:
            self._reset()
        self.step("Migrating the database")
        call_command("migrate", interactive=False, verbosity=0)
        credentials = self._ensure_staff()
        self.step("Loading sample questions")
        call_command("load_questions", str(DATA_DIR / "sample_questions.json"), stdout=self.stdout)
        forecastbench = DATA_DIR / "forecastbench"
        if (forecastbench / "2026-05-10-llm.json").exists():
            self.step("Importing the ForecastBench 2026-05-10 round (real questions, outcome grades only)")
            call_command(
                "import_forecastbench",
                str(forecastbench / "2026-05-10-llm.json"),
                str(forecastbench / "2026-05-10_resolution_set.json"),
                stdout=self.stdout,
            )
        self._tour(credentials, options["addrport"])
        if not options["no_serve"]:
            call_command("runserver", options["addrport"], use_reloader=False)

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
        self.step(f"Removed {path}")

    def _ensure_staff(self) -> tuple[str, str | None]:
        user_model = get_user_model()
        username = os.environ.get("HINDSIGHT_ADMIN_USER", "admin")
        if user_model.objects.filter(username=username).exists():
            return username, None
        password = os.environ.get("HINDSIGHT_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        user_model.objects.create_superuser(username=username, email="", password=password)
        return username, password

    def _tour(self, credentials: tuple[str, str | None], addrport: str) -> None:
        username, password = credentials
        base = f"http://{addrport}"
        login = (
            f"user {username!r}, password {password!r} (printed once; set HINDSIGHT_ADMIN_PASSWORD to choose)"
            if password
            else f"user {username!r} (password as printed on the first run)"
        )
        self.stdout.write(
            "\n".join(
                [
                    "",
                    self.style.SUCCESS("Hindsight is ready."),
                    f"  Site:        {base}/",
                    f"  Staff login: {base}/admin/  {login}",
                    f"  API docs:    {base}/api/docs/",
                    "  Your agent:  python manage.py create_agent --team TEAM --agent NAME  (prints a token)",
                    "",
                ]
            )
        )
