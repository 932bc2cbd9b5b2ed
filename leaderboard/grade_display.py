"""A grade's scores in words, by question type, and what changed between two grade versions.

Every page that lists grades (question, agent, dashboard, forecast) shows the scores of the
question's own type through :func:`grade_scores`: a binary Brier means nothing for a relation
question, whose grade is its first- and second-level precision, recall and F1 and its KL divergences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from leaderboard.models import Grade

JUDGE_NAMES = {"llm": "LLM judge", "lexical": "lexical judge"}
# Grade versions written before grader 2.0 kept the multiple-choice Brier summed over the options and
# relation precision, recall and F1 x100; a forecast's grade history shows them as what they were.
EARLIER_SCALES = frozenset({"1.0"})


@dataclass(frozen=True)
class Score:
    label: str
    value: str
    hint: str = ""  # a tooltip: what the number means
    score: str = ""  # its definition in grading.scoring.definitions (pages mark the value with it)


def _f(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _g(value: float | None) -> str:
    """A quantity in its own magnitude: 14,321 or 0.0125, not 14321.000."""
    return "—" if value is None else f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"


def _yes_no(value: bool | None) -> str:
    return "—" if value is None else ("yes" if value else "no")


def _call(grade: Grade, details: dict[str, Any]) -> str:
    """Whether the forecast's call was right, in words: a forecast at the decision boundary made none."""
    if grade.correct is None:
        return "—"
    if details.get("no_call"):
        tied = [str(o) for o in details.get("tied_options") or []]
        if not tied:
            return "none at 50%"
        if len(tied) == 2:
            return f"none: {tied[0]} and {tied[1]} tie"
        return f"none: {len(tied)} options tie"
    return "right" if grade.correct else "wrong"


# What the call is, as the tooltip of the "Call" score says it (grading.scoring.definitions has the rule).
_CALL_HINT = {
    "binary": "right when the forecast leans to what happened (above 50% on yes, below on no); "
    "exactly 50% makes no call and is not counted correct",
    "multiple_choice": "right when the single most probable option happened; options tied for the top "
    "make no call and are not counted correct",
}


def _pct(value: float | None, scale: float = 100.0) -> str:
    return "—" if value is None else f"{value * scale:.1f}%"


def _prf(
    prefix: str, what: str, p: float | None, r: float | None, f1: float | None, f1_score: str, *, scale: float = 100.0
) -> list[Score]:
    """Precision, recall and F1 (shares on 0-1, relation and open-ended alike) as percentages; ``what``
    names what is counted."""
    kind = "open" if f1_score == "open_f1" else "relation"
    return [
        Score(
            f"{prefix}P",
            _pct(p, scale),
            f"precision, the share of the predicted {what} that were right",
            f"{kind}_precision",
        ),
        Score(
            f"{prefix}R", _pct(r, scale), f"recall, the share of the real {what} that were predicted", f"{kind}_recall"
        ),
        Score(f"{prefix}F1", _pct(f1, scale), "F1, the harmonic mean of that precision and recall", f1_score),
    ]


def judge_name(grade: Grade) -> str:
    lrae = (grade.details or {}).get("lrae") or {}
    name = JUDGE_NAMES.get(grade.judge or lrae.get("judge", ""), grade.judge or "judge")
    model = lrae.get("model")
    return f"{name} ({model})" if model and grade.judge == "llm" else name


def grade_scores(grade: Grade | None, question_type: str) -> list[Score]:
    """The outcome scores of ``grade`` that apply to ``question_type`` (evidence and reasoning apart)."""
    if grade is None:
        return []
    details: dict[str, Any] = grade.details or {}
    if grade.void:
        return [Score("Void", "question annulled", str(details.get("void", "")))]
    if details.get("outcome_error"):
        return [Score("Ungradable", "prediction unreadable", str(details["outcome_error"]))]
    if question_type == "binary":
        scores = [
            Score("Call", _call(grade, details), _CALL_HINT["binary"]),
            Score("Brier", _f(grade.brier), "(p - y)²: 0 best, 1 worst", "brier"),
            Score("Log", _f(grade.log_score), "ln p of what happened; 0 best", "log_score"),
        ]
        if grade.market_edge is not None:
            scores.append(Score("Edge", f"{grade.market_edge:+.3f}", "log score minus the market's", "market_edge"))
        return scores
    if question_type == "multiple_choice":
        picked = details.get("predicted_option")
        tied = details.get("tied_options")
        said = f"; picked {picked}" if picked else f"; tied: {', '.join(map(str, tied))}" if tied else ""
        scores = [
            Score("Call", _call(grade, details), _CALL_HINT["multiple_choice"] + said),
            Score(
                "Brier (multiple choice)",
                _f(grade.brier),
                "half the squared error summed over the options, so on the binary scale: 0 best, 1 worst",
                "brier",
            )
            if grade.grader_version not in EARLIER_SCALES
            else Score(
                f"Brier summed (grader {grade.grader_version})",
                _f(grade.brier),
                "this grade version summed the squared error over the options: 0 best, 2 worst; "
                "grader 2.0 halves it onto 0 to 1",
            ),
            Score("Log", _f(grade.log_score), "ln p of the resolved option; 0 best", "log_score"),
        ]
        if grade.market_edge is not None:
            scores.append(Score("Edge", f"{grade.market_edge:+.3f}", "log score minus the market's", "market_edge"))
        return scores
    if question_type == "quantity":
        q = details.get("quantity") or {}
        kind = q.get("kind", "")
        if kind == "interval":
            scores = [Score("Interval holds", _yes_no(grade.correct), "whether the value lies in the interval")]
            if q.get("interval_width") is not None:
                scores.append(Score("Width", _g(q["interval_width"]), "the interval's upper end minus its lower end"))
        elif kind in ("quantile", "quantiles") or grade.pinball is not None:
            scores = [
                Score("Pinball", _f(grade.pinball), "mean quantile loss; 0 best", "pinball"),
                Score(
                    "10-90% holds", _yes_no(grade.correct), "whether the value lies between the 10% and 90% quantiles"
                ),
            ]
        else:
            scores = [
                Score("Point within 10%", _yes_no(grade.correct), "whether the value is within 10% of the outcome")
            ]
        if q.get("absolute_error") is not None:
            scores.append(
                Score("Absolute error", _g(q["absolute_error"]), "the distance from the outcome, in its unit")
            )
        return scores
    if question_type == "timeframe":
        scores = [Score("Exact period", _yes_no(grade.correct), "whether the forecast named the period it happened in")]
        offset = details.get("period_offset")
        if offset:
            n = abs(offset)
            scores.append(
                Score(
                    "Off by",
                    f"{n} period{'s' if n != 1 else ''} {'early' if offset < 0 else 'late'}",
                    "how many periods before or after the real one the forecast's period lies",
                )
            )
        return scores
    if question_type == "relation":
        rel = details.get("relation") or {}
        first = rel.get("first_level") or {}
        second = rel.get("second_level") or {}
        scale = 1.0 if grade.grader_version in EARLIER_SCALES else 100.0
        return [
            *_prf(
                "1st ",
                "first-level CAMEO codes",
                first.get("precision"),
                first.get("recall"),
                grade.first_level_f1,
                "first_level_f1",
                scale=scale,
            ),
            *_prf(
                "2nd ",
                "second-level CAMEO codes",
                second.get("precision"),
                second.get("recall"),
                grade.second_level_f1,
                "second_level_f1",
                scale=scale,
            ),
            Score(
                "KL bin",
                _f(grade.kl_binary),
                "Kullback-Leibler divergence of the predicted from the real mix of "
                "verbal and material relations (two classes); 0 best",
                "kl_binary",
            ),
            Score(
                "KL quad",
                _f(grade.kl_quad),
                "Kullback-Leibler divergence of the predicted from the real mix of "
                "the four quad classes (verbal and material cooperation and conflict); 0 best",
                "kl_quad",
            ),
        ]
    if question_type == "open_ended":
        return [
            *_prf("", "events", grade.open_precision, grade.open_recall, grade.open_f1, "open_f1"),
            Score(
                "Judge",
                judge_name(grade),
                "what matched the predicted events to what happened: an LLM or the lexical judge",
            ),
        ]
    return []


def matcher_label(settings: dict[str, Any]) -> str:
    if not settings:
        return "—"
    name = settings.get("matcher", "matcher")
    threshold = settings.get("threshold")
    return f"{name} (threshold {threshold})" if threshold is not None else str(name)


@dataclass(frozen=True)
class GradeVersion:
    grade: Grade
    changes: list[str]
    matcher: str


def grade_versions(grades: list[Grade]) -> list[GradeVersion]:
    """Grades of one forecast, newest first, each with what changed since the version before it."""
    ordered = sorted(grades, key=lambda g: g.version)
    out: list[GradeVersion] = []
    previous: Grade | None = None
    for g in ordered:
        changes: list[str] = []
        if previous is None:
            changes.append("first grade")
        else:
            if g.resolution_version != previous.resolution_version:
                changes.append(f"resolution v{previous.resolution_version} → v{g.resolution_version}")
            if g.reference_version != previous.reference_version:
                changes.append(f"hindsight graph v{previous.reference_version or '—'} → v{g.reference_version or '—'}")
            if g.matcher_settings != previous.matcher_settings:
                changes.append(
                    f"matcher {matcher_label(previous.matcher_settings)} → {matcher_label(g.matcher_settings)}"
                )
            if g.judge != previous.judge:
                changes.append(f"judge {previous.judge or '—'} → {g.judge or '—'}")
            if g.grader_version != previous.grader_version:
                changes.append(f"grader {previous.grader_version} → {g.grader_version}")
            if g.void != previous.void:
                changes.append("question annulled" if g.void else "annulment lifted")
            if not changes and g.inputs_key != previous.inputs_key:
                changes.append("hindsight graph reviewed (events approved, rejected or revised)")
            if not changes:
                changes.append("regraded with the same inputs")
        out.append(GradeVersion(grade=g, changes=changes, matcher=matcher_label(g.matcher_settings)))
        previous = g
    return list(reversed(out))
