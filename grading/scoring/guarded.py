"""The ``guarded`` event matcher (the default): the hybrid similarity, and a pair only matches when
the two sentences claim the same thing (pure; no Django).

Similarity, threshold, date gate
    Those of ``hybrid`` (:mod:`grading.scoring.reasoning`): 0.6 x self-scaled BM25 + 0.4 x token F1
    >= 0.45, both dates known and at most 7 days apart. A pair inside the date window that the words
    miss (a paraphrase with no shared word, a title in German or French) still passes when the
    cosine of its multilingual-e5-small embeddings (:mod:`grading.scoring.multilingual`) reaches
    :data:`SEMANTIC_THRESHOLD`; that cosine is mapped linearly onto [0.45, 1] so that both routes
    rank on one scale. Only forecast events with such a pair are embedded, each distinct text once
    per process, or once ever when the index is given a cache with a store (the grading app's
    stored vectors, :mod:`grading.embeddings`).

Guards (:mod:`grading.scoring.polarity`)
    A candidate pair is refused, with the reason kept as its verdict, when the sentences disagree
    in polarity (``negated``), in direction on a shared axis (``opposite direction``: rise/fall,
    approve/reject, win/lose, sign/withdraw, resign/stay, impose/lift), in who did what to whom
    (``swapped roles``) or in every number they state (``different quantity``); when the forecast
    event is a long list of words against a short hindsight event (``stuffed``: more than
    2 x + 4 the hindsight event's content words, or naming both directions of one axis); or when it is one content word against a
    sentence (``too vague``).

Assignment
    Greedy one-to-one by descending similarity as ``hybrid`` does, over the pairs the guards accept.
    A forecast event that is a near-duplicate of a forecast event already matched (token-set Jaccard
    >= 0.6) is not matched again: its pair gets the verdict ``duplicate``. So a title repeated on
    six dates matches once, and one title can never match two hindsight events.

Key events
    :func:`grading.scoring.matching.select_key_events` with ``about`` the question's title and the
    outcome node's text: ties in magnitude x confidence break on relevance to the question, and an
    event naming only people or firms nobody else in the graph names is never a key event.

Every verdict is stored with the grade (``ReasoningScore.verdicts``); the forecast graph page
shows them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Final

import numpy as np

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
from grading.scoring.polarity import claims as _claims
from grading.scoring.polarity import shape
from grading.scoring.reasoning import ReferenceIndex, _event_text
from grading.scoring.text import duplicate_token_sets, near_duplicate, token_set

__all__ = [
    "EMBEDDED_CHARS",
    "GUARDED_MATCHER_VERSION",
    "SEMANTIC_THRESHOLD",
    "GuardedReferenceIndex",
    "embeddable_texts",
    "guarded_matcher_settings",
]

GUARDED_MATCHER_VERSION: Final = "guarded-hybrid-e5-polarity/1.1"
# Cosine of the multilingual-e5-small embeddings at which a pair the words miss still matches;
# chosen on the odd-numbered pairs of the event-pair benchmark (best F1 there, tied with 0.84; other
# events of the same story reach 0.8 to 0.92, so a lower threshold takes them for paraphrases).
SEMANTIC_THRESHOLD: Final = 0.87
# Characters of an event's text that are embedded (the title and the start of the description): the
# event is said there, and a 10,000-character description would cost the model fifty times as much.
EMBEDDED_CHARS: Final = 300
_UNDATED: Final = 10**9


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


def pair_verdict(
    forecast_text: str, reference_text: str, *, forecast_title: str | None = None, reference_title: str | None = None
) -> str:
    """``"matched"`` or the reason the guards refuse the pair (module docstring).

    The same words claim the same thing: two texts that differ only in white space match. When the
    two titles are given and are near-duplicates, they say the claim and the guards read them
    alone, so a description that adds a sentence ("Solenne Energy and Everin Aerospace boards
    agreed terms.") never turns the same claim into a refusal."""
    titled = (
        forecast_title is not None and reference_title is not None and near_duplicate(forecast_title, reference_title)
    )
    if titled:
        forecast_text, reference_text = forecast_title or "", reference_title or ""
    if _words(forecast_text) == _words(reference_text):
        return "matched"
    if not titled:
        f_len, r_len = shape(forecast_text)[0], shape(reference_text)[0]
        if f_len > 2 * r_len + 4:
            return "stuffed"
        if f_len <= 1 < r_len:
            return "too vague"
    return _verdict(forecast_text, reference_text)


@functools.lru_cache(maxsize=65536)
def _words(text: str) -> str:
    return " ".join(text.split())


@functools.lru_cache(maxsize=65536)
def _verdict(forecast_text: str, reference_text: str) -> str:
    from grading.scoring.polarity import verdict

    return verdict(_claims(forecast_text), _claims(reference_text))


def _embeddable(text: str) -> bool:
    """Whether a forecast event's text can ever be embedded, whatever the hindsight graph: stuffed
    and one-word events never are."""
    content_length, stuffed = shape(text)
    return not stuffed and content_length > 1


def embeddable_texts(
    events: Iterable[Event], settings: MatcherSettings | None = None, *, hindsight: bool = False
) -> list[str]:
    """The texts of ``events`` the matcher may embed (as it sends them to the model), for computing
    their vectors ahead of grading. Forecast events: a superset, as grading embeds only those with
    a pair inside the date window that the words miss (never stuffed or one-word events).
    Hindsight events (``hindsight=True``): every one but the outcome node and rejected events."""
    fields = (settings or guarded_matcher_settings()).text_fields
    if hindsight:
        texts = (_event_text(e, fields) for e in events if not e.is_outcome and not e.rejected)
        return [t[:EMBEDDED_CHARS] for t in dict.fromkeys(texts)]
    texts = (_event_text(e, fields) for e in events)
    return [t[:EMBEDDED_CHARS] for t in dict.fromkeys(texts) if _embeddable(t)]


class GuardedReferenceIndex(ReferenceIndex):
    """One question's hindsight events under the ``guarded`` matcher; ``embeddings`` is the cache
    the vectors come through (by default the process-wide one, without a store)."""

    def __init__(
        self,
        events: Iterable[Event],
        settings: MatcherSettings | None = None,
        *,
        question: str = "",
        embeddings: EmbeddingCache | None = None,
    ) -> None:
        every = list(events)
        super().__init__(every, settings or guarded_matcher_settings())
        outcome = " ".join(e.title for e in every if e.is_outcome and not e.rejected)
        self.key_events = tuple(select_key_events(self.events, self.settings.top_k, about=f"{question} {outcome}"))
        self._texts = [_event_text(e, self.settings.text_fields) for e in self.events]
        self._ref_vectors: FloatArray | None = None
        self._embeddings = embeddings

    def _reference_vectors(self) -> FloatArray:
        if self._ref_vectors is None:
            self._ref_vectors = embed([t[:EMBEDDED_CHARS] for t in self._texts], self._embeddings)
        return self._ref_vectors

    def similarity_rows(self, forecasts: Sequence[Sequence[Event]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(similarity, BM25-RS, token F1) of every forecast event row against every reference event.

        The similarity is the hybrid one where it reaches the threshold; elsewhere, for a pair
        inside the date window, the embeddings' cosine when it reaches ``SEMANTIC_THRESHOLD``,
        mapped linearly onto [threshold, 1] (so either route ranks on one scale). Only forecast
        events with such a pair are embedded (stuffed and one-word events never are, nor events too
        long to match any reference event), and only their first ``EMBEDDED_CHARS`` characters.
        """
        s = self.settings
        score, rs, tok = self._similarity_rows(forecasts)
        f_dates = np.array(
            [e.date.toordinal() if e.date else -_UNDATED for events in forecasts for e in events], dtype=np.int64
        )
        window = np.abs(f_dates[:, None] - self._dates[None, :]) <= s.date_window_days
        texts = [_event_text(e, s.text_fields) for events in forecasts for e in events]
        longest = max((shape(t)[0] for t in self._texts), default=0)
        rows = [
            i
            for i in np.flatnonzero((window & (score < s.threshold - SCORE_TOLERANCE)).any(axis=1)).tolist()
            if _embeddable(texts[i]) and shape(texts[i])[0] <= 2 * longest + 4
        ]
        if rows:
            cosine = embed([texts[i][:EMBEDDED_CHARS] for i in rows], self._embeddings) @ self._reference_vectors().T
            lifted = s.threshold + (cosine - SEMANTIC_THRESHOLD) / (1.0 - SEMANTIC_THRESHOLD) * (1.0 - s.threshold)
            lifted = np.where(cosine >= SEMANTIC_THRESHOLD, lifted, 0.0)
            score[rows] = np.maximum(score[rows], np.minimum(lifted, 1.0))
        return score, rs, tok

    def score_many(self, forecasts: Sequence[Sequence[Event]]) -> list[ReasoningScore]:
        n = len(self.events)
        key_ids = tuple(e.id for e in self.key_events)
        if not n or not any(forecasts):
            return [self._result(len(events), n, [], key_ids) for events in forecasts]
        score, rs, tok = self.similarity_rows(forecasts)
        results: list[ReasoningScore] = []
        start = 0
        for events in forecasts:
            stop = start + len(events)
            results.append(self._score_one(events, score[start:stop], rs[start:stop], tok[start:stop], key_ids))
            start = stop
        return results

    def _score_one(
        self,
        events: Sequence[Event],
        score: np.ndarray,
        rs: np.ndarray,
        tok: np.ndarray,
        key_ids: tuple[str, ...],
    ) -> ReasoningScore:
        s = self.settings
        f, n = len(events), len(self.events)
        matches: list[EventMatch] = []
        verdicts: list[tuple[str, str, float, str]] = []
        if f:
            f_dates = np.array([e.date.toordinal() if e.date else -_UNDATED for e in events], dtype=np.int64)
            diff = f_dates[:, None] - self._dates[None, :]
            ok = (score >= s.threshold - SCORE_TOLERANCE) & (np.abs(diff) <= s.date_window_days)
            fi, ri = np.nonzero(ok)
            if fi.size:
                order = np.lexsort((fi, ri, -score[fi, ri]))
                used_f: set[int] = set()
                used_r: set[int] = set()
                refused: set[tuple[int, int]] = set()
                texts = [_event_text(e, s.text_fields) for e in events]
                words = [token_set(t) for t in texts]
                for k in order.tolist():
                    a, r = int(fi[k]), int(ri[k])
                    if a in used_f or r in used_r:
                        continue
                    verdict = pair_verdict(
                        texts[a], self._texts[r], forecast_title=events[a].title, reference_title=self.events[r].title
                    )
                    if verdict == "matched" and any(duplicate_token_sets(words[a], words[b]) for b in used_f):
                        verdict = "duplicate"
                    if verdict != "matched":
                        if (a, r) not in refused:
                            refused.add((a, r))
                            verdicts.append((events[a].id, self.events[r].id, float(score[a, r]), verdict))
                        continue
                    used_f.add(a)
                    used_r.add(r)
                    verdicts.append((events[a].id, self.events[r].id, float(score[a, r]), "matched"))
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
