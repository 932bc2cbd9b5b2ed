"""Real reporting for the offline builder: items cut from real news archives, and replay questions
written from them (``questions.json``, in ``load_questions`` format). See PROVENANCE.md here for
where each file comes from and its licence.

:func:`load_archive` stores archive lines (JSON Lines: ``id``, ``published_at``, ``title``, ``text``,
``url``, ``source``) as articles, each under its own address (the archive's day-page URL with the
item id as fragment) and their other fields (``topic_path``, ``category``) kept as ``Article.extra``, as
``import_archive`` keeps them, so the builder sees them as the evidence store would.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from django.utils import timezone

from ingestion.canonical import content_hash
from ingestion.models import Article

HERE = Path(__file__).parent
QUESTIONS = HERE / "questions.json"
BULGARIA = HERE / "wcep_bulgaria_2026.jsonl"
NEPAL = HERE / "wcep_nepal_2026.jsonl"
BOLSONARO = HERE / "wcep_bolsonaro_2025.jsonl"
_OWN_FIELDS = frozenset({"id", "published_at", "title", "text", "body", "url", "source", "license"})
REUTERS = HERE / "reuters21578_excerpt.jsonl"
# The news archive the repository ships (Wikipedia Current events, CC BY-SA 4.0; its PROVENANCE.md).
SHIPPED_ARCHIVE = HERE.parents[2] / "ingestion/data/archives/wcep/documents.jsonl.gz"


@cache
def shipped_archive() -> tuple[dict[str, Any], ...]:
    """Every item of the shipped news archive, in its order (read once per test process)."""
    with gzip.open(SHIPPED_ARCHIVE, "rt", encoding="utf-8") as handle:
        return tuple(json.loads(line) for line in handle)


def lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def load_archive(items: Iterable[dict[str, Any]], *, start: datetime | None = None, end: datetime | None = None) -> int:
    """Store the items published in [start, end] as articles; the number stored."""
    now = timezone.now()
    batch: list[Article] = []
    for item in items:
        published = _when(item["published_at"])
        if (start and published < start) or (end and published > end):
            continue
        url = f"{item.get('url') or 'https://archive.invalid/'}#{item['id']}"
        title = item["title"]
        body = item.get("text") or item.get("body") or ""
        batch.append(
            Article(
                url=url,
                title=title,
                summary=body,
                published_at=published,
                fetched_at=now,
                content_hash=content_hash(title, body, url=url),
                guid=str(item["id"]),
                extra={k: v for k, v in item.items() if k not in _OWN_FIELDS} or None,
            )
        )
    Article.objects.bulk_create(batch, batch_size=500, ignore_conflicts=True)
    return len(batch)


def reuters_items() -> list[dict[str, Any]]:
    """The Reuters-21578 excerpt as archive items (the wire's own NEWID as id)."""
    return [
        {
            "id": f"reuters21578-{row['newid']}",
            "published_at": row["published_at"],
            "title": row["title"],
            "text": row["body"],
            "url": "https://reuters21578.invalid/reut2-000.sgm",
        }
        for row in lines(REUTERS)
    ]
