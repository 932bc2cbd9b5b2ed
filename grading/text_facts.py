"""Stored parse facts of the ``guarded`` matcher: each distinct text costs the parser once.

The learned decision reads facts from a spaCy parse of each event text
(:class:`~grading.scoring.event_features.TextFacts`); a process's in-memory cache starts empty, so
without a store every new worker process (every regrade after a deploy) would parse every text
again, and the parse is then most of grading's time. :class:`DatabaseFactsStore` keeps them in the
``TextEmbedding`` table, beside the vectors: a row there is a value computed once per distinct text
by a versioned model, which is what facts are too, under their own ``model`` key
(:func:`~grading.scoring.event_features.facts_model`: the parser package, spaCy, their versions and
the facts' format), so they never mix with vectors and a new parser or format simply misses.
:func:`event_texts_parse` computes them ahead of grading, where vectors are computed.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from django.db import transaction

from grading.embeddings import DatabaseEmbeddingStore
from grading.scoring.event_features import facts_counts, facts_model, text_facts_many

__all__ = ["DatabaseFactsStore", "event_texts_parse", "stored_facts_store"]


class DatabaseFactsStore:
    """The ``FactsStore`` of this process's parser in the ``TextEmbedding`` table. Reads and writes
    run in a savepoint, so a failure (the matcher then parses) leaves the caller's transaction usable."""

    def __init__(self, model: str | None = None) -> None:
        self._rows = DatabaseEmbeddingStore(model or facts_model())

    @property
    def model(self) -> str:
        return self._rows.model

    def get_many(self, digests: Sequence[str]) -> dict[str, bytes]:
        with transaction.atomic():
            return self._rows.get_many(digests)

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None:
        self._rows.put_many(items)  # a savepoint of its own (text_embeddings_store)


@functools.lru_cache(maxsize=1)
def stored_facts_store() -> DatabaseFactsStore:
    """The process-wide store of parse facts (grading runs use it)."""
    return DatabaseFactsStore()


def event_texts_parse(*, texts: Sequence[str]) -> int:
    """Facts of ``texts`` (as the matcher parses them: see ``guarded_texts.parsed_texts``) into the store,
    parsing only those neither cached nor stored; idempotent. Returns how many were parsed."""
    before = facts_counts["parsed"]
    text_facts_many(texts, stored_facts_store())
    return facts_counts["parsed"] - before
