"""The ``guarded`` event matcher (the default): a pair matches only when the two sentences claim the
same thing, decided by trees learned from real news and traps generated from it (pure; no Django).

Candidates
    Both dates known and at most 7 days apart (``hybrid``'s date gate), and either the hybrid
    similarity (:mod:`grading.scoring.reasoning`: 0.6 x self-scaled BM25 + 0.4 x token F1) reaches
    :data:`LEXICAL_FLOOR` or the cosine of the multilingual-e5-small embeddings
    (:mod:`grading.scoring.multilingual`) reaches :data:`COSINE_FLOOR`. Every forecast event with a
    hindsight event inside its date window is embedded (its first :data:`EMBEDDED_CHARS` characters),
    each distinct text once per process, or once ever when the index is given a cache with a store
    (the grading app's stored vectors, :mod:`grading.embeddings`). So with the parse: each distinct
    text once per process, or once ever with a store of facts (:mod:`grading.text_facts`).

The same claim
    Two texts, or two titles, that are the same words (white space aside) always match, with
    probability 1. When either event has a description and the two titles are near-duplicates
    (token-set Jaccard >= 0.6), the titles say the claim and the rules read them alone
    (:func:`grading.scoring.pair_verdicts.pair_verdict`): a description that adds a sentence never
    turns the same claim into a refusal.

Learned decision (:mod:`grading.scoring.learned_decision`)
    Gradient-boosted trees over the pair's features (:mod:`grading.scoring.event_features`: the
    similarities, and agreement of verb, negation, agent, patient and numbers in a parse) give the
    probability that both sentences report one event; a pair below the model's threshold is refused
    with the first disagreement its features show (:func:`grading.scoring.pair_verdicts.refusal_reasons`,
    else ``different event``). The hand-written guards of version 1.0 that beat the trees on the
    development pairs (:data:`KEPT_GUARDS`, chosen by ``bench/train_event_matcher.py``) then read the
    two titles and refuse what they catch: a description adds detail, not another claim. A forecast
    event without an English function word (a title in another language, a list of key words) is
    decided by the rules of version 1.0 (:func:`grading.scoring.pair_verdicts.pair_verdict`), and one
    content word against a sentence is ``too vague``.

Assignment
    Greedy one-to-one by descending probability, over the pairs the decision accepts. A forecast
    event that is a near-duplicate of one already matched (token-set Jaccard >= 0.6) is not matched
    again: its pair gets the verdict ``duplicate``. So a title repeated on six dates matches once.

Key events
    :func:`grading.scoring.matching.select_key_events` with ``about`` the question's title and the
    outcome node's text: ties in magnitude x confidence break on relevance to the question, and an
    event naming only people or firms nobody else in the graph names is never a key event.

``decision="rules"`` scores with version 1.0 (the hybrid similarity, lifted by a cosine of at least
:data:`SEMANTIC_THRESHOLD`, and the rules alone) and ``decision="learned-only"`` without the kept
guards, so that the benchmark can report them. Every verdict is stored with the grade
(``ReasoningScore.verdicts``); the forecast graph page shows them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

import numpy as np

from grading.scoring.batch_features import ReferenceFacts, distinct_rows, pair_feature_matrix, round_like_python
from grading.scoring.event_features import FactsStore, TextFacts, text_facts_many
from grading.scoring.learned_decision import learned_decision
from grading.scoring.matching import (
    SCORE_TOLERANCE,
    Event,
    EventMatch,
    MatcherSettings,
    ReasoningScore,
    reasoning_result,
    select_key_events,
)
from grading.scoring.multilingual import EmbeddingCache, FloatArray, embed
from grading.scoring.pair_verdicts import (
    NO_CANDIDATE,
    UNLESS_GUARDED,
    embeddable,
    learned_verdicts,
    pair_verdict,
    plain_words,
    reads_as_english,
    same_words,
)
from grading.scoring.polarity import VERDICTS, shape
from grading.scoring.reasoning import ReferenceIndex, _event_text, greedy_pairs
from grading.scoring.text import duplicate_token_sets, token_set

__all__ = [
    "COSINE_FLOOR",
    "DECISIONS",
    "EMBEDDED_CHARS",
    "GUARDED_MATCHER_VERSION",
    "KEPT_GUARDS",
    "LEXICAL_FLOOR",
    "SEMANTIC_THRESHOLD",
    "GuardedReferenceIndex",
    "guarded_matcher_settings",
    "pair_verdict",
]

GUARDED_MATCHER_VERSION: Final = "guarded-learned-e5-parse/2.1"
# The decisions: "learned" (the default), "learned-only" (without the guards kept below) and "rules"
# (the hand-written guards of version 1.0 alone, kept so that the benchmark can report them).
DECISIONS: Final = ("learned", "learned-only", "rules")
# The hand-written guards of version 1.0 that still refuse a pair the learned decision accepts: only
# those that raised F1 on the development pairs over the learned decision's out-of-fold verdicts
# (the model file's training figures, "guards_on_dev"); "learned-only" drops them.
KEPT_GUARDS: Final = frozenset({"different quantity", "negated", "opposite direction", "other actor", "swapped roles"})
# A pair in the date window is a candidate for the learned decision when either similarity reaches
# its floor (chosen on the development data so that no pair labelled "the same event" falls below
# both); the others never match.
LEXICAL_FLOOR: Final = 0.2
COSINE_FLOOR: Final = 0.8
# Cosine of the multilingual-e5-small embeddings at which a pair the words miss still matches under
# the rules; chosen on the odd-numbered pairs of the event-pair benchmark (best F1 there, tied with
# 0.84; other events of the same story reach 0.8 to 0.92, so a lower threshold takes them for
# paraphrases).
SEMANTIC_THRESHOLD: Final = 0.87
# Characters of an event's text that are embedded (the title and the start of the description): the
# event is said there, and a 10,000-character description would cost the model fifty times as much.
EMBEDDED_CHARS: Final = 300
_UNDATED: Final = 10**9
_MATCHED: Final = VERDICTS.index("matched")
_TOO_VAGUE: Final = VERDICTS.index("too vague")


def guarded_matcher_settings(
    *,
    threshold: float = 0.45,
    date_window_days: int = 7,
    top_k: int = 5,
    bm25_weight: float = 0.6,
    token_f1_weight: float = 0.4,
) -> MatcherSettings:
    return MatcherSettings(
        matcher="guarded",
        version=GUARDED_MATCHER_VERSION,
        threshold=threshold,
        date_window_days=date_window_days,
        top_k=top_k,
        bm25_weight=bm25_weight,
        token_f1_weight=token_f1_weight,
    )


def _columns(texts: Sequence[str]) -> dict[str, list[int]]:
    """The columns of each text's words (white space aside), to find the same words in O(1)."""
    columns: dict[str, list[int]] = {}
    for r, text in enumerate(texts):
        columns.setdefault(plain_words(text), []).append(r)
    return columns


class GuardedReferenceIndex(ReferenceIndex):
    """One question's hindsight events under the ``guarded`` matcher; ``embeddings`` is the cache
    the vectors come through (by default the process-wide one, without a store) and ``facts`` the
    store of parse facts the per-text cache reads before parsing (none by default)."""

    def __init__(
        self,
        events: Iterable[Event],
        settings: MatcherSettings | None = None,
        *,
        question: str = "",
        embeddings: EmbeddingCache | None = None,
        facts: FactsStore | None = None,
        decision: str = "learned",
    ) -> None:
        if decision not in DECISIONS:
            raise ValueError(f"unknown decision {decision!r} (expected one of {', '.join(DECISIONS)})")
        every = list(events)
        super().__init__(every, settings or guarded_matcher_settings())
        outcome = " ".join(e.title for e in every if e.is_outcome and not e.rejected)
        self.key_events = tuple(select_key_events(self.events, self.settings.top_k, about=f"{question} {outcome}"))
        self._texts = [_event_text(e, self.settings.text_fields) for e in self.events]
        self._titles = [e.title for e in self.events]
        self._same_text, self._same_title = _columns(self._texts), _columns(self._titles)
        self._ref_vectors: FloatArray | None = None
        self._embeddings = embeddings
        self._facts = facts
        self._decision = decision
        self._ref_facts: ReferenceFacts | None = None
        self._described = np.array([not same_words(t, title) for t, title in zip(self._texts, self._titles, strict=True)], dtype=bool)  # fmt: skip

    def _reference_vectors(self) -> FloatArray:
        if self._ref_vectors is None:
            self._ref_vectors = embed([t[:EMBEDDED_CHARS] for t in self._texts], self._embeddings)
        return self._ref_vectors

    def _day_diff(self, events: Iterable[Event]) -> np.ndarray:
        """Days from each hindsight event to each forecast event (huge where a date is missing)."""
        f_dates = np.array([e.date.toordinal() if e.date else -_UNDATED for e in events], dtype=np.int64)
        return f_dates[:, None] - self._dates[None, :]

    def similarity_rows(self, forecasts: Sequence[Sequence[Event]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(similarity, BM25-RS, token F1) of every forecast event row against every reference event
        under the rules of version 1.0.

        The similarity is the hybrid one where it reaches the threshold; elsewhere, for a pair
        inside the date window, the embeddings' cosine when it reaches ``SEMANTIC_THRESHOLD``,
        mapped linearly onto [threshold, 1] (so either route ranks on one scale). Only forecast
        events with such a pair are embedded (stuffed and one-word events never are, nor events too
        long to match any reference event), and only their first ``EMBEDDED_CHARS`` characters.
        """
        s = self.settings
        score, rs, tok = self._similarity_rows(forecasts)
        window = np.abs(self._day_diff(e for events in forecasts for e in events)) <= s.date_window_days
        texts = [_event_text(e, s.text_fields) for events in forecasts for e in events]
        longest = max((shape(t)[0] for t in self._texts), default=0)
        rows = [
            i
            for i in np.flatnonzero((window & (score < s.threshold - SCORE_TOLERANCE)).any(axis=1)).tolist()
            if embeddable(texts[i]) and shape(texts[i])[0] <= 2 * longest + 4
        ]
        if rows:
            cosine = embed([texts[i][:EMBEDDED_CHARS] for i in rows], self._embeddings) @ self._reference_vectors().T
            score[rows] = np.maximum(score[rows], self._lifted(cosine))
        return score, rs, tok

    def _lifted(self, cosine: np.ndarray) -> np.ndarray:
        """A cosine of at least ``SEMANTIC_THRESHOLD`` mapped linearly onto [threshold, 1], else 0."""
        t = self.settings.threshold
        lifted = t + (cosine - SEMANTIC_THRESHOLD) / (1.0 - SEMANTIC_THRESHOLD) * (1.0 - t)
        return np.where(cosine >= SEMANTIC_THRESHOLD, np.minimum(lifted, 1.0), 0.0)

    def learned_rows(
        self, forecasts: Sequence[Sequence[Event]]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(probability, BM25-RS, token F1, verdicts) of every forecast event row against every
        reference event under the learned decision: the probability is -1 where the pair is no
        candidate (outside the date window, below both similarity floors, or a one-word event), and
        the verdicts hold, per row and reference column, the number of the verdict in ``VERDICTS``,
        ``UNLESS_GUARDED`` (accepted unless a kept guard refuses the titles: read when the
        assignment reaches the pair) or ``NO_CANDIDATE``."""
        s = self.settings
        hybrid, rs, tok = self._similarity_rows(forecasts)
        flat = [e for events in forecasts for e in events]
        texts = [_event_text(e, s.text_fields) for e in flat]
        titles = [e.title for e in flat]
        in_window = np.abs(self._day_diff(flat)) <= s.date_window_days
        probability = np.full(hybrid.shape, -1.0)
        codes = np.full(hybrid.shape, NO_CANDIDATE, dtype=np.int8)
        # The same words always match, whatever the trees would say.
        same = np.zeros(hybrid.shape, dtype=bool)
        for a, (text, title) in enumerate(zip(texts, titles, strict=True)):
            for r in (*self._same_text.get(plain_words(text), ()), *self._same_title.get(plain_words(title), ())):
                same[a, r] = in_window[a, r]
        probability[same], codes[same] = 1.0, _MATCHED
        vague = np.array([shape(t)[0] <= 1 for t in texts], dtype=bool)
        window = in_window & ~vague[:, None] & ~same
        cosine = np.zeros_like(hybrid)
        rows = np.flatnonzero(window.any(axis=1)).tolist()
        if rows:
            vectors = embed([texts[i][:EMBEDDED_CHARS] for i in rows], self._embeddings)
            cosine[rows] = vectors @ self._reference_vectors().T
        candidate = window & ((hybrid >= LEXICAL_FLOOR) | (cosine >= COSINE_FLOOR))
        # The trees read an English parse: a forecast event without a single English function word
        # (a title in another language, or a list of key words) is decided by the rules.
        other = np.array([not reads_as_english(t) for t in texts], dtype=bool)
        if other.any():
            similar = np.maximum(hybrid, self._lifted(cosine))
            for a, r in zip(*np.nonzero(window & other[:, None] & (similar >= s.threshold - SCORE_TOLERANCE)), strict=True):  # fmt: skip
                probability[a, r] = similar[a, r]
                verdict = pair_verdict(texts[a], self._texts[r], forecast_title=titles[a], reference_title=self._titles[r])  # fmt: skip
                codes[a, r] = VERDICTS.index(verdict)
            candidate &= ~other[:, None]
        fi, ri = np.nonzero(candidate)
        if fi.size:
            self._decide(fi, ri, texts, titles, rs, tok, cosine, probability, codes)
        # A one-word event is refused where the words would match.
        too_vague = vague[:, None] & in_window & ~same & (hybrid >= s.threshold - SCORE_TOLERANCE)
        probability[too_vague], codes[too_vague] = 0.0, _TOO_VAGUE
        return probability, rs, tok, codes

    def _both_facts(self, texts: Sequence[str]) -> tuple[list[TextFacts], ReferenceFacts]:
        """The facts of the forecast ``texts`` (in order) and of the hindsight events, read together
        the first time (one read of the store for both)."""
        if self._ref_facts is None:
            both = text_facts_many([*texts, *self._texts], self._facts)
            self._ref_facts = ReferenceFacts(both[len(texts) :])
            return both[: len(texts)], self._ref_facts
        return text_facts_many(texts, self._facts), self._ref_facts

    def _decide(
        self,
        fi: np.ndarray,
        ri: np.ndarray,
        texts: Sequence[str],
        titles: Sequence[str],
        rs: np.ndarray,
        tok: np.ndarray,
        cosine: np.ndarray,
        probability: np.ndarray,
        codes: np.ndarray,
    ) -> None:
        """The learned decision on the candidate pairs (``fi``, ``ri``), all at once: their features
        (:mod:`grading.scoring.batch_features`), the trees, and the titles' rules where the titles
        say the same claim; the kept guards are left to the assignment (``UNLESS_GUARDED``)."""
        decision = learned_decision()
        distinct, text_of_pair = distinct_rows(texts, fi)
        # The similarities as the model was trained on them (rounded as Python rounds).
        x = pair_feature_matrix(
            *self._both_facts(distinct),
            text_of_pair,
            ri,
            cosine=round_like_python(cosine[fi, ri], 6),
            bm25_rs=round_like_python(rs[fi, ri], 9),
            token_f1=round_like_python(tok[fi, ri], 9),
            lexicon=decision.lexicon,
        )
        described = np.array([not same_words(texts[a], titles[a]) for a in range(len(texts))], dtype=bool)[fi]
        p, verdicts = learned_verdicts(
            decision.probability(x),
            x,
            decision.threshold,
            pairs=(fi, ri),
            forecast_titles=titles,
            reference_titles=self._titles,
            described=described | self._described[ri],
            guarded=self._decision == "learned",
        )
        probability[fi, ri] = p
        codes[fi, ri] = verdicts

    def score_many(self, forecasts: Sequence[Sequence[Event]]) -> list[ReasoningScore]:
        n = len(self.events)
        key_ids = tuple(e.id for e in self.key_events)
        if not n or not any(forecasts):
            return [self._result(len(events), n, [], key_ids) for events in forecasts]
        codes: np.ndarray | None = None
        if self._decision != "rules":
            score, rs, tok, codes = self.learned_rows(forecasts)
            candidate = score >= 0.0
        else:
            score, rs, tok = self.similarity_rows(forecasts)
            candidate = score >= self.settings.threshold - SCORE_TOLERANCE
        results: list[ReasoningScore] = []
        start = 0
        for events in forecasts:
            part = slice(start, start + len(events))
            table = codes[part] if codes is not None else None
            results.append(self._assign(events, score[part], rs[part], tok[part], candidate[part], table, key_ids))
            start += len(events)
        return results

    def _verdict(self, events: Sequence[Event], texts: Sequence[str], a: int, r: int, codes: np.ndarray | None) -> str:
        """The verdict on the pair (forecast event ``a``, hindsight event ``r``): the learned
        decision's (``codes``; the kept guards read the titles of a pair it accepts) or, without
        it, the rules'."""
        if codes is None:
            return pair_verdict(texts[a], self._texts[r], forecast_title=events[a].title, reference_title=self._titles[r])  # fmt: skip
        code = int(codes[a, r])
        if code != UNLESS_GUARDED:
            return VERDICTS[code]
        # The guards read the titles: a description adds detail, not another claim.
        guard = pair_verdict(events[a].title, self._titles[r])
        return guard if guard in KEPT_GUARDS else "matched"

    def _assign(
        self,
        events: Sequence[Event],
        score: np.ndarray,
        rs: np.ndarray,
        tok: np.ndarray,
        candidate: np.ndarray,
        codes: np.ndarray | None,
        key_ids: tuple[str, ...],
    ) -> ReasoningScore:
        """Greedy one-to-one by descending score over the candidate pairs, each pair's verdict read
        from ``codes`` (the learned decision's) or, without it, from the rules; a refused pair
        keeps its reason, a forecast event that repeats one already matched is a ``duplicate``."""
        s = self.settings
        f, n = len(events), len(self.events)
        matches: list[EventMatch] = []
        verdicts: list[tuple[str, str, float, str]] = []
        diff = self._day_diff(events)
        fi, ri = np.nonzero(candidate & (np.abs(diff) <= s.date_window_days))
        if fi.size:
            texts = [_event_text(e, s.text_fields) for e in events]
            words = [token_set(t) for t in texts]
            matched: list[int] = []

            def accept(a: int, r: int) -> bool:
                verdict = self._verdict(events, texts, a, r, codes)
                if verdict == "matched" and any(duplicate_token_sets(words[a], words[b]) for b in matched):
                    verdict = "duplicate"
                verdicts.append((events[a].id, self.events[r].id, float(score[a, r]), verdict))
                if verdict == "matched":
                    matched.append(a)
                return verdict == "matched"

            for a, r in greedy_pairs(score, fi, ri, accept):
                matches.append(
                    EventMatch(
                        forecast_id=events[a].id,
                        reference_id=self.events[r].id,
                        score=float(score[a, r]),
                        bm25_rs=float(rs[a, r]),
                        token_f1=float(tok[a, r]),
                        day_diff=int(diff[a, r]),
                    )
                )
        return reasoning_result(f=f, n=n, matches=matches, key_ids=key_ids, settings=s, verdicts=tuple(verdicts))
