"""Which items of the window tell one story: the offline builder's "link items" stage (pure; no Django).

Every pair of items in the question's window gets a weight from two kinds of evidence, each a
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
Links by meaning (nearest neighbours of the items' e5 vectors) were tried and left out: on the
development half of the hindsight gold set they lowered precision (0.65 to 0.58) without finding a
gold cause the names and headings had missed.

The sum is multiplied by ``1 / (1 + days apart / TIME_SCALE_DAYS)``: two reports a week apart are
more likely one thread than two a season apart, though a thread may span months.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

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
TIME_SCALE_DAYS = 30.0

Matrix: TypeAlias = sparse.csr_matrix


@dataclass(frozen=True)
class ItemGraph:
    """The window's items (``docs``, in this order) and their links: the sum and each kind."""

    docs: tuple[Doc, ...]
    proper: tuple[frozenset[str], ...]  # per item, the names it writes
    names: Matrix
    headings: Matrix
    weights: Matrix  # the decayed sum of the two

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


def decayed(matrix: Matrix, days: npt.NDArray[np.float64]) -> Matrix:
    """``matrix`` with each entry multiplied by ``1 / (1 + days apart / TIME_SCALE_DAYS)``."""
    coo = matrix.tocoo()
    gap = np.abs(days[coo.row] - days[coo.col])
    data = coo.data / (1.0 + gap / TIME_SCALE_DAYS)
    return sparse.csr_matrix((data, (coo.row, coo.col)), shape=matrix.shape)


def link_items(docs: Sequence[Doc], *, subject: frozenset[str] = frozenset()) -> ItemGraph:
    """The window's item graph (module docstring). The question's own names (``subject``) are never
    hubs: a story whose every report names its company is one story, however many reports it has."""
    ordered = tuple(docs)
    terms = item_terms(ordered)
    names = name_links(ordered, terms, subject=subject)
    headings = heading_links(ordered)
    weights = decayed((names + headings).tocsr(), day_numbers(ordered))
    proper = tuple(frozenset(t for t, w in item.items() if w == NAME_WEIGHT) for item in terms)
    return ItemGraph(docs=ordered, proper=proper, names=names, headings=headings, weights=weights)
