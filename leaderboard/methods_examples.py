"""Worked examples for the methods text, computed by the functions that grade and rank.

Every number an example states is the output of the scoring or standings code on the example's
inputs, so an example cannot disagree with what the platform does: change a rule and the methods
text (and the staleness test of docs/methods.md) changes with it. The inputs are fixed here and
never depend on settings, so the examples read the same on every site.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import numpy as np

from grading.agreement import cohen_agreement
from grading.pressure import PressureInput, pressure_points
from grading.scoring import outcome
from grading.scoring.evidence import score_evidence
from grading.scoring.matching import DEFAULT_MATCHER_SETTINGS, Event
from grading.scoring.open_ended import PredictionVerdict, lexical_judge, score_open_ended
from grading.scoring.reasoning import ReferenceIndex
from grading.scoring.relation import prf, relation_answer_from_codes, sanitize_relation, score_relation_answers
from grading.scoring.text import token_f1
from ingestion.reference_data import cameo_children
from ingestion.text import tokenize
from leaderboard import charts
from leaderboard.stats.baselines import base_rates, market_from_grade
from leaderboard.stats.bootstrap import bootstrap_intervals
from leaderboard.stats.columns import brier_index_of, compute_views
from leaderboard.stats.difficulty import attach_relative_scores, table_difficulty, table_question_stats
from leaderboard.stats.metrics import RANK_METRICS
from leaderboard.stats.pairwise import win_share
from leaderboard.stats.peer import peer_scores
from leaderboard.stats.ranking import rank_columns
from leaderboard.stats.tables import GradeTable, QuestionTable
from leaderboard.stats.time_average import time_averaged
from leaderboard.stats.views import View


def num(value: float | None, places: int = 3) -> str:
    """A number rounded to ``places`` decimals without trailing zeros (``0.04``, ``-0.223``, ``60``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "none"
    text = f"{value:.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def verdict(correct: bool) -> str:
    return "right" if correct else "wrong"


def outcome_examples() -> dict[str, Any]:
    yes, no = outcome.score_binary(0.8, True), outcome.score_binary(0.8, False)
    certain_wrong = outcome.score_binary(0.0, True)
    options = ["Alba", "Brest", "Corte"]
    vector = {"Alba": 0.5, "Brest": 0.3, "Corte": 0.2}
    mc = outcome.score_multiple_choice(vector, options, "Brest")
    tie = outcome.score_binary(0.5, True)
    mc_tie = outcome.score_multiple_choice({"Alba": 0.4, "Brest": 0.4, "Corte": 0.2}, options, "Alba")
    loose = outcome.validate_probability_vector({"Alba": 0.5, "Brest": 0.3, "Corte": 0.195}, options)
    point = outcome.score_point(215, 200)
    interval = outcome.score_interval(150, 190, 200)
    quantiles = outcome.score_quantiles({0.1: 150, 0.5: 190, 0.9: 230}, 200)
    period = outcome.score_timeframe("quarter", "2026-Q3", "2026-Q4")
    edge = outcome.market_edge_binary(0.8, True, 0.6)
    edge_mc = outcome.market_edge_multiple_choice(
        vector, options, "Brest", {"Alba": 0.55, "Brest": 0.25, "Corte": 0.25}
    )
    return {
        "yes_brier": num(yes.brier),
        "yes_log": num(yes.log_score),
        "no_brier": num(no.brier),
        "no_log": num(no.log_score),
        "certain_wrong_log": num(certain_wrong.log_score, 2),
        "brier_index": num(outcome.brier_index(0.16), 1),
        "half_index": num(outcome.brier_index(0.25), 1),
        "mc_selected": mc.predicted_option,
        "mc_brier": num(mc.brier),
        "mc_summed": num(2 * mc.brier),
        "tie_correct": "counted correct" if tie.correct else "not counted correct",
        "tie_brier": num(tie.brier),
        "mc_tie_correct": "counted correct" if mc_tie.correct else "not counted correct",
        "mc_tie_options": " and ".join(mc_tie.tied_options),
        "mc_tie_brier": num(mc_tie.brier),
        "mc_log": num(mc.log_score),
        "mc_reduced_brier": num(mc.reduced_brier),
        "mc_reduced_log": num(mc.reduced_log_score),
        "loose_corte": num(loose["Corte"], 4),
        "loose_brest": num(loose["Brest"], 4),
        "loose_alba": num(loose["Alba"], 4),
        "point_rel": num(100 * (point.relative_error or 0.0), 1),
        "point_correct": verdict(point.correct),
        "interval_correct": verdict(interval.correct),
        "pinball": num(quantiles.pinball_loss, 2),
        "quantiles_correct": verdict(quantiles.correct),
        "period_correct": verdict(period.correct),
        "period_offset": period.offset,
        "edge": num(edge),
        "edge_mc": num(edge_mc),
        "edge_mc_market": num(0.25 / 1.05, 3),
    }


def relation_examples() -> dict[str, Any]:
    table = cameo_children()
    raw = {"04": ["042", "043"], "05": [], "99": ["991"], "03": ["051"]}
    predicted = sanitize_relation(raw, table)
    gold = relation_answer_from_codes(["036", "042"], table)
    score = score_relation_answers(predicted, gold)
    return {
        "predicted": predicted.as_dict(),
        "first": sorted(predicted.first_level),
        "second": sorted(predicted.second_level),
        "first_prf": score.first_level,
        "second_prf": score.second_level,
        "binary_kl": num(score.binary_kl),
        "quad_kl": num(score.quad_kl),
        "empty_f1": num(prf(frozenset(), frozenset({"04"})).f1),
    }


def open_ended_examples() -> dict[str, Any]:
    verdicts = [
        PredictionVerdict(gold_index=0),
        PredictionVerdict(gold_index=2),
        PredictionVerdict(gold_index=0),
        PredictionVerdict(gold_index=None, supported=True),
        PredictionVerdict(gold_index=None, supported=False),
    ]
    s = score_open_ended(verdicts, 4)
    prediction, label = "Central bank raises interest rates", "The central bank raised rates"
    lexical = lexical_judge([prediction], [label])
    return {
        "counts": s.counts,
        "p": num(s.precision),
        "r": num(s.recall),
        "f1": num(s.f1),
        "p0": num(s.precision_without_retrieval),
        "r0": num(s.recall_without_retrieval),
        "f10": num(s.f1_without_retrieval),
        "prediction": prediction,
        "label": label,
        "prediction_tokens": " ".join(tokenize(prediction)),
        "label_tokens": " ".join(tokenize(label)),
        "token_f1": num(token_f1(tokenize(prediction), tokenize(label))),
        "lexical_match": lexical[0].gold_index == 0,
    }


def evidence_examples() -> dict[str, Any]:
    as_of = dt.datetime(2026, 5, 1, tzinfo=dt.UTC)
    published = {
        11: dt.datetime(2026, 4, 20, tzinfo=dt.UTC),
        12: dt.datetime(2026, 4, 28, tzinfo=dt.UTC),
        13: dt.datetime(2026, 5, 3, tzinfo=dt.UTC),
    }
    s = score_evidence({11, 12, 13, 14}, {12, 13, 17, 18, 19}, cited=[11, 12, 13], published_at=published, as_of=as_of)
    return {"srcp": num(s.source_precision), "recall": num(s.source_recall), "leaks": s.leaks}


# A hand-written reference: the Senate and the budget bill (not from the sample world).
_REFERENCE = (
    ("r1", "Finance committee approves budget bill", "2026-05-04", 0.8, 0.9),
    ("r2", "Two senators announce opposition to the budget bill", "2026-05-12", 0.5, 0.7),
    ("r3", "Senate leader schedules floor vote on budget bill", "2026-05-20", 0.6, 0.8),
    ("r4", "Budget bill amended to add infrastructure funds", "2026-05-27", 0.7, 0.6),
    ("r5", "Treasury publishes revised deficit forecast", "2026-04-28", 0.2, 0.9),
    ("r6", "Opposition party holds press conference on spending", "2026-05-15", None, None),
    ("r7", "Ratings agency warns on rising debt", "2026-05-06", 0.3, 0.5),
)
_FORECAST = (
    ("f1", "Committee approves the budget bill", "2026-05-05"),
    ("f2", "Floor vote on the budget scheduled", "2026-05-24"),
    ("f3", "Senators reach bipartisan deal", "2026-05-22"),
    ("f4", "Ratings agency warns on debt", "2026-05-20"),
)


def _event(row: tuple[Any, ...]) -> Event:
    key, title, day = row[0], row[1], dt.date.fromisoformat(row[2])
    if len(row) == 3:
        return Event(key, title, "", day)
    magnitude, confidence = row[3], row[4]
    return Event(key, title, "", day, magnitude, confidence, has_impact=magnitude is not None)


def reasoning_examples() -> dict[str, Any]:
    settings = DEFAULT_MATCHER_SETTINGS
    index = ReferenceIndex([_event(r) for r in _REFERENCE], settings)
    forecast = [_event(r) for r in _FORECAST]
    score, rs, tok = index.similarity(forecast)
    result = index.score(forecast)
    titles = {r[0]: r[1] for r in (*_REFERENCE, *_FORECAST)}
    pairs = []
    for i, f in enumerate(forecast):
        j = int(np.argmax(score[i]))
        ref = index.events[j]
        day_diff = (f.date - ref.date).days if f.date and ref.date else None
        matched = any(m.forecast_id == f.id and m.reference_id == ref.id for m in result.matches)
        pairs.append(
            {
                "forecast": f"{f.id} {titles[f.id]} ({f.date})",
                "reference": f"{ref.id} {titles[ref.id]} ({ref.date})",
                "rs": num(float(rs[i, j])),
                "tok": num(float(tok[i, j])),
                "sim": num(float(score[i, j])),
                "days": day_diff,
                "matched": "yes" if matched else "no",
            }
        )
    events = [
        {
            "id": r[0],
            "title": r[1],
            "date": r[2],
            "m": r[3],
            "c": r[4],
            "impact": num(r[3] * r[4], 2) if r[3] else "none",
        }
        for r in _REFERENCE
    ]
    return {
        "events": events,
        "key": ", ".join(result.key_event_ids),
        "pairs": pairs,
        "matches": ", ".join(f"{m.forecast_id}-{m.reference_id}" for m in result.matches),
        "n_matches": len(result.matches),
        "matched_keys": ", ".join(result.matched_key_event_ids),
        "ker": num(result.ker),
        "precision": num(result.event_precision),
        "recall": num(result.event_recall),
        "f1": num(result.event_f1),
        "mae": num(result.temporal_mae_days, 1),
    }


def hindsight_examples() -> dict[str, Any]:
    day = dt.date(2026, 5, 1)
    points = pressure_points(
        [
            PressureInput("a", "", day, "Positive", 0.8, 0.9),
            PressureInput("b", "", day + dt.timedelta(days=5), "Negative", 0.5, 0.6),
            PressureInput("c", "", day + dt.timedelta(days=9), "Mixed", 0.4, 0.7),
        ]
    )
    pairs = [("Approve", "Approve")] * 6 + [("Approve", "Reject"), ("Reject", "Reject"), ("Reject", "Reject")]
    pairs.append(("Reject", "Approve"))
    agreement = cohen_agreement(pairs)
    return {
        "pressure": [num(p.cumulative, 2) for p in points],
        "agreement_percent": num(agreement.percent, 0),
        "kappa": num(agreement.kappa, 2),
        "agreement_items": agreement.items,
    }


def standings_examples() -> dict[str, Any]:
    sample = np.array([0.04, 0.25, 0.64, 0.09, 0.01, 0.36])
    (lo, hi), *_ = bootstrap_intervals([sample])
    base = base_rates(open_at=[10.0], resolved_at=[1.0, 2.0, 3.0, 4.0, 5.0], resolved_outcome=[1, 0, 1, 1, 0])
    market_brier, market_log, market_correct = market_from_grade(math.log(0.8), math.log(0.8) - math.log(0.6))
    names = ["A", "B", "C", "D", "E"]
    brier = np.array([0.18, 0.21, 0.21, 0.25, 0.12])
    n = np.array([40, 25, 31, 12, 4])
    metric, rank, provisional = rank_columns(
        is_agent=np.ones(5, dtype=bool),
        agent_ids=np.arange(1, 6),
        means={m: brier if m == "brier" else np.full(5, math.nan) for m in RANK_METRICS},
        counts={m: n if m == "brier" else np.zeros(5, dtype=np.int64) for m in RANK_METRICS},
        min_n=10,
    )
    ranks = [
        {"name": name, "brier": num(b, 2), "n": int(k), "rank": str(r) if r else "provisional" if p else "none"}
        for name, b, k, r, p in zip(names, brier, n, rank.tolist(), provisional.tolist(), strict=True)
    ]
    pairs = [(0.9, 1), (0.8, 1), (0.85, 0), (0.7, 0), (0.2, 1), (0.1, 0)]
    bins = charts.calibration_bins(pairs)
    return {
        "sample": ", ".join(num(v, 2) for v in sample),
        "sample_mean": num(float(sample.mean()), 4),
        "lo": num(lo, 4),
        "hi": num(hi, 4),
        "base_rate": num(float(base[0]), 3),
        "market_brier": num(market_brier, 2),
        "market_log": num(market_log),
        "market_correct": verdict(bool(market_correct)),
        "rank_metric": metric,
        "ranks": ranks,
        "ece": num(charts.calibration_error(bins), 3),
        "sharpness": num(charts.sharpness(pairs), 3),
        "calibration_pairs": ", ".join(f"({p}, {y})" for p, y in pairs),
    }


# Difficulty: three agents, four questions; B answered only the two hard ones.
_SKILL = {"A": 0.15, "B": 0.15, "C": 0.25}
_DIFFICULTY = {"q1": -0.10, "q2": -0.10, "q3": 0.10, "q4": 0.10}
_ANSWERED = {"A": ("q1", "q2", "q3", "q4"), "B": ("q3", "q4"), "C": ("q1", "q2", "q3", "q4")}


def _rows(records: list[dict[str, Any]], view: View | None = None) -> dict[int, Any]:
    table = GradeTable.from_records(records)
    stats = {flag: table_question_stats(table, flag, table_difficulty(table, flag)) for flag in (True, False)}
    attach_relative_scores(table, stats)
    result = compute_views(table, QuestionTable.empty(), [view or View()], min_n=1, stats=stats)[0]
    return {r.agent_id or 0: r for r in result.rows}


def fair_examples() -> dict[str, Any]:
    """The fair-comparison scores on small hand-made tables."""
    names = sorted(_SKILL)
    questions = sorted(_DIFFICULTY)
    records = [
        {"agent": names.index(a) + 1, "question": questions.index(q) + 1, "brier": _SKILL[a] + _DIFFICULTY[q]}
        for a in names
        for q in _ANSWERED[a]
    ]
    rows = _rows(records)
    difficulty = [
        {
            "agent": a,
            "briers": ", ".join(num(_SKILL[a] + _DIFFICULTY[q], 2) if q in _ANSWERED[a] else "—" for q in questions),
            "brier": num(rows[names.index(a) + 1].metrics["brier"].mean, 3),
            "adjusted": num(rows[names.index(a) + 1].metrics["brier_adjusted"].mean, 3),
        }
        for a in names
    ]
    peers = peer_scores([1, 1, 1], [math.log(0.9), math.log(0.6), math.log(0.3)])
    day = 86_400.0
    timeline = time_averaged(
        [1, 1, 2], [0.0, 30 * day, 45 * day], [0.25, 0.01, 0.16], open_at=[0.0] * 3, close_at=[60 * day] * 3
    )
    tracks = _rows(
        [{"agent": 1, "question": q, "brier": 0.20, "track": "live"} for q in (1, 2, 3)]
        + [{"agent": 1, "question": 4, "brier": 0.12, "track": "replay"}]
    )
    means = _rows(
        [
            {"agent": 1, "question": 1, "brier": 0.04, "qtype": "binary"},
            {"agent": 1, "question": 2, "brier": 0.39, "qtype": "multiple_choice"},
            {"agent": 1, "question": 3, "second_level_f1": 0.5, "qtype": "relation"},
        ]
    )[1]
    mine = np.array([0.04, 0.09, 0.16, 0.01, 0.25, 0.04, 0.09, 0.36])
    theirs = np.array([0.09, 0.16, 0.09, 0.04, 0.36, 0.09, 0.04, 0.49])
    return {
        "means_brier": num(means.metrics["brier"].mean, 3),
        "means_brier_n": means.metrics["brier"].n,
        "means_f1": num(means.metrics["second_level_f1"].mean * 100, 0),
        "difficulty_questions": ", ".join(f"{q} {num(_DIFFICULTY[q], 2)}" for q in questions),
        "difficulty_rows": difficulty,
        "adjusted_index": num(brier_index_of(rows[1].metrics["brier_adjusted"].mean), 1),
        "peer": [num(float(v), 1) for v in peers],
        "time_first": num(float(timeline.score[0]), 2),
        "time_first_coverage": num(float(timeline.coverage[0]) * 100, 0),
        "time_second": num(float(timeline.score[1]), 2),
        "time_second_coverage": num(float(timeline.coverage[1]) * 100, 0),
        "combined": num(tracks[1].metrics["brier"].mean, 2),
        "pairwise_mine": ", ".join(num(v, 2) for v in mine),
        "pairwise_theirs": ", ".join(num(v, 2) for v in theirs),
        "pairwise_share": num(win_share(mine, theirs) * 100, 0),
        "pairwise_n": mine.size,
    }


def all_examples() -> dict[str, Any]:
    return {
        "outcome": outcome_examples(),
        "relation": relation_examples(),
        "open": open_ended_examples(),
        "evidence": evidence_examples(),
        "reasoning": reasoning_examples(),
        "hindsight": hindsight_examples(),
        "standings": standings_examples(),
        "fair": fair_examples(),
    }
