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

Reasons of the learned decision (:func:`refusal_reason`)
    A pair the trees refuse is shown with the first structural disagreement its features record,
    else ``different event``.

Every function is cached per text or per pair: a matcher reads each text against many.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from grading.scoring.event_features import FEATURE_NAMES
from grading.scoring.polarity import claims, shape, verdict
from grading.scoring.text import near_duplicate
from ingestion.text import STOPWORDS, tokenize

__all__ = ["embeddable", "pair_verdict", "plain_words", "reads_as_english", "refusal_reason", "same_words"]


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


def refusal_reason(features: Sequence[float]) -> str:
    """Why the learned decision refused a pair, read from its features: the first structural
    disagreement, else ``different event``."""
    x = features
    if x[_F["forecast_function_share"]] < 0.12 and x[_F["length_ratio"]] > 0.5:
        return "stuffed"
    if x[_F["negation_differs"]]:
        return "negated"
    if x[_F["antonym_verbs"]]:
        return "opposite direction"
    if x[_F["roles_crossed"]] > max(x[_F["agent_agreement"]], x[_F["patient_agreement"]]):
        return "swapped roles"
    if x[_F["numbers_both"]] and not x[_F["numbers_shared"]]:
        return "different quantity"
    if x[_F["names_only_forecast"]] and x[_F["names_only_reference"]]:
        return "other actor"
    return "different event"
