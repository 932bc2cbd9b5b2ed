"""Importing a news archive (JSON Lines, schema in ``ingestion.archives``) into the evidence store.

Each valid line becomes an ``Article`` of an archive ``Source`` (one per ``source`` name, never
polled), searchable through the evidence gateway exactly like a feed article, with its
``published_at`` as the time from which it is served. The import:

- streams: lines are read one at a time and written in batches of ``BATCH_LINES``, each batch in
  its own transaction, so memory stays flat whatever the archive's size, and an interrupted import
  keeps its finished batches (running it again completes it);
- is idempotent: an item is keyed by (source, id); one already stored with the same values is left
  alone, one whose values changed is updated in place, so importing the same file again writes
  nothing;
- rejects bad lines one by one, with their line number and reason, and goes on with the others
  (``RejectedLine`` reasons, and "duplicate id" for an id an earlier line of the file already had;
  the ids seen are kept in a temporary on-disk SQLite table, not in memory). A batch the database
  refuses is stored again line by line, so a line no check foresaw is rejected alone ("not
  storable", with the database's words) and never takes the rest of its batch with it;
- stops only where the file stops: a file that cannot be read to its end (a ``.gz`` cut short or
  damaged) has every line before the damage imported, and the report says where reading stopped
  and how much of the file was left unread (``ArchiveImportReport.stopped``).
"""

from __future__ import annotations

import hashlib
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.db import DatabaseError, reset_queries, transaction
from django.db.models import Count, Max, Min

from ingestion.archives import ArchiveItem, ArchiveReadError, RejectedLine, archive_lines, parse_line
from ingestion.canonical import normalise_for_hash
from ingestion.models import Article, Source

BATCH_LINES = 1000
# Rows per query: well under SQLite's parameter limit.
QUERY_CHUNK = 500
PROGRESS_EVERY = 10_000
# Rejected lines kept in the report (all of them are counted, and passed to ``on_reject``).
KEPT_PROBLEMS = 200
# The values an archive line decides; a stored item differing in any of them is updated in place.
COMPARED_FIELDS = ("title", "body", "url", "published_at", "license", "extra")
UPDATED_FIELDS = (*COMPARED_FIELDS, "content_hash", "fetched_at")
# An archive source is never polled; this only fills the required field.
NEVER = timedelta(days=36500)

Say = Callable[[str], None]


@dataclass
class ArchiveImportReport:
    lines: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    sources: dict[str, int] = field(default_factory=dict)
    # Where and why reading stopped before the end of the file (None: it was read to its end).
    stopped: str | None = None

    @property
    def rejected_total(self) -> int:
        return sum(self.rejected.values())

    def summary(self) -> str:
        reasons = ", ".join(f"{n} {reason}" for reason, n in self.rejected.most_common())
        text = (
            f"{self.lines:,} lines: {self.added:,} added, {self.updated:,} updated, {self.unchanged:,} unchanged, "
            f"{self.rejected_total:,} rejected" + (f" ({reasons})" if reasons else "")
        )
        return text + (f"; {self.stopped}" if self.stopped else "")


@dataclass
class _Stored:
    """What storing a batch came to, applied to the report once its transaction committed."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: list[tuple[int, str, str]] = field(default_factory=list)
    source_ids: set[int] = field(default_factory=set)


def archive_content_hash(item: ArchiveItem) -> str:
    """The article's content hash: its text and its own URL (``page#id``), so that two items of an
    archive with the same words (a story repeated on two day pages) stay two articles, and no feed
    article is ever taken for an archive item."""
    parts = ("archive", item.url, normalise_for_hash(item.title), normalise_for_hash(item.body))
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


class _SeenIds:
    """The (source, id) keys of the lines accepted so far, with their line numbers, in a temporary
    SQLite file: a million ids would cost a hundred megabytes as a Python set."""

    def __init__(self, folder: str) -> None:
        self.db = sqlite3.connect(str(Path(folder) / "seen.sqlite3"))
        self.db.execute("PRAGMA journal_mode=OFF")
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute("CREATE TABLE seen (key TEXT PRIMARY KEY, line INTEGER) WITHOUT ROWID")

    def first_line(self, key: str) -> int | None:
        row = self.db.execute("SELECT line FROM seen WHERE key = ?", (key,)).fetchone()
        return None if row is None else int(row[0])

    def add(self, key: str, line: int) -> None:
        self.db.execute("INSERT INTO seen VALUES (?, ?)", (key, line))

    def close(self) -> None:
        self.db.close()


@contextmanager
def _seen_ids() -> Iterator[_SeenIds]:
    with tempfile.TemporaryDirectory(prefix="hindsight-archive-") as folder:
        seen = _SeenIds(folder)
        try:
            yield seen
        finally:
            seen.close()


def archive_import(
    *,
    lines: Iterable[bytes | str],
    now: datetime,
    default_license: str = "",
    allow_unlicensed: bool = False,
    attribution: str = "",
    location: str = "",
    progress: Say | None = None,
    on_reject: Callable[[int, str, str], None] | None = None,
) -> ArchiveImportReport:
    """Import an archive's lines (see the module docstring). ``attribution`` (e.g. "Wikipedia
    contributors") and ``location`` (the file, for re-imports from the admin) are kept on each
    archive source with its licence and date span."""
    report = ArchiveImportReport()
    say = progress or (lambda text: None)
    sources: dict[str, Source] = {}
    touched: set[int] = set()  # the sources this import stored items of
    batch: list[tuple[int, ArchiveItem]] = []

    def reject(number: int, reason: str, detail: str) -> None:
        report.rejected[reason] += 1
        if len(report.problems) < KEPT_PROBLEMS:
            report.problems.append(f"line {number}: {detail}")
        if on_reject is not None:
            on_reject(number, reason, detail)

    def store(items: list[tuple[int, ArchiveItem]]) -> None:
        for stored in _store_batch_or_lines(items, sources=sources, now=now):
            touched.update(stored.source_ids)
            report.added += stored.added
            report.updated += stored.updated
            report.unchanged += stored.unchanged
            for rejection in stored.rejected:
                reject(*rejection)

    with _seen_ids() as seen:
        try:
            for number, raw in enumerate(lines, start=1):
                report.lines = number
                try:
                    item = parse_line(raw, now=now, default_license=default_license, allow_unlicensed=allow_unlicensed)
                except RejectedLine as exc:
                    reject(number, exc.reason, str(exc))
                else:
                    key = f"{item.source}\x00{item.external_id}"
                    first = seen.first_line(key)
                    if first is not None:
                        reject(number, "duplicate id", f"duplicate id {item.external_id!r} (first on line {first})")
                    else:
                        seen.add(key, number)
                        batch.append((number, item))
                if len(batch) >= BATCH_LINES:
                    store(batch)
                    batch = []
                    # With DEBUG on, Django keeps the last 9,000 statements: at a batch's worth of
                    # rows each, that alone would grow to gigabytes over a large archive.
                    reset_queries()
                if number % PROGRESS_EVERY == 0:
                    say(f"line {number:,}: {report.added:,} added, {report.updated:,} updated, "
                        f"{report.unchanged:,} unchanged, {report.rejected_total:,} rejected")  # fmt: skip
        except ArchiveReadError as exc:
            unread = (
                f"{exc.unread_bytes:,} bytes of the file left unread" if exc.unread_bytes else "nothing left unread"
            )
            report.stopped = f"reading stopped after line {report.lines:,}: {exc} ({unread})"
        if batch:
            store(batch)
    for source in Source.objects.filter(pk__in=touched).order_by("name", "pk"):
        report.sources[source.name] = _describe_source(
            source, report=report, now=now, attribution=attribution, location=location,
            default_license=default_license, allow_unlicensed=allow_unlicensed,
        )  # fmt: skip
    return report


def _source_for(name: str, item: ArchiveItem, sources: dict[str, Source]) -> Source:
    if name not in sources:
        source = Source.objects.filter(kind=Source.Kind.ARCHIVE, name=name).order_by("pk").first()
        if source is None:
            page = urlsplit(item.url)
            source = Source.objects.create(
                name=name,
                kind=Source.Kind.ARCHIVE,
                url=f"{page.scheme}://{page.netloc}/",
                poll_interval=NEVER,
                enabled=False,
            )
        sources[name] = source
    return sources[name]


def _store_batch_or_lines(
    batch: list[tuple[int, ArchiveItem]], *, sources: dict[str, Source], now: datetime
) -> Iterator[_Stored]:
    """Store the batch in one transaction; if the database refuses it, each line in its own, so that
    only the line it refuses is lost (rejected as "not storable", in the database's words)."""
    try:
        yield _store_batch(batch, sources=sources, now=now)
        return
    except DatabaseError:
        sources.clear()  # a source created in the rolled-back transaction is gone again
    for number, item in batch:
        try:
            yield _store_batch([(number, item)], sources=sources, now=now)
        except DatabaseError as exc:
            sources.clear()
            words = " ".join(str(exc).split())[:300]
            yield _Stored(rejected=[(number, "not storable", f"the database refused the line: {words}")])


@transaction.atomic
def _store_batch(batch: list[tuple[int, ArchiveItem]], *, sources: dict[str, Source], now: datetime) -> _Stored:
    result = _Stored()
    by_source: dict[int, list[tuple[int, ArchiveItem]]] = {}
    for number, item in batch:
        by_source.setdefault(_source_for(item.source, item, sources).pk, []).append((number, item))
    result.source_ids.update(by_source)
    for source_id, items in by_source.items():
        stored: dict[str, dict[str, Any]] = {}
        ids = [item.external_id for _, item in items]
        for start in range(0, len(ids), QUERY_CHUNK):
            # The exclude repeats the unique index's condition, so both databases use that partial
            # index; without it SQLite scanned every article of the source, once per batch.
            rows = (
                Article.objects.filter(source_id=source_id, external_id__in=ids[start : start + QUERY_CHUNK])
                .exclude(external_id="")
                .order_by()
            )
            stored.update((r["external_id"], r) for r in rows.values("pk", "external_id", *COMPARED_FIELDS))
        new: list[tuple[int, Article]] = []
        changed: list[Article] = []
        for number, item in items:
            values = _values(item)
            row = stored.get(item.external_id)
            if row is None:
                new.append(
                    (number, Article(source_id=source_id, external_id=item.external_id, fetched_at=now, **values))
                )
            elif any(row[name] != values[name] for name in COMPARED_FIELDS):
                changed.append(Article(pk=row["pk"], fetched_at=now, **values))
            else:
                result.unchanged += 1
        new = _without_taken_urls(new, reject=lambda *rejection: result.rejected.append(rejection))
        Article.objects.bulk_create([a for _, a in new], batch_size=QUERY_CHUNK)
        Article.objects.bulk_update(changed, list(UPDATED_FIELDS), batch_size=QUERY_CHUNK)
        result.added += len(new)
        result.updated += len(changed)
    return result


def _values(item: ArchiveItem) -> dict[str, Any]:
    return {
        "title": item.title,
        "body": item.body,
        "url": item.url,
        "published_at": item.published_at,
        "license": item.license,
        "extra": item.extra,
        "content_hash": archive_content_hash(item),
    }


def _without_taken_urls(
    new: list[tuple[int, Article]], *, reject: Callable[[int, str, str], None]
) -> list[tuple[int, Article]]:
    """The new articles whose URL no other article holds (another archive source's item under the
    same page and id); the others are rejected by line."""
    urls = [a.url for _, a in new]
    taken: set[str] = set()
    for start in range(0, len(urls), QUERY_CHUNK):
        chunk = urls[start : start + QUERY_CHUNK]
        taken.update(Article.objects.filter(url__in=chunk).order_by().values_list("url", flat=True))
    kept = []
    for number, article in new:
        if article.url in taken:
            reject(number, "url taken", f"another article is stored under {article.url}")
        else:
            kept.append((number, article))
    return kept


def _describe_source(
    source: Source,
    *,
    report: ArchiveImportReport,
    now: datetime,
    attribution: str,
    location: str,
    default_license: str,
    allow_unlicensed: bool,
) -> int:
    """Record the archive's span, size, licences and import settings on its source (what the site
    shows as the item's provenance, and what the admin's re-import uses), and how the import went in
    its health (what staff read on the sources page: a file read short is its error, rejected lines
    its warning); returns its item count."""
    articles = Article.objects.filter(source=source)
    span = articles.aggregate(first=Min("published_at"), last=Max("published_at"), n=Count("pk"))
    licences = sorted(set(articles.exclude(license="").values_list("license", flat=True).distinct()[:20]))
    options = dict(source.options or {})
    options.update(
        first_published_at=span["first"].isoformat() if span["first"] else None,
        last_published_at=span["last"].isoformat() if span["last"] else None,
        items=span["n"],
        licences=licences,
    )
    if attribution:
        options["attribution"] = attribution
    if location:
        options.update(location=location, default_license=default_license, allow_unlicensed=allow_unlicensed)
    warning = ""
    if report.rejected_total:
        shown = "; ".join(report.problems[:5])
        warning = f"last import: {report.summary()}. " + shown + ("; …" if report.rejected_total > 5 else "")
    Source.objects.filter(pk=source.pk).update(
        options=options,
        last_attempt_at=now,
        last_success_at=now,
        last_error=f"last import: {report.stopped}" if report.stopped else "",
        last_warning=warning,
    )
    source.options = options
    return int(span["n"])


def archive_reimport(*, source: Source, now: datetime, progress: Say | None = None) -> ArchiveImportReport:
    """Import an archive source's file again, with the settings of its last import (the admin's
    "Import again" action): what changed in the file is updated, the rest is left alone."""
    options = source.options if isinstance(source.options, dict) else {}
    location = str(options.get("location") or "")
    path = Path(location)
    if not location or not path.is_file():
        raise FileNotFoundError(
            f"{source.name}: its archive file {location or '(never recorded)'} is not on this server"
        )
    return archive_import(
        lines=archive_lines(path),
        now=now,
        default_license=str(options.get("default_license") or ""),
        allow_unlicensed=bool(options.get("allow_unlicensed")),
        attribution=str(options.get("attribution") or ""),
        location=location,
        progress=progress,
    )
