"""Leaderboard views as people ask for them: query parameters, labels and how each metric reads.

:func:`parse_view` turns request parameters into a :class:`~leaderboard.stats.views.View` (naming every
bad parameter), :func:`view_params` turns it back; :class:`Entry` is one line of a table (an agent or a
platform baseline) with what the pages, the API and the exports show of it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final

from django.core.exceptions import ValidationError
from django.db.models import Q

from grading.scoring.definitions import range_text
from ingestion.models import Question
from leaderboard.models import Agent
from leaderboard.selectors.questions import revealed_q
from leaderboard.stats.baselines import BASELINE_LABELS
from leaderboard.stats.columns import brier_index_of
from leaderboard.stats.metrics import LOWER_IS_BETTER, METRIC_RANGES, METRICS, STANDINGS_VERSION
from leaderboard.stats.views import HORIZON_BUCKETS, HORIZON_LABELS, TRACKS, View, horizon_bucket

SORTABLE: Final = ("rank", "n", "brier_index", *METRICS)
METRIC_LABELS: Final = {
    "accuracy": "Accuracy",
    "brier": "Brier",
    "brier_adjusted": "Adjusted Brier",
    "log_score": "Log score",
    "peer_score": "Peer score",
    "time_brier": "Time-averaged Brier",
    "time_coverage": "Time coverage",
    "market_edge": "Market edge",
    "source_precision": "SrcP",
    "key_event_recall": "KER",
    "ker_coverage": "KER coverage",
    "leaks": "Leaks",
    "second_level_f1": "MIRAI F1",
    "open_f1": "Open-ended F1",
}
# What a reader sees when pointing at a column header (the page adds which way is better).
_METRIC_MEANING: Final = {
    "accuracy": "Share of forecasts whose call was right under their type's rule; a forecast at exactly 50%, "
    "or with its top options tied, makes no call and is not correct",
    "brier": "Mean Brier score of binary and multiple-choice questions (multiple choice: half the squared "
    "error summed over the options)",
    "brier_adjusted": "Brier on a question of average difficulty (two-way fixed effects, as ForecastBench); "
    "it leaves 0 to 1 only when an agent's questions are far easier or harder than the average one",
    "log_score": "Mean natural-log score of what happened",
    "peer_score": "Metaculus peer score: 100 x (own log score - the other agents' mean); above 0 beats the field",
    "time_brier": "Live questions: every forecast's Brier weighted by the time it stood",
    "time_coverage": "Share of the live questions' open time the agent's forecasts covered",
    "market_edge": "Log score minus the market's at forecast time; above 0 beats the market",
    "source_precision": "Evidence: share of the cited or read sources that the hindsight reference holds",
    "key_event_recall": "Reasoning: share of the reference's key events the forecast graph matched "
    "(cov: KER coverage, the share of forecasts graded for reasoning that carried a graph)",
    "ker_coverage": "Share of forecasts graded for reasoning that carried a graph",
    "leaks": "Cited articles published after the forecast's as-of time, summed",
    "second_level_f1": "Relation questions: F1 of second-level CAMEO codes",
    "open_f1": "Open-ended questions: F1 of predicted events (LRAE)",
}


def _range_words(metric: str) -> str:
    low, high = METRIC_RANGES[metric]
    if METRIC_FORMAT[metric] == "share":
        return "0% to 100%"
    return range_text(low, high)


# How a value reads: a share as a percentage, a score with three decimals, a peer score with one,
# a count as an integer.
METRIC_FORMAT: Final = {
    "accuracy": "share",
    "brier": "score",
    "brier_adjusted": "score",
    "log_score": "score",
    "peer_score": "peer",
    "time_brier": "score",
    "time_coverage": "share",
    "market_edge": "score",
    "source_precision": "share",
    "key_event_recall": "share",
    "ker_coverage": "share",
    "leaks": "count",
    "second_level_f1": "share",
    "open_f1": "share",
}
# The table's columns in order: the main ones fit a laptop screen; the others come with "more
# columns" and sit with the outcome scores. KER coverage and time coverage are shown inside the KER
# and time-averaged Brier cells.
COLUMN_ORDER: Final = (
    "brier_adjusted",
    "brier",
    "peer_score",
    "accuracy",
    "second_level_f1",
    "open_f1",
    "log_score",
    "time_brier",
    "market_edge",
    "source_precision",
    "leaks",
    "key_event_recall",
)
MORE_COLUMNS: Final = ("log_score", "time_brier", "market_edge")
METRIC_HELP: Final = {m: f"{_METRIC_MEANING[m]}; range {_range_words(m)}" for m in METRICS}
MAIN_COLUMNS: Final = tuple(m for m in COLUMN_ORDER if m not in MORE_COLUMNS)


@dataclass
class Entry:
    """One line of a leaderboard table (an agent or a platform baseline)."""

    rank: int | None
    provisional: bool
    baseline: str
    agent: Agent | None
    n: int
    values: dict[str, float | None]
    counts: dict[str, int]
    brier_lo: float | None
    brier_hi: float | None
    brier_index: float | None
    rank_metric: str = ""
    standings_version: str = STANDINGS_VERSION
    # Baselines (computed rows and the platform's baseline agents): where the row stands among the
    # ranked agents (1 + the number ranked ahead of it).
    place: int | None = None

    @property
    def name(self) -> str:
        if self.agent is not None:
            return self.agent.name
        return BASELINE_LABELS.get(self.baseline, self.baseline)

    @property
    def is_baseline(self) -> bool:
        """A platform baseline row, or one of the platform's baseline agents."""
        return bool(self.baseline) or bool(self.agent is not None and self.agent.is_baseline)

    @property
    def brier_adjusted_index(self) -> float | None:
        return brier_index_of(self.values.get("brier_adjusted"))

    @property
    def rank_n(self) -> int:
        """The questions behind the ranking score: the n the provisional rule compares with."""
        return self.counts.get(self.rank_metric, 0) if self.rank_metric else self.n

    def as_dict(self) -> dict[str, Any]:
        agent = self.agent
        out: dict[str, Any] = {
            "rank": self.rank,
            "provisional": self.provisional,
            "baseline": self.baseline or None,
            "platform_baseline": self.is_baseline,
            "name": self.name,
            "agent": agent.slug if agent else None,
            "team": agent.team.name if agent else None,
            "model": agent.model_name if agent else None,
            "cutoff": agent.knowledge_cutoff.isoformat() if agent and agent.knowledge_cutoff else None,
            "n": self.n,
            "rank_n": self.rank_n,
            "brier_lo": self.brier_lo,
            "brier_hi": self.brier_hi,
            "brier_index": self.brier_index,
            "brier_adjusted_index": self.brier_adjusted_index,
            "standings_version": self.standings_version,
        }
        if self.is_baseline:
            out["place"] = self.place
        for m in METRICS:
            out[m] = self.values.get(m)
            out[f"{m}_n"] = self.counts.get(m, 0)
        return out


def baseline_agent_ids() -> list[int]:
    """The platform's baseline agents: listed with their scores for reference, never ranked."""
    return list(Agent.objects.filter(is_baseline=True).order_by("pk").values_list("pk", flat=True))


def _day(value: str, name: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise ValidationError({name: f"{value!r} is not a date (YYYY-MM-DD)."}) from exc


def parse_view(params: Mapping[str, Any]) -> View:
    """A view from query parameters; a ValidationError names every bad parameter."""
    errors: dict[str, str] = {}
    track = (params.get("track") or "all").strip()
    if track not in TRACKS:
        errors["track"] = f"{track!r} is not one of {', '.join(TRACKS)}."
    qtype = (params.get("type") or "").strip()
    if qtype and qtype not in Question.Type.values:
        errors["type"] = f"{qtype!r} is not a question type ({', '.join(Question.Type.values)})."
    origin = (params.get("origin") or "").strip()
    if origin and origin not in Question.Origin.values:
        errors["origin"] = f"{origin!r} is not an origin ({', '.join(Question.Origin.values)})."
    horizon = (params.get("horizon") or "").strip()
    buckets = [b for b, _ in HORIZON_BUCKETS]
    if horizon and horizon not in buckets:
        errors["horizon"] = f"{horizon!r} is not a horizon bucket ({', '.join(buckets)})."
    contamination = (params.get("contamination") or "on").strip()
    if contamination not in ("on", "off"):
        errors["contamination"] = "contamination is 'on' (default) or 'off'."
    domain = (params.get("domain") or "").strip()[:100]
    window: dict[str, float | None] = {"from": None, "to": None}
    for name in ("from", "to"):
        raw = (params.get(name) or "").strip()
        if raw:
            try:
                day = _day(raw, name)
            except ValidationError as exc:
                errors[name] = exc.message_dict[name][0]
                continue
            moment = datetime.combine(day, time.min, tzinfo=UTC)
            if name == "to":
                moment += timedelta(days=1)  # inclusive end date
            window[name] = moment.timestamp()
    if window["from"] is not None and window["to"] is not None and window["from"] >= window["to"]:
        errors["to"] = (
            f"The date range is reversed: 'resolved from' {params.get('from')} is after 'to' {params.get('to')}; "
            "swap the two dates."
        )
    if errors:
        raise ValidationError(errors)
    return View(
        track=track,
        question_type=qtype,
        domain=domain,
        origin=origin,
        horizon=horizon,
        contamination_filter=contamination == "on",
        resolved_from=window["from"],
        resolved_to=window["to"],
    )


def view_params(view: View) -> dict[str, str]:
    """The query parameters naming a view (only non-defaults)."""
    out: dict[str, str] = {}
    if view.track != "all":
        out["track"] = view.track
    for key, value in (
        ("type", view.question_type),
        ("domain", view.domain),
        ("origin", view.origin),
        ("horizon", view.horizon),
    ):
        if value:
            out[key] = value
    if not view.contamination_filter:
        out["contamination"] = "off"
    if view.resolved_from is not None:
        out["from"] = datetime.fromtimestamp(view.resolved_from, UTC).date().isoformat()
    if view.resolved_to is not None:
        out["to"] = (datetime.fromtimestamp(view.resolved_to, UTC) - timedelta(days=1)).date().isoformat()
    return out


def view_filter(view: View | Any) -> Q:
    """The Standing rows of one view (anything with the view's six fields: a View, a rebuild result's view)."""
    return Q(
        track=view.track,
        question_type=view.question_type,
        domain=view.domain,
        origin=view.origin,
        horizon=view.horizon,
        contamination_filter=view.contamination_filter,
    )


def parse_sort(sort: str) -> tuple[str, bool]:
    """(field, descending); a bad sort falls back to rank."""
    descending = sort.startswith("-")
    name = sort.lstrip("-")
    if name not in SORTABLE:
        return "rank", False
    return name, descending


def normalise_sort(sort: str | None) -> str:
    """The sort a request gets, spelt one way (``-brier``, ``rank``): part of cache keys."""
    name, descending = parse_sort(sort or "rank")
    return ("-" if descending else "") + name


def leaderboard_cache_key(prefix: str, *, view: View, **extra: Any) -> str:
    """Cache key of a rendered leaderboard table: the normalised request (view parameters in a
    fixed order and the given extras), so equivalent query strings share it."""
    params = view_params(view)
    text = "&".join(f"{k}={params[k]}" for k in sorted(params))
    text += "|" + "&".join(f"{k}={extra[k]}" for k in sorted(extra))
    return f"{prefix}:{hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()}"


def graded_question_counts(view: View) -> dict[str, Counter[str]]:
    """How many questions with public grades each domain and each horizon bucket holds under the
    view's track and type (whatever its own domain and horizon), so that a filter option that would
    show an empty board can say so before it is chosen."""
    questions = Question.objects.filter(revealed_q(), forecasts__grades__is_current=True).distinct()
    if view.track != "all":
        questions = questions.filter(track=view.track)
    if view.question_type:
        questions = questions.filter(type=view.question_type)
    if view.origin:
        questions = questions.filter(origin=view.origin)
    counts: dict[str, Counter[str]] = {"domain": Counter(), "horizon": Counter()}
    for domain, days in questions.values_list("domain", "horizon_days"):
        counts["domain"][domain] += 1
        counts["horizon"][horizon_bucket(days)] += 1
    return counts


def filter_choices() -> dict[str, list[tuple[str, str]]]:
    domains = sorted({d for d in Question.objects.exclude(domain="").values_list("domain", flat=True).distinct() if d})
    return {
        "track": [(t, {"all": "All tracks", "live": "Live", "replay": "Replay"}[t]) for t in TRACKS],
        "type": list(Question.Type.choices),
        "domain": [(d, d) for d in domains],
        "origin": list(Question.Origin.choices),
        "horizon": [(b, HORIZON_LABELS[b]) for b, _ in HORIZON_BUCKETS],
    }


__all__ = [
    "COLUMN_ORDER",
    "LOWER_IS_BETTER",
    "MAIN_COLUMNS",
    "METRIC_FORMAT",
    "METRIC_HELP",
    "METRIC_LABELS",
    "MORE_COLUMNS",
    "SORTABLE",
    "Entry",
    "filter_choices",
    "leaderboard_cache_key",
    "normalise_sort",
    "parse_sort",
    "parse_view",
    "view_filter",
    "view_params",
]
