"""Choosing the event matcher: one index per question for the configured matcher (pure; no Django).

``hybrid`` (the default, :mod:`grading.scoring.reasoning`), ``worldreasoner`` (the public evaluator
reproduced, :mod:`grading.scoring.worldreasoner`) and ``semantic`` (embeddings,
:mod:`grading.scoring.semantic`) all answer :class:`~grading.scoring.matching.MatcherIndex`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from grading.scoring.event_features import FactsStore
from grading.scoring.guarded import GUARDED_MATCHER_VERSION, GuardedReferenceIndex, guarded_matcher_settings
from grading.scoring.matching import (
    DEFAULT_MATCHER_SETTINGS,
    MATCHER_VERSION,
    Event,
    MatcherIndex,
    MatcherSettings,
    ReasoningScore,
)
from grading.scoring.multilingual import EmbeddingCache
from grading.scoring.reasoning import ReferenceIndex
from grading.scoring.semantic import SEMANTIC_MATCHER_VERSION, SemanticReferenceIndex, semantic_matcher_settings
from grading.scoring.worldreasoner import (
    WORLDREASONER_MATCHER_VERSION,
    WorldReasonerIndex,
    worldreasoner_matcher_settings,
)

__all__ = ["MATCHER_CATALOGUE", "MATCHER_SETTINGS", "build_reference_index", "score_events"]

# Each matcher's default settings, by name.
MATCHER_SETTINGS: dict[str, Callable[[], MatcherSettings]] = {
    "guarded": guarded_matcher_settings,
    "hybrid": lambda: MatcherSettings(matcher="hybrid", version=MATCHER_VERSION),
    "worldreasoner": worldreasoner_matcher_settings,
    "semantic": semantic_matcher_settings,
}

# (name, version, what it does): the methods page lists these.
MATCHER_CATALOGUE: tuple[tuple[str, str, str], ...] = (
    (
        "guarded",
        GUARDED_MATCHER_VERSION,
        "The default. Within hybrid's date window, a pair similar by words or by multilingual-e5-small "
        "embeddings is decided by gradient-boosted trees over similarity and parse features (verbs, negation, "
        "who did what to whom, numbers), learned from real news and traps generated from it; the same words "
        "always match; the hand-written rules that still beat the trees on the development pairs read the "
        "titles and refuse what they catch; a title in another language is decided by the rules alone; "
        "near-duplicate forecast events match once; key events tie on relevance to the question.",
    ),
    (
        "hybrid",
        MATCHER_VERSION,
        "For comparison (the default before guarded). 0.6 x BM25 scaled by the score of a perfect match to the hindsight event + 0.4 x token "
        "F1 over the project's tokens (function words dropped; direction, negation and sequence words kept); "
        "undated events never match.",
    ),
    (
        "worldreasoner",
        WORLDREASONER_MATCHER_VERSION,
        "The public WorldReasoner evaluator reproduced: token sets of words longer than two letters, BM25 "
        "scaled by the best hindsight event for the forecast event, five BM25 candidates per hindsight "
        "event, undated events pass the date gate, key events need magnitude x confidence >= 0.2. Its flaws "
        "are kept (one shared word reaches the threshold; no negation, direction or roles), except that "
        "BM25 terms are summed in sorted order: the evaluator sums them in set order, which follows "
        "PYTHONHASHSEED, so its grades could change from one process to the next.",
    ),
    (
        "semantic",
        SEMANTIC_MATCHER_VERSION,
        "all-MiniLM-L6-v2 cosine similarity >= 0.55 under the same date gate and assignment as hybrid "
        "(optional extra).",
    ),
)


def build_reference_index(
    events: Iterable[Event],
    settings: MatcherSettings = DEFAULT_MATCHER_SETTINGS,
    *,
    question: str = "",
    embeddings: EmbeddingCache | None = None,
    facts: FactsStore | None = None,
) -> MatcherIndex:
    """The index of ``settings.matcher`` over a question's hindsight events; ``question`` (its title)
    breaks key-event ties by relevance under the guarded matcher, whose vectors come through
    ``embeddings`` (default: the process-wide cache) and whose parse facts are read from ``facts``
    before parsing (default: none stored)."""
    if settings.matcher == "semantic":
        return SemanticReferenceIndex(events, settings)
    if settings.matcher == "worldreasoner":
        return WorldReasonerIndex(events, settings)
    if settings.matcher == "guarded":
        return GuardedReferenceIndex(events, settings, question=question, embeddings=embeddings, facts=facts)
    return ReferenceIndex(events, settings)


def score_events(
    reference: Iterable[Event], forecast_events: Sequence[Event], settings: MatcherSettings = DEFAULT_MATCHER_SETTINGS
) -> ReasoningScore:
    """Match one forecast graph's events against a reference with the configured matcher."""
    return build_reference_index(reference, settings).score(forecast_events)
