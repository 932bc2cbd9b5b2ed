"""The ``worldreasoner`` matcher: the public WorldReasoner evaluator's event matching, reproduced.

WorldReasoner publishes its reasoning evaluator (``scripts/benchmark/evaluate_reasoning_graphs.py``
in the paper's code repository). A team that reports a KER computed with it can check the figure
here by choosing this matcher (``HINDSIGHT_MATCHER=worldreasoner``). It follows that evaluator's
rules, written out below from its definitions; the default ``hybrid`` matcher
(:mod:`grading.scoring.reasoning`) differs where the comparison says so.

Text and tokens
    An event's text is ``"{title}. {description}"``. Its tokens are a *set*: the lower-cased runs
    of ASCII letters and digits (``[a-z0-9]+``) longer than two characters, except *the*, *and*,
    *for*, *with*, *that*, *this*. (hybrid: the project's tokenizer, a multiset, with a full
    function-word stop list and Unicode normalisation.)

BM25
    Okapi BM25 with k1 = 1.5, b = 0.75 and the IDF ``ln(1 + (N - n + 0.5) / (n + 0.5))`` over
    token sets: every term frequency is 1 and a document's length is its number of distinct
    tokens. A query with no tokens, or documents whose mean length is 0, score 0 everywhere.

    The terms of a query are summed in sorted order. The evaluator sums them in the iteration order
    of a Python set, which depends on ``PYTHONHASHSEED``: the last bit of a score, and with it
    which of two tied pairs is matched, then changes from one process to the next (it matched
    different pairs for 9 of 300 forecasts between two seeds). The sorted order is one of the
    orders the evaluator can take, so every result here is one the evaluator gives in some process.

Scaling ("BM25-RS")
    A forecast event's scores against the hindsight events, **outcome nodes included**, are divided
    by the largest of them (all 0 when that is not positive). The best candidate of every forecast
    event therefore gets 1. (hybrid: divided by the score of a perfect match.)

Candidates
    For each hindsight event that is not an outcome node, the hindsight text is a BM25 query over the
    forecast events; the ``candidates_per_event`` (5) best forecast events with a positive score
    are its candidates (the first five forecast events when none scores above 0; ties keep the
    forecast order). Only candidates are compared with it.

Similarity and match
    ``sim = bm25_weight * BM25-RS + token_f1_weight * F1`` (0.6, 0.4), F1 the set F1 of the two
    token sets (0 when either is empty or they share nothing). A pair is kept when ``sim >=
    threshold`` (0.45) and, when *both* dates are known, they differ by at most
    ``date_window_days`` (the paper's 7): an undated event passes the date gate. (hybrid: undated
    events never match.)

Assignment
    Greedy one-to-one over the kept pairs sorted by similarity, ties to the later hindsight event,
    then to the later forecast event (the evaluator sorts (similarity, hindsight index, forecast
    index) tuples in reverse).

Key events
    Hindsight events other than outcome nodes whose impact score (magnitude x confidence; 0 without
    an impact) is at least ``key_event_min_score`` (0.2), the ``top_k`` (5) best, ties to the later
    event. (hybrid: every event with an impact may be a key event; ties to the earlier date.)

Metrics
    Event recall = matched hindsight events / hindsight events other than outcome nodes (None when
    there are none); event precision = matched forecast events / forecast events (None without
    forecast events); F1 = 2PR / (P + R), None when either is None or both are 0; KER = matched
    key events / key events, None without forecast events or without key events; temporal MAE =
    mean date difference over matches where both dates are known.

The hindsight events are taken in the reference's order (date, then id). Rejected events are left
out, as the evaluator does with ``--exclude-annotation-rejected``. Hindsight's own rule that a
forecast without a graph has no reasoning score at all is applied by the grading service for every
matcher. Pure: no Django imports.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final

from grading.scoring.matching import Event, EventMatch, MatcherSettings, ReasoningScore, impact_score

__all__ = [
    "WORLDREASONER_MATCHER_VERSION",
    "WorldReasonerIndex",
    "bm25_scores",
    "event_tokens",
    "scaled",
    "set_token_f1",
    "worldreasoner_matcher_settings",
]

WORLDREASONER_MATCHER_VERSION: Final = "worldreasoner-eval/1.0"
_TOKEN: Final = re.compile(r"[a-z0-9]+")
_STOPWORDS: Final = frozenset({"the", "and", "for", "with", "that", "this"})


def worldreasoner_matcher_settings(
    *, threshold: float = 0.45, date_window_days: int = 7, top_k: int = 5
) -> MatcherSettings:
    """Settings of the reproduced evaluator (its defaults, with the paper's 7-day date gate)."""
    return MatcherSettings(
        matcher="worldreasoner",
        version=WORLDREASONER_MATCHER_VERSION,
        bm25_weight=0.6,
        token_f1_weight=0.4,
        threshold=threshold,
        date_window_days=date_window_days,
        top_k=top_k,
        bm25_k1=1.5,
        bm25_b=0.75,
        bm25_normalisation="query_max",
        text_fields="title+description",
        candidates_per_event=5,
        key_event_min_score=0.2,
    )


def event_text(event: Event) -> str:
    return f"{event.title}. {event.description}"


def event_tokens(text: str) -> frozenset[str]:
    """The evaluator's token set of ``text`` (module docstring)."""
    return frozenset(t for t in _TOKEN.findall(text.lower()) if len(t) > 2 and t not in _STOPWORDS)


def bm25_scores(
    query: frozenset[str], docs: Sequence[frozenset[str]], *, k1: float = 1.5, b: float = 0.75
) -> list[float]:
    """BM25 of the token set ``query`` against each token set of ``docs`` (module docstring)."""
    if not query or not docs:
        return [0.0] * len(docs)
    avgdl = sum(len(d) for d in docs) / len(docs)
    if avgdl == 0:
        return [0.0] * len(docs)
    df: Counter[str] = Counter(t for d in docs for t in d)
    n = len(docs)
    scores: list[float] = []
    for doc in docs:
        norm = k1 * (1 - b + b * len(doc) / avgdl)
        score = 0.0
        # Terms in sorted order: summing over the set itself would follow its iteration order, which
        # depends on PYTHONHASHSEED, and change the last bit of a score (and so a tie) per process.
        for term in sorted(query):
            if term in doc:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * (k1 + 1) / (1 + norm)
        scores.append(score)
    return scores


def scaled(scores: Sequence[float]) -> list[float]:
    """Scores divided by their maximum; all 0 when the maximum is not positive."""
    top = max(scores, default=0.0)
    if top <= 0:
        return [0.0] * len(scores)
    return [s / top for s in scores]


def set_token_f1(a: frozenset[str], b: frozenset[str]) -> float:
    """F1 of two token sets; 0 when either is empty or they share nothing."""
    overlap = len(a & b)
    if not a or not b or not overlap:
        return 0.0
    precision, recall = overlap / len(b), overlap / len(a)
    return 2 * precision * recall / (precision + recall)


class WorldReasonerIndex:
    """One question's hindsight events under the ``worldreasoner`` matcher (module docstring)."""

    def __init__(self, events: Iterable[Event], settings: MatcherSettings | None = None) -> None:
        self.settings = settings or worldreasoner_matcher_settings()
        # Every non-rejected event, outcome nodes included: they are part of the BM25 corpus.
        self.corpus: tuple[Event, ...] = tuple(e for e in events if not e.rejected)
        ids = [e.id for e in self.corpus]
        if len(set(ids)) != len(ids):
            raise ValueError("reference event ids must be unique")
        self.events: tuple[Event, ...] = tuple(e for e in self.corpus if not e.is_outcome)
        self._tokens = [event_tokens(event_text(e)) for e in self.corpus]
        ranked = sorted(
            (
                (impact_score(e) if e.has_impact else 0.0, i)
                for i, e in enumerate(self.corpus)
                if not e.is_outcome and (impact_score(e) if e.has_impact else 0.0) >= self.settings.key_event_min_score
            ),
            reverse=True,
        )
        self.key_events: tuple[Event, ...] = tuple(self.corpus[i] for _, i in ranked[: self.settings.top_k])

    def __len__(self) -> int:
        return len(self.events)

    def _pairs(
        self, forecast: Sequence[Event], f_tokens: list[frozenset[str]]
    ) -> list[tuple[float, int, int, float, float]]:
        s = self.settings
        k1, b = s.bm25_k1, s.bm25_b
        f_to_h = [scaled(bm25_scores(q, self._tokens, k1=k1, b=b)) for q in f_tokens]
        pairs: list[tuple[float, int, int, float, float]] = []
        for hi, reference in enumerate(self.corpus):
            if reference.is_outcome or not forecast:
                continue
            reverse = scaled(bm25_scores(self._tokens[hi], f_tokens, k1=k1, b=b))
            ranked = sorted(range(len(forecast)), key=lambda i: reverse[i], reverse=True)[: s.candidates_per_event]
            candidates = {i for i in ranked if reverse[i] > 0} or set(ranked)
            for fi in sorted(candidates):
                rs = f_to_h[fi][hi]
                tok = set_token_f1(self._tokens[hi], f_tokens[fi])
                sim = s.bm25_weight * rs + s.token_f1_weight * tok
                if sim < s.threshold:
                    continue
                day_a, day_b = reference.date, forecast[fi].date
                if day_a is not None and day_b is not None and abs((day_b - day_a).days) > s.date_window_days:
                    continue
                pairs.append((sim, hi, fi, rs, tok))
        return pairs

    def score(self, forecast_events: Sequence[Event]) -> ReasoningScore:
        forecast = list(forecast_events)
        f_tokens = [event_tokens(event_text(e)) for e in forecast]
        used_h: set[int] = set()
        used_f: set[int] = set()
        matches: list[EventMatch] = []
        for sim, hi, fi, rs, tok in sorted(self._pairs(forecast, f_tokens), reverse=True):
            if hi in used_h or fi in used_f:
                continue
            used_h.add(hi)
            used_f.add(fi)
            day_a, day_b = self.corpus[hi].date, forecast[fi].date
            matches.append(
                EventMatch(
                    forecast_id=forecast[fi].id,
                    reference_id=self.corpus[hi].id,
                    score=sim,
                    bm25_rs=rs,
                    token_f1=tok,
                    day_diff=(day_b - day_a).days if day_a is not None and day_b is not None else None,
                )
            )
        f, n = len(forecast), len(self.events)
        recall = len(matches) / n if n else None
        precision = len(matches) / f if f else None
        f1 = (
            2 * precision * recall / (precision + recall)
            if precision is not None and recall is not None and precision + recall
            else None
        )
        key_ids = tuple(e.id for e in self.key_events)
        matched = {m.reference_id for m in matches}
        matched_keys = tuple(k for k in key_ids if k in matched)
        dated = [abs(m.day_diff) for m in matches if m.day_diff is not None]
        return ReasoningScore(
            ker=len(matched_keys) / len(key_ids) if f and key_ids else None,
            event_precision=precision,
            event_recall=recall,
            event_f1=f1,
            temporal_mae_days=sum(dated) / len(dated) if dated else None,
            matches=tuple(matches),
            key_event_ids=key_ids,
            matched_key_event_ids=matched_keys if f else (),
            n_forecast_events=f,
            n_reference_events=n,
            settings=self.settings,
        )

    def score_many(self, forecasts: Sequence[Sequence[Event]]) -> list[ReasoningScore]:
        return [self.score(events) for events in forecasts]
