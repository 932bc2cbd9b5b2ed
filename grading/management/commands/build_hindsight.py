"""python manage.py build_hindsight ID [--builder offline|llm]"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from grading.selectors import latest_attempt
from grading.services import BUILDERS, hindsight_build
from ingestion.models import Question
from ingestion.services.questions import question_lookup


class Command(BaseCommand):
    help = "Build a new hindsight graph version for a resolved question (id or external id)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question", help="Question id or external id.")
        parser.add_argument(
            "--builder",
            choices=BUILDERS,
            default=None,
            help="Default: llm when HINDSIGHT_LLM_MODEL is set, else offline.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
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
