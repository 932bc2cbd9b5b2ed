"""Which items of the window tell one story: the offline builder's "link items" stage (pure; no Django).

Every pair of items in the question's window gets a weight from three kinds of evidence, each a
sparse symmetric matrix over the items (Shahaf and Guestrin's document graph, "Connecting the Dots
Between News Articles", KDD 2010; topic detection and tracking):

* **Names and terms** (:func:`name_links`): the cosine of the two items' term vectors, each term
  weighted by its rarity in the window (IDF) and by its kind: a name (a word of a capitalised phrase
  that the window never writes in lower case: *Oli*, *Kathmandu*, *Karki*) weighs 1, another word of
  the headline and lead ``TERM_WEIGHT``. A term that more than ``HUB_SHARE`` of the window's items
  (at least ``HUB_MIN``) write is a *hub* (a superpower, a head of state, "court"): it would join
  every item to every other, so it links each item only to its ``HUB_NEIGHBOURS`` nearest items in
  time on either side that write it (a degree cap) and its weight stays what its low IDF gives.
* **Story headings** (:func:`heading_links`): items filed under the same heading of the archive
  (Wikipedia's Current events portal nests items under a linked story article, kept as
  ``topic_path``): each linked to its ``HEADING_NEIGHBOURS`` nearest items in time under that
  heading, with weight ``HEADING_WEIGHT`` (half for a hub heading such as "Gaza war").
* **Meaning** (:func:`meaning_links`): items whose e5 sentence vectors (multilingual-e5-small, the
  project's embedding model) are among each other's ``MEANING_NEIGHBOURS`` nearest with a cosine of
  at least ``MEANING_MIN``, weight rising linearly from 0 there to ``MEANING_WEIGHT`` at 1. The
  nearest neighbours come from faiss (exact inner-product search; an HNSW index beyond
  ``EXACT_LIMIT`` items). Items without a stored vector take no part.

The sum is multiplied by ``1 / (1 + days apart / TIME_SCALE_DAYS)``: two reports a week apart are
more likely one thread than two a season apart, though a thread may span months.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
from scipy import sparse

from grading.builders.relevance import QUESTION_WORDS, Doc

NAME_WEIGHT = 1.0
TERM_WEIGHT = 0.35
HUB_SHARE = 0.01
HUB_MIN = 25
HEADING_WEIGHT = 0.6
HEADING_NEIGHBOURS = 3
MEANING_NEIGHBOURS = 8
MEANING_MIN = 0.88
MEANING_WEIGHT = 0.15
MEANING_DAYS = 14
EXACT_LIMIT = 50_000
TIME_SCALE_DAYS = 30.0

Matrix: TypeAlias = sparse.csr_matrix
Vector: TypeAlias = npt.NDArray[np.float32]


@dataclass(frozen=True)
class ItemGraph:
    """The window's items (``docs``, in this order) and their links: the sum and each kind."""

    docs: tuple[Doc, ...]
    proper: tuple[frozenset[str], ...]  # per item, the names it writes
    names: Matrix
    headings: Matrix
    meaning: Matrix
    weights: Matrix  # the decayed sum of the three

    @property
    def index(self) -> dict[int, int]:
        return {d.id: i for i, d in enumerate(self.docs)}


def day_numbers(docs: Sequence[Doc]) -> npt.NDArray[np.float64]:
    return np.array([d.published_at.timestamp() / 86400.0 for d in docs], dtype=np.float64)


def hub_limit(count: int) -> int:
    """Items that may write a term before it counts as a hub."""
    return max(HUB_MIN, math.ceil(HUB_SHARE * count))


def item_terms(docs: Sequence[Doc]) -> list[dict[str, float]]:
    """Per item, its terms with their kind's weight: names (``NAME_WEIGHT``) and the other words of
    its headline and lead (``TERM_WEIGHT``)."""
    generic = frozenset().union(*(d.lowercase for d in docs)) if docs else frozenset()
    out: list[dict[str, float]] = []
    for doc in docs:
        terms: dict[str, float] = {}
        for stem in doc.head:
            if _is_term(stem):
                terms[stem] = TERM_WEIGHT
        for phrase in doc.entities:
            for stem in phrase:
                if _is_term(stem) and stem not in generic:
                    terms[stem] = NAME_WEIGHT
        out.append(terms)
    return out


def _is_term(stem: str) -> bool:
    return len(stem) > 2 and stem not in QUESTION_WORDS and not stem.isdigit()


def _symmetric(rows: list[int], cols: list[int], values: list[float], n: int) -> Matrix:
    """The matrix with ``values`` at (row, col) and (col, row), duplicates summed, no diagonal."""
    if not rows:
        return sparse.csr_matrix((n, n), dtype=np.float64)
    r = np.asarray(rows + cols)
    c = np.asarray(cols + rows)
    v = np.asarray(values + values, dtype=np.float64)
    matrix = sparse.coo_matrix((v, (r, c)), shape=(n, n)).tocsr()
    matrix.setdiag(0)
    matrix.eliminate_zeros()
    return matrix


def _time_neighbours(members: Sequence[int], days: npt.NDArray[np.float64], k: int) -> list[tuple[int, int]]:
    """Pairs of each member with its ``k`` next members in time (so each has up to 2k neighbours)."""
    ordered = sorted(members, key=lambda i: (days[i], i))
    return [(a, b) for n, a in enumerate(ordered) for b in ordered[n + 1 : n + 1 + k]]


def name_links(
    docs: Sequence[Doc], terms: Sequence[dict[str, float]] | None = None, *, subject: frozenset[str] = frozenset()
) -> Matrix:
    """Cosine of IDF-weighted name-and-term vectors over the terms that are not hubs."""
    n = len(docs)
    terms = item_terms(docs) if terms is None else terms
    postings: dict[str, list[int]] = defaultdict(list)
    for i, item in enumerate(terms):
        for stem in item:
            postings[stem].append(i)
    idf = {t: math.log(n / len(p)) if n > len(p) else 0.0 for t, p in postings.items()}
    norms = np.array(
        [math.sqrt(sum((w * idf[t]) ** 2 for t, w in item.items())) or 1.0 for item in terms], dtype=np.float64
    )
    limit = hub_limit(n)
    rare_rows: list[int] = []
    rare_cols: list[int] = []
    rare_values: list[float] = []
    vocabulary: dict[str, int] = {}
    for term, members in postings.items():
        if len(members) < 2 or idf[term] <= 0:
            continue
        if len(members) > limit and term not in subject:
            continue
        column = vocabulary.setdefault(term, len(vocabulary))
        for i in members:
            rare_rows.append(i)
            rare_cols.append(column)
            rare_values.append(terms[i][term] * idf[term] / norms[i])
    if not vocabulary:
        return sparse.csr_matrix((n, n), dtype=np.float64)
    x = sparse.csr_matrix((rare_values, (rare_rows, rare_cols)), shape=(n, len(vocabulary)), dtype=np.float64)
    shared = (x @ x.T).tocsr()
    shared.setdiag(0)
    shared.eliminate_zeros()
    return shared


def heading_links(docs: Sequence[Doc]) -> Matrix:
    """Items under one story heading, each linked to its nearest items in time under it."""
    n = len(docs)
    members: dict[str, list[int]] = defaultdict(list)
    for i, doc in enumerate(docs):
        for heading in dict.fromkeys(doc.topics):
            members[heading].append(i)
    limit = hub_limit(n)
    days = day_numbers(docs)
    rows: list[int] = []
    cols: list[int] = []
    values: list[float] = []
    for items in members.values():
        if len(items) < 2:
            continue
        weight = HEADING_WEIGHT if len(items) <= limit else HEADING_WEIGHT / 2
        for a, b in _time_neighbours(items, days, HEADING_NEIGHBOURS):
            rows.append(a)
            cols.append(b)
            values.append(weight)
    matrix = _symmetric(rows, cols, values, n)
    # Two headings shared count once.
    matrix.data = np.minimum(matrix.data, HEADING_WEIGHT)
    return matrix


def nearest_neighbours(vectors: Vector, k: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """Each row's ``k`` nearest rows by inner product (itself excluded): (similarities, indices),
    -1 where there are fewer. faiss: exact search, or HNSW beyond ``EXACT_LIMIT`` rows."""
    import faiss  # imported on first use: a build without vectors never loads it

    count, dimensions = vectors.shape
    k = min(k + 1, count)
    data = np.ascontiguousarray(vectors, dtype=np.float32)
    index: Any
    if count > EXACT_LIMIT:
        index = faiss.IndexHNSWFlat(dimensions, 32, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efSearch = 64
    else:
        index = faiss.IndexFlatIP(dimensions)
    index.add(data)
    similarities, indices = index.search(data, k)
    return similarities, indices


def meaning_links(docs: Sequence[Doc], vectors: Mapping[int, Vector]) -> Matrix:
    """Mutual-free nearest neighbours by e5 cosine (``MEANING_NEIGHBOURS``, at least ``MEANING_MIN``)."""
    n = len(docs)
    having = [i for i, d in enumerate(docs) if d.id in vectors]
    if len(having) < 2:
        return sparse.csr_matrix((n, n), dtype=np.float64)
    stacked = np.stack([np.asarray(vectors[docs[i].id], dtype=np.float32) for i in having])
    similarities, indices = nearest_neighbours(stacked, MEANING_NEIGHBOURS)
    days = day_numbers(docs)
    rows: list[int] = []
    cols: list[int] = []
    values: list[float] = []
    for a, (sims, found) in enumerate(zip(similarities, indices, strict=True)):
        for similarity, b in zip(sims, found, strict=True):
            if b < 0 or b == a or similarity < MEANING_MIN:
                continue
            if abs(days[having[a]] - days[having[int(b)]]) > MEANING_DAYS:
                continue
            rows.append(having[a])
            cols.append(having[int(b)])
            values.append(MEANING_WEIGHT * (float(similarity) - MEANING_MIN) / (1 - MEANING_MIN))
    matrix = _symmetric(rows, cols, values, n)
    # A pair found from both ends counts once.
    matrix.data = np.minimum(matrix.data, MEANING_WEIGHT)
    return matrix


def decayed(matrix: Matrix, days: npt.NDArray[np.float64]) -> Matrix:
    """``matrix`` with each entry multiplied by ``1 / (1 + days apart / TIME_SCALE_DAYS)``."""
    coo = matrix.tocoo()
    gap = np.abs(days[coo.row] - days[coo.col])
    data = coo.data / (1.0 + gap / TIME_SCALE_DAYS)
    return sparse.csr_matrix((data, (coo.row, coo.col)), shape=matrix.shape)


def link_items(
    docs: Sequence[Doc], *, vectors: Mapping[int, Vector] | None = None, subject: frozenset[str] = frozenset()
) -> ItemGraph:
    """The window's item graph (module docstring). The question's own names (``subject``) are never
    hubs: a story whose every report names its company is one story, however many reports it has."""
    ordered = tuple(docs)
    terms = item_terms(ordered)
    names = name_links(ordered, terms, subject=subject)
    headings = heading_links(ordered)
    meaning = meaning_links(ordered, vectors or {})
    weights = decayed((names + headings + meaning).tocsr(), day_numbers(ordered))
    proper = tuple(frozenset(t for t, w in item.items() if w == NAME_WEIGHT) for item in terms)
    return ItemGraph(docs=ordered, proper=proper, names=names, headings=headings, meaning=meaning, weights=weights)
