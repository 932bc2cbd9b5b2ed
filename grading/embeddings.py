"""Stored sentence embeddings of the ``guarded`` matcher: each distinct text costs the model once.

The model runs at tens of texts per second per core, and a process's in-memory cache starts empty,
so without a store every regrade (a matcher version change regrades every grade) and every new
worker process would embed the same texts again. :class:`DatabaseEmbeddingStore` backs the pure
:class:`~grading.scoring.multilingual.EmbeddingCache` with the ``TextEmbedding`` table: the cache
asks it for what it lacks (one query per batch of texts) and hands it what it embedded.
:func:`event_texts_embed` computes vectors ahead of grading (after a forecast with a graph is
stored); a failure there only means grading embeds those texts itself.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime

from django.db import connection, transaction
from django.utils import timezone

from grading.models import TextEmbedding
from grading.scoring.multilingual import EMBEDDING_MODEL, EmbeddingCache, embed
from grading.selectors import text_embeddings

__all__ = ["DatabaseEmbeddingStore", "event_texts_embed", "stored_embedding_cache", "text_embeddings_store"]

# Digests per query: one array parameter on PostgreSQL; well under SQLite's bound on query parameters.
_READ_BATCH = {"postgresql": 5000}
_READ_BATCH_DEFAULT = 500
_WRITE_BATCH = 500


@transaction.atomic
def text_embeddings_store(*, model: str, items: Sequence[tuple[str, bytes]], now: datetime | None = None) -> None:
    """Store (digest, vector) pairs of ``model``; a digest stored already (by a concurrent worker
    too) keeps its vector, which is the same one: the engine is deterministic."""
    now = now or timezone.now()
    # In digest order: two workers inserting overlapping sets then wait on each other, never in a cycle.
    TextEmbedding.objects.bulk_create(
        [TextEmbedding(model=model, digest=digest, vector=vector, created_at=now) for digest, vector in sorted(items)],
        batch_size=_WRITE_BATCH,
        ignore_conflicts=True,
    )


class DatabaseEmbeddingStore:
    """The ``EmbeddingStore`` of one model in the ``TextEmbedding`` table."""

    def __init__(self, model: str = EMBEDDING_MODEL) -> None:
        self.model = model

    def get_many(self, digests: Sequence[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        batch = _READ_BATCH.get(connection.vendor, _READ_BATCH_DEFAULT)
        for start in range(0, len(digests), batch):
            found.update(text_embeddings(model=self.model, digests=digests[start : start + batch]))
        return found

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None:
        text_embeddings_store(model=self.model, items=items)


@functools.lru_cache(maxsize=1)
def stored_embedding_cache() -> EmbeddingCache:
    """The process-wide cache backed by the database (grading runs use it)."""
    return EmbeddingCache(store=DatabaseEmbeddingStore())


def event_texts_embed(*, texts: Sequence[str]) -> int:
    """Vectors for ``texts`` (as the matcher sends them: see ``guarded_texts.embeddable_texts``) into the
    store, embedding only those not stored yet; idempotent. Returns how many the model embedded."""
    cache = stored_embedding_cache()
    before = cache.embedded
    embed(texts, cache)
    return cache.embedded - before
