"""The default event matcher, ``hybrid`` (version :data:`MATCHER_VERSION`), scoring a forecast graph's
events against the hindsight reference (WorldReasoner, Appendix B.4 and F.3). Events, settings, key
events, the match rule and the metrics are :mod:`grading.scoring.matching`'s. The module
:mod:`grading.scoring.worldreasoner` reproduces the public WorldReasoner evaluator instead (matcher
``worldreasoner``); :mod:`grading.scoring.semantic` swaps the text similarity for embeddings.

Text similarity
    ``sim(v, u) = 0.6 * BM25-RS(v, u) + 0.4 * TokF1(v, u)`` over the event text (title and
    description, normalised and stop-word filtered by :mod:`ingestion.text`, whose stop words are
    function words only: direction, negation and sequence words such as *up*, *down*, *not* and
    *after* stay in).

    * BM25 is Okapi BM25 with the forecast event ``v`` as the query and the reference events as the
      corpus (k1 = 1.5, b = 0.75, the rank_bm25 defaults), using the non-negative IDF
      ``ln(1 + (N - n + 0.5) / (n + 0.5))``. rank_bm25's ``BM25Okapi`` IDF
      ``ln((N - n + 0.5) / (n + 0.5))`` (negatives floored to 0.25 x mean IDF) becomes negative for
      terms present in most events of a small reference, which makes every score negative for
      references of one or two events (an identical event could then never match); with the
      non-negative IDF the term-frequency part is identical to ``BM25Okapi``.
    * "Reverse-scored to [0, 1]" is not defined further in the paper. By default
      (``bm25_normalisation="self"``) ``RS(v, u) = min(1, BM25(v, u) / BM25(u, u))``: the share of a
      perfect match, i.e. how much of the reference event's weighted terms the forecast event
      covers. The public evaluator divides by the best score among the reference events for the
      query instead (``"query_max"``), so a forecast event's best candidate always gets RS = 1 and
      a similarity of at least 0.6, above the 0.45 threshold, even when the two share a single word;
      the stricter default is why it is the default (see :data:`DEFAULT_RATIONALE`).
    * TokF1 is the SQuAD unigram F1 (:func:`grading.scoring.text.token_f1`).

Match
    :func:`grading.scoring.matching.is_match` (similarity threshold and date window).

Assignment
    Greedy one-to-one: all candidate pairs sorted by descending similarity (ties: reference order,
    then forecast order) and taken when neither side is used yet.

Performance: build one :class:`ReferenceIndex` per question (tokenisation, vocabulary, BM25 term
weights, count matrix) and reuse it for every forecast; per forecast the work is a few small numpy
operations on a (forecast events x reference events) matrix, and :meth:`ReferenceIndex.score_many`
does those for many forecasts at once (with results identical to one at a time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from typing import Final

import numpy as np
import numpy.typing as npt

from grading.scoring.matching import (
    DEFAULT_MATCHER_SETTINGS,
    SCORE_TOLERANCE,
    Event,
    EventMatch,
    MatcherSettings,
    ReasoningScore,
    reasoning_result,
    select_key_events,
)
from ingestion.text import SEPARATOR, STOPWORDS, token_stream, tokenize

__all__ = ["FloatArray", "ReferenceIndex", "score_reasoning", "score_with_similarity"]

# Date sentinels (ordinals are 1..3_652_059): any difference involving an undated event is huge.
_UNDATED_FORECAST: Final = -(10**9)
_UNDATED_REFERENCE: Final = 10**9
# Token codes besides vocabulary ids (>= 0) in ReferenceIndex._similarity_rows.
_UNKNOWN: Final = -1
_END_OF_TEXT: Final = -2
_STOPWORD: Final = -3
# Multiply-adds per matrix product below OpenBLAS's threading threshold (65536 x 4).
_SMALL_PRODUCT: Final = 200_000
# score_many works on chunks of at most this many cells of the (event rows x vocabulary) matrix.
_CHUNK_CELLS: Final = 1_000_000

FloatArray = npt.NDArray[np.float64]


def _event_text(event: Event, text_fields: str) -> str:
    if text_fields == "title":
        return event.title
    return f"{event.title} {event.description}"


class ReferenceIndex:
    """Everything about one question's reference events that does not depend on the forecast."""

    def __init__(self, events: Iterable[Event], settings: MatcherSettings = DEFAULT_MATCHER_SETTINGS) -> None:
        self.settings = settings
        self.events: tuple[Event, ...] = tuple(e for e in events if not e.rejected and not e.is_outcome)
        ids = [e.id for e in self.events]
        if len(set(ids)) != len(ids):
            raise ValueError("reference event ids must be unique")
        self.key_events: tuple[Event, ...] = tuple(select_key_events(self.events, settings.top_k))

        n = len(self.events)
        docs = [tokenize(_event_text(e, settings.text_fields)) for e in self.events]
        vocab: dict[str, int] = {}
        for doc in docs:
            for token in doc:
                vocab.setdefault(token, len(vocab))
        self.vocab = vocab
        counts = np.zeros((n, len(vocab)), dtype=np.float64)
        for i, doc in enumerate(docs):
            for token in doc:
                counts[i, vocab[token]] += 1.0
        self._counts_t = np.ascontiguousarray(counts.T)  # (V, N)
        self._doc_len = counts.sum(axis=1) if n else np.zeros(0)  # (N,)
        max_count = int(counts.max()) if counts.size else 0
        # [r_t >= k] for k = 1..max count, stacked: (max count x V, N), for the overlap computation.
        self._levels: FloatArray = (
            np.concatenate([self._counts_t >= k for k in range(1, max_count + 1)], axis=0).astype(np.float64)
            if max_count
            else np.zeros((0, n), dtype=np.float64)
        )
        # Token -> code for vectorised query building (the vocabulary never holds a stop word).
        self._codes: dict[str, int] = {
            **dict.fromkeys(STOPWORDS, _STOPWORD),
            SEPARATOR: _END_OF_TEXT,
            **vocab,
        }

        # Okapi BM25 term weights per (term, document), with the non-negative IDF.
        df = (counts > 0).sum(axis=0).astype(np.float64)  # (V,)
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        avgdl = float(self._doc_len.mean()) if n and self._doc_len.sum() > 0 else 1.0
        k1, b = settings.bm25_k1, settings.bm25_b
        norm = k1 * (1.0 - b + b * self._doc_len / avgdl)  # (N,)
        tf = self._counts_t
        with np.errstate(invalid="ignore", divide="ignore"):
            weights = idf[:, None] * (tf * (k1 + 1.0)) / (tf + norm[None, :])
        self._bm25_weights: FloatArray = np.nan_to_num(weights, nan=0.0)  # (V, N)
        # BM25 of each reference event's own text against itself: the score of a perfect match.
        self._self_scores: FloatArray = (self._counts_t * self._bm25_weights).sum(axis=0) if n else np.zeros(0)

        # Undated events get sentinels far apart so that no date difference involving them is in the window.
        self._dates = np.array(
            [e.date.toordinal() if e.date is not None else _UNDATED_REFERENCE for e in self.events], dtype=np.int64
        )

    def __len__(self) -> int:
        return len(self.events)

    def bm25_scores(self, text: str) -> FloatArray:
        """Raw BM25 of ``text`` (as a query) against every reference event (diagnostics, tests)."""
        q = np.zeros(len(self.vocab))
        for token in tokenize(text):
            j = self.vocab.get(token)
            if j is not None:
                q[j] += 1.0
        return np.asarray(q @ self._bm25_weights, dtype=np.float64)

    def similarity(self, forecast_events: Sequence[Event]) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(hybrid score, BM25-RS, token F1) matrices of shape (forecast events, reference events)."""
        f, n = len(forecast_events), len(self.events)
        if f == 0 or n == 0:
            zeros = np.zeros((f, n), dtype=np.float64)
            return zeros, zeros.copy(), zeros.copy()
        score, rs, tok = self._similarity_rows([forecast_events])
        return score, rs, tok

    def _similarity_rows(self, forecasts: Sequence[Sequence[Event]]) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Similarity matrices of several forecasts at once, their event rows stacked in order.

        Bit for bit what one forecast at a time gives: BM25 keeps one matrix product per forecast
        (BLAS sums in an order that depends on the shape, so a stacked product could differ in the
        last bit); the term overlap is a sum of whole numbers (exact in any order) and everything
        else is elementwise, so those run once for all rows.
        """
        n, v = len(self.events), len(self.vocab)
        if self.settings.text_fields == "title":
            texts = [e.title for events in forecasts for e in events]
        else:
            texts = [f"{e.title} {e.description}" for events in forecasts for e in events]
        r = len(texts)
        # Each token as a code: its vocabulary id, or _UNKNOWN / _STOPWORD / _END_OF_TEXT.
        stream = token_stream(texts)
        codes = np.fromiter(map(self._codes.get, stream, repeat(_UNKNOWN)), dtype=np.int64, count=len(stream))
        ends = codes == _END_OF_TEXT
        row = np.cumsum(ends) - ends  # the text (event row) each token belongs to
        q_len = np.bincount(row[codes >= _UNKNOWN], minlength=r).astype(np.float64)  # tokens after stop words
        known = codes >= 0
        k_rows = row[known]
        # Query term counts over the reference vocabulary (other terms cannot overlap or score).
        q = np.bincount(k_rows * v + codes[known], minlength=r * v).reshape(r, v).astype(np.float64)
        bm25 = np.zeros((r, n), dtype=np.float64)
        weights = self._bm25_weights
        known_before = np.concatenate(([0], np.cumsum(np.bincount(k_rows, minlength=r)))).tolist()
        start = 0
        for events in forecasts:
            end = start + len(events)
            if known_before[end] > known_before[start]:  # a forecast without known terms scores 0
                bm25[start:end] = q[start:end] @ weights
            start = end
        # Multiset overlap sum_t min(q_t, r_t) = sum_k [q_t >= k] . [r_t >= k] for integer counts, all
        # levels k in one product. Row blocks keep each product below the size at which OpenBLAS
        # starts threads (whose start-up and spinning cost more than such a product on a busy machine).
        overlap = np.zeros((r, n), dtype=np.float64)
        levels = self._levels
        depth = levels.shape[0] // max(v, 1)
        step = max(1, _SMALL_PRODUCT // max(levels.size, 1))
        for first in range(0, r if depth else 0, step):
            block = q[first : first + step]
            q_levels = np.concatenate([block >= k for k in range(1, depth + 1)], axis=1).astype(np.float64)
            overlap[first : first + step] = q_levels @ levels

        if self.settings.bm25_normalisation == "self":
            self_scores = self._self_scores[None, :]
            rs = np.minimum(bm25 / np.where(self_scores > 0.0, self_scores, 1.0), 1.0)
        else:
            row_max = bm25.max(axis=1, keepdims=True)
            rs = bm25 / np.where(row_max > 0.0, row_max, 1.0)  # rows without any shared term stay 0
        tok = 2.0 * overlap / np.maximum(q_len[:, None] + self._doc_len[None, :], 1.0)  # overlap 0 when empty
        score = self.settings.bm25_weight * rs + self.settings.token_f1_weight * tok
        return score, rs, tok

    def score(self, forecast_events: Sequence[Event]) -> ReasoningScore:
        """Match a forecast graph's events against the reference and compute the reasoning metrics."""
        return self.score_many([forecast_events])[0]

    def score_many(self, forecasts: Sequence[Sequence[Event]]) -> list[ReasoningScore]:
        """``[self.score(events) for events in forecasts]``, vectorised over many forecasts.

        Forecasts are processed in chunks whose (rows x vocabulary) query matrix stays small.
        """
        results: list[ReasoningScore] = []
        limit = max(1, _CHUNK_CELLS // max(len(self.vocab), len(self.events), 1))
        chunk: list[Sequence[Event]] = []
        rows = 0
        for events in forecasts:
            if chunk and rows + len(events) > limit:
                results.extend(self._score_chunk(chunk))
                chunk, rows = [], 0
            chunk.append(events)
            rows += len(events)
        if chunk:
            results.extend(self._score_chunk(chunk))
        return results

    def _score_chunk(self, forecasts: Sequence[Sequence[Event]]) -> list[ReasoningScore]:
        settings = self.settings
        n = len(self.events)
        matches: list[list[EventMatch]] = [[] for _ in forecasts]
        if n and any(forecasts):
            score, rs, tok = self._similarity_rows(forecasts)
            owner = np.repeat(np.arange(len(forecasts)), [len(events) for events in forecasts])
            starts = np.cumsum([0, *(len(events) for events in forecasts)])
            f_dates = np.array(
                [
                    e.date.toordinal() if e.date is not None else _UNDATED_FORECAST
                    for events in forecasts
                    for e in events
                ],
                dtype=np.int64,
            )
            diff = f_dates[:, None] - self._dates[None, :]
            ok = (score >= settings.threshold - SCORE_TOLERANCE) & (np.abs(diff) <= settings.date_window_days)
            fi, ri = np.nonzero(ok)
            if fi.size:
                cand = score[fi, ri]
                who = owner[fi]
                # Per forecast: descending similarity, then reference order, then forecast order.
                order = np.lexsort((fi, ri, -cand, who))
                current = -1
                used_f: set[int] = set()
                used_r: set[int] = set()
                for k in order.tolist():
                    a, r, w = int(fi[k]), int(ri[k]), int(who[k])
                    if w != current:
                        current = w
                        used_f, used_r = set(), set()
                    if a in used_f or r in used_r:
                        continue
                    used_f.add(a)
                    used_r.add(r)
                    matches[w].append(
                        EventMatch(
                            forecast_id=forecasts[w][a - int(starts[w])].id,
                            reference_id=self.events[r].id,
                            score=float(score[a, r]),
                            bm25_rs=float(rs[a, r]),
                            token_f1=float(tok[a, r]),
                            day_diff=int(diff[a, r]),
                        )
                    )
        key_ids = tuple(e.id for e in self.key_events)
        return [self._result(len(events), n, found, key_ids) for events, found in zip(forecasts, matches, strict=True)]

    def _result(self, f: int, n: int, matches: list[EventMatch], key_ids: tuple[str, ...]) -> ReasoningScore:
        return reasoning_result(f=f, n=n, matches=matches, key_ids=key_ids, settings=self.settings)


def score_reasoning(
    reference: Iterable[Event] | ReferenceIndex,
    forecast_events: Sequence[Event],
    settings: MatcherSettings = DEFAULT_MATCHER_SETTINGS,
) -> ReasoningScore:
    """Convenience wrapper; prefer building one :class:`ReferenceIndex` per question and calling ``score``."""
    index = reference if isinstance(reference, ReferenceIndex) else ReferenceIndex(reference, settings)
    return index.score(forecast_events)


def greedy_pairs(
    score: FloatArray,
    fi: npt.NDArray[np.intp],
    ri: npt.NDArray[np.intp],
    accept: Callable[[int, int], bool] | None = None,
) -> list[tuple[int, int]]:
    """The one-to-one assignment over the candidate pairs ``(fi[k], ri[k])``: best ``score`` first
    (ties: reference row, then forecast row), each row taken at most once; a pair that ``accept``
    refuses leaves both its rows free for another pair. In the order taken."""
    order = np.lexsort((fi, ri, -score[fi, ri]))
    used_f: set[int] = set()
    used_r: set[int] = set()
    taken: list[tuple[int, int]] = []
    for k in order.tolist():
        a, r = int(fi[k]), int(ri[k])
        if a in used_f or r in used_r or (accept is not None and not accept(a, r)):
            continue
        used_f.add(a)
        used_r.add(r)
        taken.append((a, r))
    return taken


def score_with_similarity(
    index: ReferenceIndex,
    forecast_events: Sequence[Event],
    similarity: FloatArray,
    bm25_rs: FloatArray | None = None,
    token_f1: FloatArray | None = None,
) -> ReasoningScore:
    """The reasoning metrics from a precomputed (forecast events x reference events) similarity matrix.

    Same date gate, threshold, greedy one-to-one assignment and metrics as :meth:`ReferenceIndex.score`
    (``score_with_similarity(index, events, *index.similarity(events))`` equals ``index.score(events)``),
    so another matcher (the semantic one) only supplies the matrix. ``bm25_rs`` and ``token_f1`` are
    diagnostics copied onto each match (0 when absent). Uses only the index's public attributes.
    """
    settings = index.settings
    f, n = len(forecast_events), len(index.events)
    matrices = {"similarity": similarity, "bm25_rs": bm25_rs, "token_f1": token_f1}
    for name, matrix in matrices.items():
        if matrix is not None and np.shape(matrix) != (f, n):
            raise ValueError(
                f"{name} must have shape {(f, n)} (forecast events x reference events), got {np.shape(matrix)}"
            )
    sim = np.asarray(similarity, dtype=np.float64).reshape(f, n)
    rs = np.zeros((f, n)) if bm25_rs is None else np.asarray(bm25_rs, dtype=np.float64)
    tok = np.zeros((f, n)) if token_f1 is None else np.asarray(token_f1, dtype=np.float64)
    matches: list[EventMatch] = []
    if f and n:
        f_dates = np.array(
            [e.date.toordinal() if e.date is not None else _UNDATED_FORECAST for e in forecast_events], dtype=np.int64
        )
        r_dates = np.array(
            [e.date.toordinal() if e.date is not None else _UNDATED_REFERENCE for e in index.events], dtype=np.int64
        )
        diff = f_dates[:, None] - r_dates[None, :]
        ok = (sim >= settings.threshold - SCORE_TOLERANCE) & (np.abs(diff) <= settings.date_window_days)
        fi, ri = np.nonzero(ok)
        for a, r in greedy_pairs(sim, fi, ri):
            matches.append(
                EventMatch(
                    forecast_id=forecast_events[a].id,
                    reference_id=index.events[r].id,
                    score=float(sim[a, r]),
                    bm25_rs=float(rs[a, r]),
                    token_f1=float(tok[a, r]),
                    day_diff=int(diff[a, r]),
                )
            )
    return index._result(f, n, matches, tuple(e.id for e in index.key_events))
