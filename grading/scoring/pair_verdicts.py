"""The verdict of the ``guarded`` matcher on one (forecast event, hindsight event) pair, from its
hand-written rules or from the features the learned decision refused it on (pure; no Django).

Rules (:func:`pair_verdict`, version 1.0's guards, :mod:`grading.scoring.polarity`)
    The same words claim the same thing: two texts that differ only in white space match. When the
    two titles are given and are near-duplicates (:func:`grading.scoring.text.near_duplicate`), they
    say the claim and the rules read them alone, so a description that adds a sentence never turns
    the same claim into a refusal. Otherwise a forecast event of more than 2 x + 4 the hindsight
    event's content words is ``stuffed``, one content word against a sentence is ``too vague``, and
    :func:`grading.scoring.polarity.verdict` names the first disagreement (``negated``, ``opposite
    direction``, ``swapped roles``, ``different quantity``, ``other actor``, ``stuffed``).

Reasons of the learned decision (:func:`refusal_reasons`, :func:`learned_verdicts`)
    A pair the trees refuse is shown with the first structural disagreement its features record,
    else ``different event``. Where the titles say the same claim (near-duplicates, a description on
    either side), the rules read the titles alone, for all candidate pairs of a question at once.

Every function is cached per text or per pair: a matcher reads each text against many.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from grading.scoring.batch_features import intersection_sizes, sizes
from grading.scoring.event_features import FEATURE_NAMES
from grading.scoring.polarity import VERDICTS, claims, shape, verdict
from grading.scoring.text import duplicate_sizes, near_duplicate, token_set
from ingestion.text import STOPWORDS, tokenize

__all__ = [
    "NO_CANDIDATE",
    "UNLESS_GUARDED",
    "embeddable",
    "learned_verdicts",
    "pair_verdict",
    "plain_words",
    "reads_as_english",
    "refusal_reasons",
    "same_words",
]

# A pair's verdict as a number: its place in VERDICTS, or one of these.
NO_CANDIDATE: Final = -1
# Accepted by the trees, unless a kept guard refuses the titles (read when the assignment reaches the pair).
UNLESS_GUARDED: Final = -2


def pair_verdict(
    forecast_text: str, reference_text: str, *, forecast_title: str | None = None, reference_title: str | None = None
) -> str:
    """``"matched"`` or the reason the rules refuse the pair (module docstring)."""
    titled = (
        forecast_title is not None and reference_title is not None and near_duplicate(forecast_title, reference_title)
    )
    if titled:
        forecast_text, reference_text = forecast_title or "", reference_title or ""
    if same_words(forecast_text, reference_text):
        return "matched"
    if not titled:
        f_len, r_len = shape(forecast_text)[0], shape(reference_text)[0]
        if f_len > 2 * r_len + 4:
            return "stuffed"
        if f_len <= 1 < r_len:
            return "too vague"
    return _verdict(forecast_text, reference_text)


def same_words(a: str, b: str) -> bool:
    """Whether two texts are the same words, whatever the white space between them."""
    return plain_words(a) == plain_words(b)


@functools.lru_cache(maxsize=65536)
def plain_words(text: str) -> str:
    """``text``'s words joined by single spaces."""
    return " ".join(text.split())


@functools.lru_cache(maxsize=65536)
def _verdict(forecast_text: str, reference_text: str) -> str:
    return verdict(claims(forecast_text), claims(reference_text))


def embeddable(text: str) -> bool:
    """Whether the rules may ever match a forecast event's text by its embedding, whatever the
    hindsight graph: stuffed and one-word events never are."""
    content_length, stuffed = shape(text)
    return not stuffed and content_length > 1


@functools.lru_cache(maxsize=65536)
def reads_as_english(text: str) -> bool:
    """Whether a text reads as an English sentence: it has an English function word (or is too
    short to tell). The learned decision reads an English parse; other texts get the rules."""
    tokens = tokenize(text, drop_stopwords=False)
    return len(tokens) < 4 or any(t in STOPWORDS for t in tokens)


_F = {name: i for i, name in enumerate(FEATURE_NAMES)}
# The refusals of the learned decision, in the order they are read, as numbers of VERDICTS.
_REFUSALS: Final = tuple(
    VERDICTS.index(v) for v in ("stuffed", "negated", "opposite direction", "swapped roles", "different quantity", "other actor")
)  # fmt: skip
_DIFFERENT_EVENT: Final = VERDICTS.index("different event")


def refusal_reasons(features: npt.NDArray[np.float64]) -> npt.NDArray[np.int8]:
    """Why the learned decision refused each pair (a row of ``features``), as the number of a
    verdict in :data:`grading.scoring.polarity.VERDICTS`: the first structural disagreement its
    features record, else ``different event``."""
    x = np.asarray(features, dtype=np.float64).reshape(-1, len(FEATURE_NAMES))

    def column(name: str) -> npt.NDArray[np.float64]:
        return x[:, _F[name]]

    found = [
        (column("forecast_function_share") < 0.12) & (column("length_ratio") > 0.5),
        column("negation_differs") != 0,
        column("antonym_verbs") != 0,
        column("roles_crossed") > np.maximum(column("agent_agreement"), column("patient_agreement")),
        (column("numbers_both") != 0) & (column("numbers_shared") == 0),
        (column("names_only_forecast") != 0) & (column("names_only_reference") != 0),
    ]
    return np.select(found, list(_REFUSALS), _DIFFERENT_EVENT).astype(np.int8)


def learned_verdicts(
    probability: npt.NDArray[np.float64],
    features: npt.NDArray[np.float64],
    threshold: float,
    *,
    pairs: tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]],
    forecast_titles: Sequence[str],
    reference_titles: Sequence[str],
    described: npt.NDArray[np.bool_],
    guarded: bool,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """(probability, verdict) of each candidate pair (forecast row ``pairs[0][k]``, reference column
    ``pairs[1][k]``) from the trees' ``probability`` and the ``features`` they read: the number of its
    verdict in ``VERDICTS``, or :data:`UNLESS_GUARDED` where the trees accept it and ``guarded``.
    Where a description is on either side (``described``) and the titles are near-duplicates, the
    rules read the titles alone, and a match is raised to ``threshold``."""
    fi, ri = pairs
    p = probability.copy()
    accepted = p >= threshold
    verdicts = np.where(accepted, UNLESS_GUARDED if guarded else VERDICTS.index("matched"), NO_CANDIDATE)
    verdicts[~accepted] = refusal_reasons(features[~accepted])
    f_words = [token_set(title) for title in forecast_titles]
    r_words = [token_set(title) for title in reference_titles]
    shared = intersection_sizes(f_words, r_words, fi, ri)
    titled = described & duplicate_sizes(shared, sizes(f_words)[fi], sizes(r_words)[ri])
    for k in np.flatnonzero(titled).tolist():
        said = pair_verdict(forecast_titles[fi[k]], reference_titles[ri[k]])
        verdicts[k] = VERDICTS.index(said)
        if said == "matched":
            p[k] = max(p[k], threshold)
    return p, verdicts
