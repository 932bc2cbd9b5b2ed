"""What the hindsight benchmarks share: Django on a scratch database, questions loaded without the
builds their resolutions would start, and the survey's text report.

Import it from a bench script before anything of the project: it puts the repository and ``platform/``
on the path.
"""

from __future__ import annotations

import atexit
import io
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "platform")]

BUILD_RECEIVERS = ("grading.build_hindsight_on_resolution", "grading.build_hindsight_on_resolutions")


def django_setup(*, scratch: bool) -> str:
    """Set Django up and migrate. ``scratch``: when ``DATABASE_URL`` is unset, use a new SQLite file in
    a temporary folder (removed at exit) instead of the embedded database. Returns a description of the
    database used."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    if scratch and not os.environ.get("DATABASE_URL"):
        folder = tempfile.mkdtemp(prefix="hindsight-bench-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0, interactive=False)
    name = connection.settings_dict["NAME"]
    return f"{connection.vendor} {name}"


@contextmanager
def builds_held() -> Iterator[None]:
    """Resolving questions inside the block starts no hindsight build (the benchmark builds each one
    itself, timed); the receivers are connected again afterwards."""
    from grading import receivers
    from ingestion.signals import resolution_changed, resolutions_changed

    resolution_changed.disconnect(dispatch_uid=BUILD_RECEIVERS[0])
    resolutions_changed.disconnect(dispatch_uid=BUILD_RECEIVERS[1])
    try:
        yield
    finally:
        resolution_changed.connect(receivers.build_hindsight_on_resolution, dispatch_uid=BUILD_RECEIVERS[0])
        resolutions_changed.connect(receivers.build_hindsight_on_resolutions, dispatch_uid=BUILD_RECEIVERS[1])


def load_questions(entries: Sequence[dict[str, Any]]) -> list[int]:
    """Load resolved questions (``load_questions`` format) without building their graphs; their ids,
    in the order given."""
    from ingestion.models import Question
    from ingestion.services.questions import questions_load

    with builds_held():
        questions_load(entries=list(entries))
    ids = dict(
        Question.objects.filter(external_id__in=[e["external_id"] for e in entries]).values_list("external_id", "id")
    )
    return [ids[e["external_id"]] for e in entries if e["external_id"] in ids]


def survey_text(report: Any) -> list[str]:
    """The survey's text report, as ``build_hindsight --all-resolved`` prints it."""
    from grading.management.commands.build_hindsight import Command

    out = io.StringIO()
    Command(stdout=out)._write_survey(report)
    return out.getvalue().splitlines()
