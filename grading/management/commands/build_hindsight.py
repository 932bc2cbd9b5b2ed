"""python manage.py build_hindsight ID [--builder offline|llm]
python manage.py build_hindsight --all-resolved [--track replay] [--external-id-prefix P] [--builder offline]"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from grading.batch_builds import SurveyReport, hindsight_build_survey
from grading.selectors import latest_attempt
from grading.services import BUILDERS, hindsight_build
from ingestion.models import Question
from ingestion.services.questions import question_lookup


class Command(BaseCommand):
    help = (
        "Build a new hindsight graph version for a resolved question (id or external id), or, with "
        "--all-resolved, for every resolved question, and report how many pass the quality thresholds and why "
        "the others fail."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question", nargs="?", help="Question id or external id.")
        parser.add_argument(
            "--builder",
            choices=BUILDERS,
            default=None,
            help="Default: llm when HINDSIGHT_LLM_MODEL is set, else offline.",
        )
        parser.add_argument(
            "--all-resolved",
            action="store_true",
            help="Build every resolved question's graph (or those chosen by --track and --external-id-prefix) "
            "and report the pass rate with each failure's reasons.",
        )
        parser.add_argument("--track", choices=Question.Track.values, help="With --all-resolved: only this track.")
        parser.add_argument(
            "--external-id-prefix", default="", help="With --all-resolved: only questions whose external id starts so."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["all_resolved"]:
            if options["question"]:
                raise CommandError("Give a question or --all-resolved, not both.")
            self._survey(options)
            return
        if not options["question"]:
            raise CommandError("Give a question id or external id, or --all-resolved.")
        try:
            question = question_lookup(options["question"])
        except Question.DoesNotExist as exc:
            raise CommandError(str(exc)) from exc
        try:
            graph = hindsight_build(question_id=question.pk, builder=options["builder"])
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        if graph is None:
            attempt = latest_attempt(question.pk)
            reason = f"{attempt.reason}: {attempt.error}" if attempt else "unknown reason"
            raise CommandError(f"No hindsight graph built for question {question.pk}: {reason}")
        quality = graph.quality
        status = (
            "passed the quality thresholds"
            if graph.graph_built
            else "FAILED the quality thresholds (graph_built=False)"
        )
        self.stdout.write(
            f"Built hindsight graph v{graph.version} for question {question.pk} ({graph.get_builder_display()}): "
            f"{graph.events.count()} events, {graph.links.count()} links, {quality.get('sources', 0)} sources, "
            f"depth {quality.get('depth', 0)}; {status}."
        )
        if graph.fallback_reason:
            self.stdout.write(f"  The offline builder stood in for the LLM build: {graph.fallback_reason}")
        for failure in quality.get("failures", []):
            self.stdout.write(f"  - {failure}")

    def _survey(self, options: dict[str, Any]) -> None:
        questions = Question.objects.filter(status=Question.Status.RESOLVED)
        if options["track"]:
            questions = questions.filter(track=options["track"])
        if options["external_id_prefix"]:
            questions = questions.filter(external_id__startswith=options["external_id_prefix"])
        ids = list(questions.order_by("id").values_list("id", flat=True))
        if not ids:
            raise CommandError("No resolved question matches; nothing built.")
        try:
            report = hindsight_build_survey(question_ids=ids, builder=options["builder"])
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self._write_survey(report)

    def _write_survey(self, report: SurveyReport) -> None:
        for row in report.rows:
            name = row.external_id or str(row.question_id)
            if row.passed or row.events:
                shape = (
                    f"{row.events} events, {row.sources} sources (needs {row.min_sources}), depth {row.depth}, "
                    f"{row.links} links"
                )
                if row.relevant is not None:
                    shape += f", from {row.relevant} relevant articles"
            else:
                shape = "no graph"
            self.stdout.write(f"{'PASS' if row.passed else 'FAIL'} {name}: {shape}; {row.seconds:.2f} s")
            for reason in row.reasons:
                self.stdout.write(f"  - {reason}")
        self.stdout.write(report.summary())
