"""python manage.py regrade [ID ...] [--force]: (re)grade questions now, in this process, and refresh
the standings of the questions whose grades changed."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Exists, OuterRef, Q

from ingestion.models import Question
from ingestion.services.questions import question_lookup
from leaderboard.models import Grade
from leaderboard.services.grade_runs import grade_questions
from leaderboard.services.standings import standings_update_for_questions


class Command(BaseCommand):
    help = (
        "Grade or regrade one question (id or external id) or, without an id, every resolved or "
        "annulled question and every question that still has grades. Up-to-date grades are left alone "
        "unless --force is given, so running it twice writes nothing the second time."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("questions", nargs="*", help="Question ids or external ids; none means all.")
        parser.add_argument("--force", action="store_true", help="Write a new grade version even when up to date.")

    def handle(self, *args: Any, **options: Any) -> None:
        identifiers: list[str] = options["questions"]
        if identifiers:
            ids = []
            for identifier in identifiers:
                try:
                    ids.append(question_lookup(identifier).pk)
                except Question.DoesNotExist as exc:
                    raise CommandError(str(exc)) from exc
        else:
            # One query with OR rather than a UNION: SQLite refuses the models' default ORDER BY
            # inside a compound statement.
            has_current = Exists(Grade.objects.filter(forecast__question=OuterRef("pk"), is_current=True))
            ids = list(
                Question.objects.filter(
                    Q(status__in=[Question.Status.RESOLVED, Question.Status.ANNULLED]) | Q(has_current)
                )
                .order_by("pk")
                .values_list("pk", flat=True)
            )
        totals = {"questions": 0, "graded": 0, "unchanged": 0, "withdrawn": 0, "void": 0, "busy": 0}
        size = max(1, settings.HINDSIGHT_GRADING_QUESTIONS_PER_RUN)
        reports = (
            report
            for start in range(0, len(ids), size)
            for report in grade_questions(question_ids=ids[start : start + size], force=options["force"])
        )
        changed: list[int] = []
        for report in reports:
            question_id = report.question_id
            if report.graded or report.withdrawn or report.counts_updated:
                changed.append(question_id)
            totals["questions"] += 1
            totals["graded"] += report.graded
            totals["unchanged"] += report.unchanged
            totals["withdrawn"] += report.withdrawn
            totals["void"] += report.graded if report.void else 0
            totals["busy"] += report.status == "busy"
            self.stdout.write(
                f"question {question_id}: {report.status}; {report.graded} graded, {report.unchanged} unchanged, "
                f"{report.withdrawn} withdrawn (reference: {report.reference}"
                + (f", judge: {report.judge}" if report.judge else "")
                + ")"
            )
        if changed:
            # The standings are materialised: refresh the views holding the questions whose grades changed.
            refreshed = standings_update_for_questions(question_ids=changed)
            self.stdout.write(f"Standings refreshed: {refreshed.views} view(s) of {len(changed)} question(s).")
        self.stdout.write(
            self.style.SUCCESS(
                f"Regraded {totals['questions']} question(s): {totals['graded']} grades written "
                f"({totals['void']} void), {totals['unchanged']} unchanged, {totals['withdrawn']} withdrawn"
                + (f", {totals['busy']} busy in another worker (retry later)" if totals["busy"] else "")
                + "."
            )
        )
