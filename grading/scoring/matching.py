"""What every event matcher shares: graph events, matcher settings, key events and the reasoning
metrics of a set of matches (WorldReasoner, Appendix B.4 and F.3). The matchers themselves:
:mod:`grading.scoring.reasoning` (``hybrid``, the default), :mod:`grading.scoring.worldreasoner`
and :mod:`grading.scoring.semantic`.

Reference set
    The non-rejected events of the hindsight graph except its outcome node (a rejected event leaves
    the reference; the outcome is what is forecast, not a forecastable key event, so it is neither
    matched nor counted in event recall).

Key events ``K``
    The top ``top_k`` (5) reference events by impact score ``magnitude x confidence``, among events
    with an outcome impact (``has_impact``; a missing magnitude or confidence counts as 0). Ties are
    broken by earlier date (undated last), then by id. Scores are rounded to 9 decimals before
    ranking so that equal products computed differently tie deterministically.

Match
    ``sim >= threshold`` (0.45, compared with a 1e-9 tolerance, so the threshold itself matches)
    and both dates known with ``|d(v) - d(u)| <= 7`` days (7 matches, 8 does not). Undated events
    never match.

Metrics
    No forecast graph, no reasoning score: when the forecast has no events, KER, event precision,
    recall, F1 and temporal MAE are all None (not 0), as the paper's F.3 gives conditions without a
    graph no KER. Otherwise ``KER = |matched key events| / |K|`` (None when ``K`` is empty); event
    precision = matched forecast events / forecast events; event recall = matched reference events /
    reference events (None when the reference is empty); F1 of the two; temporal MAE = mean absolute
    date difference in days over matched pairs (None without matches).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Final, NamedTuple, Protocol

from grading.scoring.aggregate import safe_ratio
from grading.scoring.text import token_f1

# 2.0: direction, negation and sequence words are no longer stop words; the outcome node is neither
# matched nor counted; a forecast without a graph gets no reasoning score (None, not 0).
MATCHER_VERSION: Final = "hybrid-bm25rs-tokf1/2.0"
# The matchers a deployment can choose (HINDSIGHT_MATCHER), each stored by name and version on every grade.
MATCHERS: Final = ("guarded", "hybrid", "worldreasoner", "semantic")
DEFAULT_RATIONALE: Final = (
    "On the labelled event-pair benchmark below, the guarded matcher is the only one that tells a "
    "claim from its opposite: hybrid, worldreasoner and semantic match most negated, reversed and "
    "stuffed pairs (75 to 100%), because words and plain sentence embeddings barely change when a "
    "sentence says not, rejects or falls; guarded refuses them, and its multilingual embedding still "
    "finds the paraphrases with no shared word and the titles in German, French and Spanish that the "
    "lexical matchers miss. The public WorldReasoner evaluator scales BM25 by the best score among the "
    "hindsight events for the forecast event, so every forecast event's best candidate reaches the "
    "0.45 threshold on a single shared word whenever the dates agree; it is offered as the "
    "worldreasoner matcher so that a team can check a KER published with that evaluator, and hybrid "
    "(the default before guarded) stays for comparison."
)
# Similarities are compared with the threshold with this tolerance.
SCORE_TOLERANCE: Final = 1e-9


class Event(NamedTuple):
    """A graph event. Forecast events only need ``id``, ``title``, ``description`` and ``date``;
    the impact fields and ``rejected`` are used for hindsight (reference) events only.

    A named tuple rather than a frozen dataclass: grading builds one per forecast event (1,500 per
    question of 100 forecasts) and a tuple is several times cheaper to create."""

    id: str
    title: str
    description: str = ""
    date: dt.date | None = None
    magnitude: float | None = None
    confidence: float | None = None
    has_impact: bool = False
    rejected: bool = False
    is_outcome: bool = False


@dataclass(frozen=True, slots=True)
class MatcherSettings:
    """Matcher parameters; stored with every grade (:meth:`as_dict`) so a grade can be reproduced."""

    bm25_weight: float = 0.6
    token_f1_weight: float = 0.4
    threshold: float = 0.45
    date_window_days: int = 7
    top_k: int = 5
    bm25_k1: float = 1.5
    bm25_b: float = 0.75
    # "self": BM25(v, u) / BM25(u, u), the share of a perfect match, so a single shared word cannot
    # reach 0.6 on its own; "query_max": divide by the best reference event for the query.
    bm25_normalisation: str = "self"
    text_fields: str = "title+description"
    version: str = MATCHER_VERSION
    # "hybrid" (the paper's primary lexical matcher, this module), "worldreasoner" (the public
    # evaluator reproduced, grading.scoring.worldreasoner) or "semantic" (the optional
    # all-MiniLM-L6-v2 cosine matcher of grading.scoring.semantic; BM25/token-F1 weights do not apply).
    matcher: str = "hybrid"
    # worldreasoner only: BM25 candidates kept per hindsight event, and the least impact score
    # (magnitude x confidence) of a key event.
    candidates_per_event: int = 5
    key_event_min_score: float = 0.2

    def __post_init__(self) -> None:
        if self.bm25_weight < 0 or self.token_f1_weight < 0:
            raise ValueError("matcher weights must be >= 0")
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError("matcher threshold must be in [0, 1]")
        if self.date_window_days < 0:
            raise ValueError("date_window_days must be >= 0")
        if self.top_k < 1:
            raise ValueError("top_k must be >= 1")
        if self.bm25_k1 < 0 or not 0.0 <= self.bm25_b <= 1.0:
            raise ValueError("invalid BM25 parameters")
        if self.bm25_normalisation not in ("self", "query_max"):
            raise ValueError(f"unsupported bm25_normalisation {self.bm25_normalisation!r}")
        if self.text_fields not in ("title+description", "title"):
            raise ValueError(f"unsupported text_fields {self.text_fields!r}")
        if self.matcher not in MATCHERS:
            raise ValueError(f"unsupported matcher {self.matcher!r} (expected one of {', '.join(MATCHERS)})")
        if self.candidates_per_event < 1:
            raise ValueError("candidates_per_event must be >= 1")
        if self.key_event_min_score < 0:
            raise ValueError("key_event_min_score must be >= 0")

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> MatcherSettings:
        """Inverse of :meth:`as_dict`; unknown keys raise ``ValueError``."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown matcher settings: {sorted(unknown)}")
        return cls(**data)  # type: ignore[arg-type]


DEFAULT_MATCHER_SETTINGS: Final = MatcherSettings()


class MatcherIndex(Protocol):
    """What grading needs of a question's matcher index, whichever matcher built it."""

    settings: MatcherSettings
    events: tuple[Event, ...]
    key_events: tuple[Event, ...]

    def __len__(self) -> int: ...

    def score(self, forecast_events: Sequence[Event]) -> ReasoningScore: ...

    def score_many(self, forecasts: Sequence[Sequence[Event]]) -> list[ReasoningScore]: ...


def impact_score(event: Event) -> float:
    """``magnitude x confidence`` (missing values count as 0)."""
    return (event.magnitude or 0.0) * (event.confidence or 0.0)


def select_key_events(events: Iterable[Event], top_k: int = 5, *, about: str | None = None) -> list[Event]:
    """Top ``top_k`` non-rejected events with an outcome impact, by impact score (see module docstring);
    the outcome node is never a key event.

    With ``about`` (the question and its outcome, as the ``guarded`` matcher passes them), ties in
    impact score break on relevance to it (token F1 of the event's text with ``about``) before the
    date, and an off-topic event is never a key event: one that certainly names someone (a
    capitalised word inside the sentence, :func:`grading.scoring.polarity.named`) while none of its
    names appears in ``about`` or in any other event, such as another company's bankruptcy in a
    Texaco storyline.
    """
    every = list(events)
    candidates = [e for e in every if e.has_impact and not e.rejected and not e.is_outcome]
    relevance: dict[str, float] = {}
    if about is not None:
        from grading.scoring.polarity import named, shares_name, tokens_of  # the word rules live there

        target = tokens_of(about)
        names = {e.id: named(f"{e.title} {e.description}") for e in every if not e.rejected}
        spoken = named(about)
        for e in candidates:
            text = f"{e.title} {e.description}"
            elsewhere = spoken.union(*(names[o] for o in names if o != e.id))
            off_topic = bool(named(text, first_word=False)) and not shares_name(names[e.id], elsewhere)
            relevance[e.id] = -1.0 if off_topic else token_f1(tokens_of(text), target)
        candidates = [e for e in candidates if relevance[e.id] >= 0.0]
    candidates.sort(
        key=lambda e: (
            -round(impact_score(e), 9),
            -round(relevance.get(e.id, 0.0), 9),
            e.date is None,
            e.date.toordinal() if e.date is not None else 0,
            e.id,
        )
    )
    return candidates[:top_k]


def hybrid_score(bm25_rs: float, tok_f1: float, settings: MatcherSettings = DEFAULT_MATCHER_SETTINGS) -> float:
    """``bm25_weight * BM25-RS + token_f1_weight * TokF1``."""
    return settings.bm25_weight * bm25_rs + settings.token_f1_weight * tok_f1


def is_match(score: float, day_diff: int | None, settings: MatcherSettings = DEFAULT_MATCHER_SETTINGS) -> bool:
    """Similarity at or above the threshold and a known date difference within the window."""
    return (
        score >= settings.threshold - SCORE_TOLERANCE
        and day_diff is not None
        and abs(day_diff) <= settings.date_window_days
    )


class EventMatch(NamedTuple):
    forecast_id: str
    reference_id: str
    score: float
    bm25_rs: float
    token_f1: float
    day_diff: int | None  # forecast date - reference date (None: the worldreasoner matcher matched an undated event)


@dataclass(frozen=True, slots=True)
class ReasoningScore:
    ker: float | None
    event_precision: float | None
    event_recall: float | None
    event_f1: float | None
    temporal_mae_days: float | None
    matches: tuple[EventMatch, ...]
    key_event_ids: tuple[str, ...]
    matched_key_event_ids: tuple[str, ...]
    n_forecast_events: int
    n_reference_events: int
    settings: MatcherSettings
    # (forecast id, reference id, similarity, verdict) of every pair the guarded matcher considered:
    # "matched", or why it refused the pair ("negated", "opposite direction", "duplicate" ...).
    verdicts: tuple[tuple[str, str, float, str], ...] = ()


def reasoning_result(
    *,
    f: int,
    n: int,
    matches: Sequence[EventMatch],
    key_ids: tuple[str, ...],
    settings: MatcherSettings,
    verdicts: tuple[tuple[str, str, float, str], ...] = (),
) -> ReasoningScore:
    """The metrics of ``matches`` between ``f`` forecast events and ``n`` reference events (module docstring)."""
    matched_refs = {m.reference_id for m in matches}
    matched_keys = tuple(k for k in key_ids if k in matched_refs)
    dated = [abs(m.day_diff) for m in matches if m.day_diff is not None]
    if f == 0:  # no forecast graph: no reasoning score at all
        return ReasoningScore(
            ker=None,
            event_precision=None,
            event_recall=None,
            event_f1=None,
            temporal_mae_days=None,
            matches=(),
            key_event_ids=key_ids,
            matched_key_event_ids=(),
            n_forecast_events=0,
            n_reference_events=n,
            settings=settings,
        )
    precision = len(matches) / f
    recall = len(matches) / n if n else None
    return ReasoningScore(
        ker=len(matched_keys) / len(key_ids) if key_ids else None,
        event_precision=precision,
        event_recall=recall,
        event_f1=safe_ratio(2 * precision * (recall or 0.0), precision + (recall or 0.0)),
        temporal_mae_days=(math.fsum(dated) / len(dated)) if dated else None,
        matches=tuple(matches),
        key_event_ids=key_ids,
        matched_key_event_ids=matched_keys,
        n_forecast_events=f,
        n_reference_events=n,
        settings=settings,
        verdicts=verdicts,
    )
