"""The pair features of many (forecast event, hindsight event) pairs at once, in NumPy: the rows
:func:`grading.scoring.event_features.pair_features` gives one pair at a time, to the last bit (pure;
no Django).

A question's grading decides thousands of candidate pairs; one Python call per pair costs more than
everything else the matcher does. Here every set feature is a count of shared words: the hindsight
events' words are columns of one vocabulary, each side's sets (lemmas, names, agent, patient) rows
of 0/1 matrices, and one sparse product per relation gives every pair's intersection size (whole
numbers, exact in any order). Each feature is then the same IEEE operation ``pair_features``
applies to the same operands (a division of two whole numbers, a comparison), so it is the same
float. What only a table can give exactly (WordNet's verb senses and antonyms, the natural
logarithm of the length ratio) is looked up once per distinct pair of values.

The similarities go in as the matcher rounds them (:func:`round_like_python`: what ``round`` gives,
digit for digit).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import chain, repeat
from typing import Final

import numpy as np
import numpy.typing as npt
from scipy import sparse

from grading.scoring.event_features import FEATURE_NAMES, Lexicon, TextFacts
from grading.scoring.numbers import SAME_NUMBER_TOLERANCE

__all__ = ["ReferenceFacts", "distinct_rows", "intersection_sizes", "pair_feature_matrix", "round_like_python", "sizes"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

_COLUMN: Final = {name: i for i, name in enumerate(FEATURE_NAMES)}
_MAX_COUNT: Final = 5.0
_MAX_REFERENCE_LENGTH: Final = 40.0


def round_like_python(values: FloatArray, digits: int) -> FloatArray:
    """``[round(v, digits) for v in values]`` as an array, for finite values.

    NumPy rounds ``v * 10**digits`` to an integer and divides back; that is Python's correctly
    rounded result unless the product, rounded to a float, lands within its rounding error of a
    half: those few values are rounded by Python itself."""
    scale = 10.0**digits
    scaled = values * scale
    out = np.round(values, digits)
    fraction = scaled - np.floor(scaled)
    near_half = np.abs(fraction - 0.5) <= 1e-12 * np.maximum(np.abs(scaled), 1.0)
    for i in np.flatnonzero(near_half).tolist():
        out[i] = round(float(values[i]), digits)
    return out


class _Vocabulary:
    """Words as column numbers."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def add(self, words: frozenset[str]) -> None:
        for word in words:
            self.ids.setdefault(word, len(self.ids))

    def rows(self, sets: Sequence[frozenset[str]], *, known_only: bool) -> sparse.csr_matrix:
        """One 0/1 row per set over the vocabulary (words it does not hold are left out when
        ``known_only``, else added)."""
        if not known_only:
            for words in sets:
                self.add(words)
        lengths = np.fromiter(map(len, sets), dtype=np.intp, count=len(sets))
        every = list(chain.from_iterable(sets))
        columns = np.fromiter(map(self.ids.get, every, repeat(-1)), dtype=np.intp, count=len(every))
        rows = np.repeat(np.arange(len(sets)), lengths)
        known = columns >= 0
        data = np.ones(int(known.sum()), dtype=np.float64)
        shape = (len(sets), max(len(self.ids), 1))
        return sparse.csr_matrix((data, (rows[known], columns[known])), shape=shape)


def intersection_sizes(
    forecast: Sequence[frozenset[str]], reference: Sequence[frozenset[str]], fi: IntArray, ri: IntArray
) -> FloatArray:
    """``len(forecast[fi[k]] & reference[ri[k]])`` for every k."""
    vocabulary = _Vocabulary()
    for words in reference:
        vocabulary.add(words)
    columns = vocabulary.rows(reference, known_only=True).T.toarray()
    return np.asarray(vocabulary.rows(forecast, known_only=True) @ columns)[fi, ri]


def distinct_rows(texts: Sequence[str], fi: IntArray) -> tuple[list[str], IntArray]:
    """The distinct texts among ``texts[fi[k]]`` (in the order of the rows) and each k's place
    among them: each text's facts are looked up once."""
    number: dict[str, int] = {}
    place = np.zeros(len(texts), dtype=np.intp)
    for a in np.unique(fi).tolist():
        place[a] = number.setdefault(texts[a], len(number))
    return list(number), place[fi]


def sizes(sets: Sequence[frozenset[str]]) -> FloatArray:
    return np.fromiter(map(len, sets), dtype=np.float64, count=len(sets))


def _numbers(facts: Sequence[TextFacts]) -> FloatArray:
    """Each text's numbers in a row, NaN where it has fewer than the longest."""
    width = max((len(f.numbers) for f in facts), default=0)
    out = np.full((len(facts), width), np.nan)
    for i, f in enumerate(facts):
        out[i, : len(f.numbers)] = f.numbers
    return out


class ReferenceFacts:
    """A question's hindsight events' facts, encoded once for every forecast event compared with them."""

    def __init__(self, facts: Sequence[TextFacts]) -> None:
        self.facts = list(facts)
        vocabulary = _Vocabulary()
        for f in self.facts:
            for words in (f.lemmas, f.names, f.agent, f.patient):
                vocabulary.add(words)
            vocabulary.add(frozenset((f.verb,)) - {""})
        self.vocabulary = vocabulary
        self.lemmas = vocabulary.rows([f.lemmas for f in self.facts], known_only=True).T.toarray()  # (V, N)
        self.names = vocabulary.rows([f.names for f in self.facts], known_only=True).T.toarray()
        self.agent = vocabulary.rows([f.agent for f in self.facts], known_only=True).T.toarray()
        self.patient = vocabulary.rows([f.patient for f in self.facts], known_only=True).T.toarray()
        self.lemma_sizes = sizes([f.lemmas for f in self.facts])
        self.name_sizes = sizes([f.names for f in self.facts])
        self.agent_sizes = sizes([f.agent for f in self.facts])
        self.patient_sizes = sizes([f.patient for f in self.facts])
        # The column of each event's verb (-1 without one).
        self.verb_columns = np.array([vocabulary.ids.get(f.verb, -1) if f.verb else -1 for f in self.facts], dtype=np.intp)  # fmt: skip
        self.numbers = _numbers(self.facts)


def _overlap(shared: FloatArray, a: FloatArray, b: FloatArray) -> FloatArray:
    """``len(a & b) / min(len(a), len(b)) if a and b else 0.0`` from the sizes."""
    smaller = np.minimum(a, b)
    return np.where((a > 0) & (b > 0), shared / np.where(smaller > 0, smaller, 1.0), 0.0)


def _table(keys: tuple[IntArray, IntArray], value: Callable[[int, int], float]) -> FloatArray:
    """``value(a, b)`` for each pair of whole numbers ``keys[0][k]``, ``keys[1][k]`` (none negative),
    computed once per distinct pair."""
    a, b = keys
    if not len(a):
        return np.zeros(0)
    base = int(b.max()) + 1
    distinct, inverse = np.unique(a * base + b, return_inverse=True)
    values = np.array([value(*divmod(key, base)) for key in distinct.tolist()], dtype=np.float64)
    return values[inverse]


def _number_features(f_numbers: FloatArray, r_numbers: FloatArray) -> tuple[FloatArray, ...]:
    """(numbers_both, numbers_shared, numbers_only_forecast, numbers_only_reference) of pairs whose
    numbers are given row by row (NaN-padded), with ``same_number``'s arithmetic."""
    k = f_numbers.shape[0]
    f_count = (~np.isnan(f_numbers)).sum(axis=1).astype(np.float64)
    r_count = (~np.isnan(r_numbers)).sum(axis=1).astype(np.float64)
    both = (f_count > 0) & (r_count > 0)
    shared = np.zeros(k, dtype=bool)
    f_only, r_only = f_count.copy(), r_count.copy()
    rows = np.flatnonzero(both)
    if rows.size:
        x, y = f_numbers[rows][:, :, None], r_numbers[rows][:, None, :]
        with np.errstate(invalid="ignore", over="ignore"):
            same = np.abs(x - y) <= SAME_NUMBER_TOLERANCE * np.maximum(np.abs(x), np.abs(y))
        shared[rows] = same.any(axis=(1, 2))
        f_only[rows] = (~np.isnan(f_numbers[rows]) & ~same.any(axis=2)).sum(axis=1)
        r_only[rows] = (~np.isnan(r_numbers[rows]) & ~same.any(axis=1)).sum(axis=1)
    return (
        both.astype(np.float64),
        shared.astype(np.float64),
        np.minimum(f_only, _MAX_COUNT),
        np.minimum(r_only, _MAX_COUNT),
    )


def pair_feature_matrix(
    forecast: Sequence[TextFacts],
    reference: ReferenceFacts,
    fi: IntArray,
    ri: IntArray,
    *,
    cosine: FloatArray,
    bm25_rs: FloatArray,
    token_f1: FloatArray,
    lexicon: Lexicon,
) -> FloatArray:
    """The features (:data:`FEATURE_NAMES` order, one row per pair) of the pairs
    (``forecast[fi[k]]``, ``reference.facts[ri[k]]``), the similarities given per pair: row for
    row what :func:`~grading.scoring.event_features.pair_features` gives."""
    k = len(fi)
    x = np.zeros((k, len(FEATURE_NAMES)), dtype=np.float64)
    if not k:
        return x
    fi, ri = np.asarray(fi, dtype=np.intp), np.asarray(ri, dtype=np.intp)
    ref, vocabulary = reference, reference.vocabulary
    lemmas = vocabulary.rows([f.lemmas for f in forecast], known_only=True)
    names = vocabulary.rows([f.names for f in forecast], known_only=True)
    agent = vocabulary.rows([f.agent for f in forecast], known_only=True)
    patient = vocabulary.rows([f.patient for f in forecast], known_only=True)
    shared = np.asarray(lemmas @ ref.lemmas)[fi, ri]
    names_in_reference = np.asarray(names @ ref.lemmas)[fi, ri]
    reference_names_in_forecast = np.asarray(lemmas @ ref.names)[fi, ri]
    agent_agent = np.asarray(agent @ ref.agent)[fi, ri]
    patient_patient = np.asarray(patient @ ref.patient)[fi, ri]
    agent_patient = np.asarray(agent @ ref.patient)[fi, ri]
    patient_agent = np.asarray(patient @ ref.agent)[fi, ri]

    f_lemmas = sizes([f.lemmas for f in forecast])[fi]
    f_names = sizes([f.names for f in forecast])[fi]
    f_agent = sizes([f.agent for f in forecast])[fi]
    f_patient = sizes([f.patient for f in forecast])[fi]
    r_lemmas, r_names = ref.lemma_sizes[ri], ref.name_sizes[ri]
    r_agent, r_patient = ref.agent_sizes[ri], ref.patient_sizes[ri]

    # Verbs and governing verbs as numbers ("" is 0), one numbering for both sides.
    words: dict[str, int] = {"": 0}
    f_verb = np.array([words.setdefault(f.verb, len(words)) for f in forecast], dtype=np.intp)[fi]
    f_governing = np.array([words.setdefault(f.governing, len(words)) for f in forecast], dtype=np.intp)[fi]
    r_verb = np.array([words.setdefault(f.verb, len(words)) for f in ref.facts], dtype=np.intp)[ri]
    r_governing = np.array([words.setdefault(f.governing, len(words)) for f in ref.facts], dtype=np.intp)[ri]
    spelled = list(words)
    antonyms = lexicon.antonyms

    def antonym(a: int, b: int) -> float:
        return float((spelled[a], spelled[b]) in antonyms)

    def same_sense(a: int, b: int) -> float:
        return lexicon.shares_sense(spelled[a], spelled[b])

    # A forecast verb among the hindsight event's lemmas, a hindsight verb among the forecast's.
    f_verb_column = np.array([vocabulary.ids.get(f.verb, -1) if f.verb else -1 for f in forecast], dtype=np.intp)[fi]  # fmt: skip
    verb_in_reference = np.zeros(k, dtype=bool)
    known = f_verb_column >= 0
    verb_in_reference[known] = ref.lemmas[f_verb_column[known], ri[known]] > 0
    r_verb_column = ref.verb_columns[ri]
    verb_in_forecast = np.zeros(k, dtype=bool)
    known = r_verb_column >= 0
    if known.any():
        verb_in_forecast[known] = np.asarray(lemmas[fi[known], r_verb_column[known]]).reshape(-1) > 0

    f_content = np.array([f.content for f in forecast], dtype=np.intp)[fi]
    r_content = np.array([f.content for f in ref.facts], dtype=np.intp)[ri]

    c = _COLUMN
    x[:, c["cosine"]] = cosine
    x[:, c["bm25_rs"]] = bm25_rs
    x[:, c["token_f1"]] = token_f1
    x[:, c["lemma_cover_reference"]] = np.where(r_lemmas > 0, shared / np.where(r_lemmas > 0, r_lemmas, 1.0), 0.0)
    x[:, c["lemma_cover_forecast"]] = np.where(f_lemmas > 0, shared / np.where(f_lemmas > 0, f_lemmas, 1.0), 0.0)
    x[:, c["name_cover_reference"]] = np.where(r_names > 0, names_in_reference / np.where(r_names > 0, r_names, 1.0), 1.0)  # fmt: skip
    x[:, c["names_only_forecast"]] = np.minimum(f_names - names_in_reference, _MAX_COUNT)
    x[:, c["names_only_reference"]] = np.minimum(r_names - reference_names_in_forecast, _MAX_COUNT)
    x[:, c["same_verb"]] = (f_verb > 0) & (f_verb == r_verb)
    x[:, c["verbs_share_sense"]] = _table((f_verb, r_verb), same_sense)
    x[:, c["antonym_verbs"]] = np.maximum.reduce(
        [
            _table((f_verb, r_verb), antonym),
            _table((f_verb, r_governing), antonym),
            _table((f_governing, r_verb), antonym),
        ]
    )
    x[:, c["verb_on_other_side"]] = (f_verb > 0) & (r_verb > 0) & (verb_in_reference | verb_in_forecast)
    x[:, c["governing_verb_differs"]] = f_governing != r_governing
    negated = np.array([f.negated for f in forecast], dtype=bool)[fi]
    x[:, c["negation_differs"]] = negated != np.array([f.negated for f in ref.facts], dtype=bool)[ri]
    x[:, c["agent_agreement"]] = _overlap(agent_agent, f_agent, r_agent)
    x[:, c["patient_agreement"]] = _overlap(patient_patient, f_patient, r_patient)
    x[:, c["roles_crossed"]] = np.maximum(
        _overlap(agent_patient, f_agent, r_patient), _overlap(patient_agent, f_patient, r_agent)
    )
    numbers = _number_features(_numbers(forecast)[fi], ref.numbers[ri])
    for name, column in zip(("numbers_both", "numbers_shared", "numbers_only_forecast", "numbers_only_reference"), numbers, strict=True):  # fmt: skip
        x[:, c[name]] = column
    x[:, c["forecast_function_share"]] = np.array([f.function_share for f in forecast], dtype=np.float64)[fi]
    x[:, c["length_ratio"]] = _table((f_content, r_content), lambda a, b: math.log((a + 1) / (b + 1)))
    x[:, c["forecast_has_verb"]] = np.array([f.has_verb for f in forecast], dtype=bool)[fi]
    x[:, c["reference_length"]] = np.minimum(r_content, _MAX_REFERENCE_LENGTH)
    return x
