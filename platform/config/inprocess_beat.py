"""Celery beat for the embedded default: with no broker, periodic tasks run in a thread of the server.

Production runs a real ``celery beat``; this only exists so that a site started with no Redis still
closes questions, polls sources and sweeps grading on the same schedule.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta
from typing import Any

from celery import Celery
from celery.schedules import schedule as interval_schedule
from django.db import close_old_connections
from django.utils import timezone

logger = logging.getLogger(__name__)


class InProcessBeat(threading.Thread):
    def __init__(self, *, app: Celery, entries: dict[str, dict[str, Any]], tick_seconds: float = 1.0) -> None:
        super().__init__(name="in-process-beat", daemon=True)
        self.app = app
        app.loader.import_default_modules()  # runs the (lazy) task autodiscovery
        self.tick_seconds = tick_seconds
        self.stopped = threading.Event()
        self.schedules = {
            name: (
                entry["task"],
                interval_schedule(run_every=entry["schedule"])
                if isinstance(entry["schedule"], timedelta)
                else entry["schedule"],
            )
            for name, entry in entries.items()
        }
        started = timezone.now()
        self.last_run: dict[str, datetime] = dict.fromkeys(self.schedules, started)

    def run_due(self) -> list[str]:
        """Run every entry that is due now; returns the names that ran."""
        ran = []
        for name, (task_name, schedule) in self.schedules.items():
            if not schedule.is_due(self.last_run[name]).is_due:
                continue
            self.last_run[name] = timezone.now()
            task = self.app.tasks.get(task_name)
            if task is None:
                logger.warning("periodic task %s: no task named %s", name, task_name)
                continue
            close_old_connections()
            try:
                task.apply(throw=True)
                ran.append(name)
            except Exception:
                # One failing periodic task must not stop the others or the thread.
                logger.exception("periodic task %s failed", name)
            finally:
                close_old_connections()
        return ran

    def run(self) -> None:
        while not self.stopped.wait(self.tick_seconds):
            self.run_due()

    def stop(self) -> None:
        self.stopped.set()
