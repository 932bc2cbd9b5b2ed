"""manage.py sample_world: generate the fictional sample world and publish it through the real
ingestion path, then measure the hindsight builders against its hidden ground truth."""

from __future__ import annotations

import logging
import statistics
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Count

from grading.builders import llm
from grading.builders.common import BuildContext, BuildError, thresholds_from_settings
from grading.models import HindsightGraph
from grading.scoring.matching import Event
from grading.scoring.reasoning import score_reasoning
from grading.services import builder_run, hindsight_build
from ingestion.models import Article, Market, Question, StructuredEvent
from ingestion.selectors.archives import question_archives
from ingestion.services.questions import default_window_end, question_publish_outcome
from leaderboard.models import Grade
from leaderboard.selectors.grade_keys import matcher_settings
from leaderboard.services.grade_runs import grade_question
from sampleworld.publish import (
    WORLD_OPTION,
    PublishReport,
    SampleWorldRun,
    WorldParams,
    sample_world_delete,
    sample_world_params,
    storyline_question,
)
from sampleworld.world import SIZES, Storyline, World


def hidden_reference(story: Storyline) -> list[Event]:
    """The storyline's hidden events in the matcher's terms (impact = not Neutral)."""
    return [
        Event(
            id=e.key,
            title=e.title,
            description=e.description,
            date=e.day,
            magnitude=e.magnitude,
            confidence=e.confidence,
            has_impact=e.direction != "Neutral",
        )
        for e in story.events
        if not e.is_outcome
    ]


def measure_builders(world: World, *, builders: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Key-event recall of each hindsight builder against the hidden graphs, on every resolved
    question of the world. Builds in memory only: no graph is stored and nothing is regraded."""
    if builders is None:
        builders = ["offline", *(["llm"] if llm.is_configured() else [])]
    matcher = matcher_settings()
    thresholds = thresholds_from_settings()
    results: dict[str, dict[str, Any]] = {}
    for builder in builders:
        recalls: list[float] = []
        by_type: dict[str, list[float]] = {}
        built = failed = 0
        for story in world.storylines:
            question = storyline_question(world=world, story=story)
            resolution = question.current_resolution if question is not None else None
            if question is None or resolution is None or question.status != Question.Status.RESOLVED:
                continue
            ctx = BuildContext.for_question(question, resolution)
            try:
                result = builder_run(ctx, builder=builder, thresholds=thresholds)
            except BuildError:
                failed += 1
                recalls.append(0.0)
                by_type.setdefault(question.type, []).append(0.0)
                continue
            built += result.quality.passed
            found = [
                Event(id=e.key, title=e.title, description=e.description, date=e.occurred_on)
                for e in result.draft.events
                if not e.is_outcome
            ]
            score = score_reasoning(hidden_reference(story), found, matcher)
            ker = score.ker or 0.0
            recalls.append(ker)
            by_type.setdefault(question.type, []).append(ker)
        results[builder] = {
            "questions": len(recalls),
            "key_event_recall": round(statistics.fmean(recalls), 3) if recalls else None,
            "by_type": {t: round(statistics.fmean(v), 3) for t, v in sorted(by_type.items())},
            "graphs_passing_quality": built,
            "build_failures": failed,
        }
    return results


def world_summary(world: World) -> list[str]:
    """What the database holds of the world, one line each."""
    story_keys = {s.key for s in world.storylines}
    questions = Question.objects.filter(external_id__startswith=f"sample:{world.seed}:") | Question.objects.filter(
        market__source__options__has_key=WORLD_OPTION
    )
    by_status = Counter(questions.values_list("track", "type", "status"))
    lines = [
        f"storylines: {len(story_keys)} (hidden causal graphs with {sum(len(s.events) for s in world.storylines)} events)",
        f"articles in the archive: {Article.objects.filter(source__options__has_key='sample_world').count()} "
        f"(the world wrote {len(world.articles)} feed entries, duplicates and undated ones included)",
        f"markets: {Market.objects.filter(source__options__has_key='sample_world').count()}, "
        f"structured events: {StructuredEvent.objects.count()}",
        "questions: "
        + ", ".join(f"{n} {track}/{qtype}/{status}" for (track, qtype, status), n in sorted(by_status.items())),
    ]
    counts = questions.aggregate(n=Count("id"))
    lines.append(f"questions in total: {counts['n']}")
    return lines


class Command(BaseCommand):
    help = (
        "Generate Hindsight's fictional sample world and publish it through the real ingestion path "
        "(feeds and market APIs on a local server, add_source + polls, import_events, question "
        "services); then print the hindsight builders' key-event recall against the hidden graphs. "
        "Safe to run twice: a published world is resumed, not duplicated (--reset starts again)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--size", choices=sorted(SIZES), default="small")
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--reset", action="store_true", help="delete the published sample world first")
        parser.add_argument(
            "--until",
            choices=("present", "end"),
            default="end",
            help="present: stop with live questions open; end: advance the clock so they resolve (default)",
        )
        parser.add_argument("--no-measure", action="store_true", help="skip the builder measurement")
        parser.add_argument(
            "--advance",
            action="store_true",
            help="advance the published world's clock to its end so its live questions resolve, then build "
            "hindsight graphs, grade every forecast on them (yours included) and rebuild the standings",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["advance"]:
            with quiet_logs(options["verbosity"]):
                self.advance(measure=not options["no_measure"])
            return
        if options["reset"]:
            deleted = sample_world_delete()
            self.stdout.write(f"Deleted the published sample world: {deleted}")
        params = sample_world_params()
        if params is None:
            params = WorldParams(size=options["size"], seed=options["seed"], end=datetime.now(UTC))
            self.stdout.write(f"Generating a {params.size} sample world with seed {params.seed} (fictional).")
        else:
            self.stdout.write(
                f"Resuming the {params.size} sample world with seed {params.seed} already published here "
                "(--reset to start again)."
            )
        run = SampleWorldRun.start(params=params, log=self.stdout.write)
        try:
            report = sample_world_run(run, until=options["until"], log=self.stdout.write)
        except ValidationError as exc:
            raise CommandError(f"publishing the sample world failed: {' '.join(exc.messages)}") from exc
        finally:
            run.disable_sources()
            run.stop()
        for line in world_summary(run.world):
            self.stdout.write(f"  {line}")
        if report.errors:
            raise CommandError(f"{len(report.errors)} poll(s) failed: {report.errors[0]}")
        if not options["no_measure"]:
            print_measurement(self.stdout.write, measure_builders(run.world))

    def advance(self, *, measure: bool) -> None:
        params = sample_world_params()
        if params is None:
            raise CommandError(
                "No sample world in this database: run `python manage.py demo` (or `python manage.py sample_world "
                "--until present`) first."
            )
        graded_since = latest_grade_id()
        run = SampleWorldRun.start(params=params, log=self.stdout.write)
        report = PublishReport()
        try:
            if run.clock.now() >= run.world.end:
                self.stdout.write(
                    f"The fictional clock is already at the world's end ({run.world.end:%Y-%m-%d %H:%M}): "
                    "its live questions are resolved. Grading what is not graded yet."
                )
            else:
                run.ensure_sources()
                self.stdout.write(f"Advancing the fictional clock from {run.clock.now():%Y-%m-%d %H:%M}.")
                advance_to_end(run, report=report, log=self.stdout.write)
        finally:
            run.disable_sources()
            run.stop()
        if report.errors:
            raise CommandError(f"{len(report.errors)} poll(s) failed: {report.errors[0]}")
        grade_and_rank(log=self.stdout.write, publish_replays=True, graded_since=graded_since)
        if measure:
            print_measurement(self.stdout.write, measure_builders(run.world))


def grade_and_rank(*, log: Any, publish_replays: bool, graded_since: int | None = None) -> None:
    """Build hindsight graphs where missing, grade every resolved question with forecasts, publish
    the fictional replay questions' outcomes when ``publish_replays`` (playing staff; until then
    agents can still open replay sessions on them) and rebuild the standings. "Graded now" counts
    the forecasts given a grade after the grade id ``graded_since`` (by default: from here on), as
    resolutions grade their forecasts as they happen."""
    if graded_since is None:
        graded_since = latest_grade_id()
    resolved = list(
        Question.objects.filter(status=Question.Status.RESOLVED, forecasts__isnull=False)
        .distinct()
        .values_list("pk", "origin")
    )
    with_graph = set(HindsightGraph.objects.filter(is_current=True).values_list("question_id", flat=True))
    # Imported questions (ForecastBench) have an evidence corpus only where an imported news archive
    # covers their window; the others are graded on outcome only.
    imported = Question.objects.filter(pk__in=[q for q, o in resolved if o == Question.Origin.IMPORTED])
    covered = {q.pk for q in imported if question_archives(q, window_end=default_window_end(q))}
    built = 0
    for qid, origin in resolved:
        if qid not in with_graph and (origin != Question.Origin.IMPORTED or qid in covered):
            built += hindsight_build(question_id=qid) is not None
    for qid, _ in resolved:
        grade_question(question_id=qid)
    published: Counter[str] = Counter()
    if publish_replays:
        for question in Question.objects.filter(
            track=Question.Track.REPLAY, status=Question.Status.RESOLVED, outcome_published_at=None
        ).exclude(origin=Question.Origin.IMPORTED):
            question_publish_outcome(question=question)
            # The sample world's own, and the real ones the demo kept on offer (written from the archive).
            published["real" if question.origin == Question.Origin.ARCHIVE else "sample"] += 1
    graded = Grade.objects.filter(pk__gt=graded_since).values("forecast").distinct().count()
    graphs = HindsightGraph.objects.filter(is_current=True)
    log(
        f"    {graphs.count()} hindsight graphs ({graphs.filter(graph_built=True).count()} pass the quality "
        f"thresholds; {built} built now); {graded} forecasts graded now, "
        f"{Grade.objects.filter(is_current=True).count()} current grades"
    )
    if published:
        parts = [f"{published['sample']} sample"] if published["sample"] else []
        if published["real"]:
            parts.append(f"{published['real']} real")
        log(f"    published the outcomes of {' and '.join(parts)} replay questions (as staff would)")
    log("    Ranking: rebuilding the standings")
    call_command("rebuild_standings", stdout=IndentedOutput(log))


def latest_grade_id() -> int:
    return Grade.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


@contextmanager
def quiet_logs(verbosity: int) -> Iterator[None]:
    """Per-request and per-task INFO lines would bury the progress lines; -v 2 keeps them."""
    if verbosity < 2:
        # A global threshold: Celery reconfigures loggers when its first task runs.
        logging.disable(logging.INFO)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


class IndentedOutput:
    """A stdout stand-in that indents a sub-command's lines under the current step."""

    def __init__(self, log: Any) -> None:
        self.log = log

    def write(self, text: str = "", ending: str | None = None) -> None:
        for line in str(text).rstrip("\n").splitlines():
            self.log(f"    {line}")

    def flush(self) -> None:
        return None


def sample_world_run(run: SampleWorldRun, *, until: str, log: Any) -> PublishReport:
    """Publish ``run``'s world up to its present (live questions open) or to its end (resolved)."""
    report = PublishReport()
    run.ensure_sources()
    world = run.world
    log(f"World server on {run.server.base_url}; fictional clock {run.clock.now():%Y-%m-%d}.")
    run.advance(to=world.present, report=report)
    run.load_questions(now=world.present, report=report)
    log(
        f"Clock at {world.present:%Y-%m-%d %H:%M}: {report.polls} polls, {report.added} rows added, "
        f"{report.skipped} skipped; {report.questions_created} questions created."
    )
    if until == "end":
        advance_to_end(run, report=report, log=log)
    return report


def advance_to_end(run: SampleWorldRun, *, report: PublishReport, log: Any) -> None:
    run.advance(to=run.world.end, report=report)
    run.resolve_live(now=run.world.end, report=report)
    log(
        f"Clock advanced to {run.world.end:%Y-%m-%d %H:%M}: markets settled through the pollers, "
        f"{report.questions_resolved} other live questions resolved."
    )


def print_measurement(write: Any, results: dict[str, dict[str, Any]]) -> None:
    write("Hindsight builders against the hidden ground truth (key-event recall, top-5 hidden events):")
    for builder, figures in results.items():
        write(
            f"  {builder}: KER {figures['key_event_recall']} over {figures['questions']} resolved questions; "
            f"{figures['graphs_passing_quality']} graphs pass the quality thresholds; by type {figures['by_type']}"
        )
    if "llm" not in results:
        write("  llm: not measured (set HINDSIGHT_LLM_MODEL and HINDSIGHT_LLM_BASE_URL to measure it)")
