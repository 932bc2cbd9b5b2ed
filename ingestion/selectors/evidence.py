"""As-of evidence queries (docs/design.md, the temporal evidence gateway): the world strictly before a datetime.

Every selector here takes an aware ``as_of`` and never returns, counts, ranks, snippets or
paginates over an item dated at or after it, nor over an item without a date (structured events,
which carry a day, are ``ingestion.selectors.structured_events``). Full-text search
is one API over two engines: PostgreSQL (a generated, weighted ``tsvector`` column with a GIN
index, ``websearch_to_tsquery`` and ``ts_rank``) and SQLite (an FTS5 table kept in sync by
triggers, ``bm25()`` and ``snippet()``); both are created by migration ``0002_article_search``.

Search ranks a bounded candidate set so that its cost does not grow with the corpus: the
SEARCH_CANDIDATES most recent matches published before as_of (all of them when there are fewer,
which is the usual case for a query of two or more words). A broad query that matches more
gets the best of its 1,000 most recent matches, a total of 1,000 flagged ``total_is_exact=False``,
and pages up to that point; an older match can only be reached by narrowing the query.
"""

from __future__ import annotations

import html
import json
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from ingestion.models import Article, Market, PricePoint

SEARCH_MAX_LIMIT = 50
# A search ranks at most this many matches: the most recent ones before as_of (see
# _search_postgresql). Up to it, totals are exact; beyond it, total is this lower bound.
SEARCH_CANDIDATES = 1000
# Date windows are sized to hold this many times the matches still wanted, at the estimated density.
_WINDOW_MARGIN = 1.5
_MAX_WINDOWS = 6
SNIPPET_OPEN = "\x02"
SNIPPET_CLOSE = "\x03"
# The SQLite FTS5 objects; the migration creates them and _sqlite_ensure_fts() heals them.
FTS_TABLE = "ingestion_article_fts"
FTS_TRIGGERS = ("ingestion_article_fts_ai", "ingestion_article_fts_ad", "ingestion_article_fts_au")
# Title, summary, body weights: the same A/B/C emphasis as the PostgreSQL vector.
_BM25 = f"bm25({FTS_TABLE}, 10.0, 4.0, 1.0)"
# Snippets come from the title, the summary and this much of the body (ts_headline re-parses the
# text it is given, ten times a search).
SNIPPET_BODY_CHARS = 1500
# PostgreSQL's tsvector is capped at 1 MB; the generated column indexes this much of the body.
BODY_INDEX_CHARS = 100_000
PG_SEARCH_VECTOR_SQL = (
    "setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A') || "
    "setweight(to_tsvector('english'::regconfig, coalesce(summary, '')), 'B') || "
    f"setweight(to_tsvector('english'::regconfig, left(coalesce(body, ''), {BODY_INDEX_CHARS})), 'C')"
)


def sqlite_fts_schema() -> list[str]:
    """SQL creating the FTS5 table over ingestion_article and the triggers that keep it in sync."""
    cols = "title, summary, body"
    new = "new.id, new.title, new.summary, new.body"
    old = "old.id, old.title, old.summary, old.body"
    return [
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5({cols}, content='ingestion_article', "
        "content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')",
        f"CREATE TRIGGER IF NOT EXISTS {FTS_TRIGGERS[0]} AFTER INSERT ON ingestion_article BEGIN "
        f"INSERT INTO {FTS_TABLE}(rowid, {cols}) VALUES ({new}); END",
        f"CREATE TRIGGER IF NOT EXISTS {FTS_TRIGGERS[1]} AFTER DELETE ON ingestion_article BEGIN "
        f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {cols}) VALUES ('delete', {old}); END",
        f"CREATE TRIGGER IF NOT EXISTS {FTS_TRIGGERS[2]} AFTER UPDATE OF title, summary, body ON ingestion_article "
        f"BEGIN INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {cols}) VALUES ('delete', {old}); "
        f"INSERT INTO {FTS_TABLE}(rowid, {cols}) VALUES ({new}); END",
    ]


# --------------------------------------------------------------------------------------- helpers


class InvalidEvidenceQuery(ValueError):
    """A filter value the gateway cannot use; ``field`` names the parameter."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def require_aware(value: datetime, name: str = "as_of") -> datetime:
    """The datetime in UTC; a naive one is refused, since its instant is unknown."""
    if not isinstance(value, datetime):
        raise TypeError(f"{name} must be a datetime, not {type(value).__name__}.")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware; a naive datetime could leak or hide evidence.")
    return value.astimezone(UTC)


def visible_articles(*, as_of: datetime) -> QuerySet[Article]:
    """Articles published strictly before as_of; undated ones never."""
    as_of = require_aware(as_of)
    return Article.objects.filter(published_at__isnull=False, published_at__lt=as_of)


def last_visible_event_day(as_of: datetime) -> date:
    """Events carry a day, not an instant: a day is visible only once it has ended before as_of."""
    as_of = require_aware(as_of)
    return date.fromordinal(as_of.date().toordinal() - 1)


# --------------------------------------------------------------------------------------- articles


@dataclass(frozen=True)
class SearchResult:
    id: int
    title: str
    url: str
    source: str | None
    published_at: datetime | None  # None only in the benchmark's unfiltered baseline
    snippet: str
    score: float


@dataclass(frozen=True)
class SearchPage:
    """One page of results; total counts every visible match unless total_is_exact is False,
    in which case more than SEARCH_CANDIDATES matched and total is that lower bound."""

    total: int
    results: list[SearchResult] = field(default_factory=list)
    total_is_exact: bool = True


def _clamp_page(limit: int, offset: int) -> tuple[int, int]:
    if offset < 0:
        raise InvalidEvidenceQuery("offset", "must be zero or more.")
    if limit < 1:
        raise InvalidEvidenceQuery("limit", "must be at least 1.")
    return min(limit, SEARCH_MAX_LIMIT), offset


def _snippet_html(raw: str | None) -> str:
    """Escape the article text and turn the engine's sentinel markers into <mark> tags."""
    text = html.escape(raw or "", quote=False)
    return text.replace(SNIPPET_OPEN, "<mark>").replace(SNIPPET_CLOSE, "</mark>")


def articles_search(*, query: str, as_of: datetime, limit: int = 10, offset: int = 0) -> SearchPage:
    """Full-text search over articles published strictly before as_of, best match first.

    ``query`` uses web-search syntax on both engines: words are ANDed, ``"a phrase"``, ``or``,
    and ``-word`` to exclude. limit is capped at SEARCH_MAX_LIMIT; a negative offset is an error.
    Results are the candidates (the SEARCH_CANDIDATES most recent matches) in relevance order;
    ``total`` counts them and is exact unless ``total_is_exact`` is False (more matched).
    """
    return _articles_search(query=query, as_of=require_aware(as_of), limit=limit, offset=offset)


def _articles_search(*, query: str, as_of: datetime | None, limit: int = 10, offset: int = 0) -> SearchPage:
    """The search itself; as_of=None (no date filter at all) exists only as the benchmark's baseline."""
    limit, offset = _clamp_page(limit, offset)
    query = query.strip()
    if not query:
        return SearchPage(total=0)
    if connection.vendor == "postgresql":
        return _search_postgresql(query, as_of, limit, offset)
    if connection.vendor == "sqlite":
        return _search_sqlite(query, as_of, limit, offset)
    raise NotImplementedError(f"Full-text search is not available on {connection.vendor}.")


def _row_result(row: tuple[Any, ...], snippet: str | None) -> SearchResult:
    pk, title, url, source, published_at, score = row[:6]
    if isinstance(published_at, str):
        published_at = datetime.fromisoformat(published_at)
    if published_at is not None and published_at.tzinfo is None:
        published_at = published_at.replace(tzinfo=UTC)
    return SearchResult(
        id=pk,
        title=title,
        url=url,
        source=source,
        published_at=published_at,
        snippet=_snippet_html(snippet),
        score=float(score),
    )


def _seconds(value: float) -> timedelta:
    return timedelta(seconds=min(value, 1e12))  # far beyond any corpus; keeps timedelta in range


def _pg_match_estimate(cursor: Any, query: str) -> float:
    """The planner's estimate of how many articles match the query, from the column statistics.

    Costs one plan (no execution). Used only to size the first date window; a wrong estimate
    costs extra windows or extra heap visits, never a wrong answer.
    """
    cursor.execute(
        "EXPLAIN (FORMAT JSON) SELECT 1 FROM ingestion_article "
        "WHERE search_vector @@ websearch_to_tsquery('english', %s)",
        [query],
    )
    plan = cursor.fetchone()[0]
    if isinstance(plan, str):
        plan = json.loads(plan)
    return float(plan[0]["Plan"]["Plan Rows"])


_HEADLINE_SQL = f"""ts_headline('english',
    concat_ws(' — ', a.title, nullif(a.summary, ''), nullif(left(a.body, {SNIPPET_BODY_CHARS}), '')),
    websearch_to_tsquery('english', %(q)s),
    'StartSel=' || chr(2) || ', StopSel=' || chr(3) || ', MaxWords=35, MinWords=15, '
    || 'MaxFragments=2, FragmentDelimiter=" … "')"""
# Time bounds of the corpus, re-read at most this often: they only size the date windows, and a
# stale value costs a window more or less, never a different answer.
_BOUNDS_TTL_SECONDS = 60.0
_bounds_cache: dict[str, tuple[float, datetime | None, datetime | None]] = {}


def _pg_date_bounds(cursor: Any) -> tuple[datetime | None, datetime | None]:
    key = connection.settings_dict.get("NAME") or ""
    cached = _bounds_cache.get(key)
    if cached is not None and time.monotonic() - cached[0] < _BOUNDS_TTL_SECONDS:
        return cached[1], cached[2]
    cursor.execute("SELECT min(published_at), max(published_at) FROM ingestion_article")
    oldest, newest = cursor.fetchone()
    _bounds_cache[key] = (time.monotonic(), oldest, newest)
    return oldest, newest


def _search_postgresql(query: str, as_of: datetime | None, limit: int, offset: int) -> SearchPage:
    """Rank the SEARCH_CANDIDATES most recent matches before as_of; walk back in date windows.

    Ranking every match needs every match's tsvector, and a single GIN scan also visits the heap
    of every match just to test its date; a common word matches a large share of the corpus, so
    both grow with the corpus. Instead the search walks back from as_of in half-open date
    windows [lo, hi): each ANDs the GIN bitmap with the published_at B-tree range, so only the
    matches inside the window are visited, and only the rows kept are ranked. The first window
    is sized from the planner's match estimate, later ones from the density actually found, and
    the last has no lower bound. Windows partition time and each is read newest first, so the
    concatenation is exactly the most recent matches, in order; a wrong estimate costs time,
    never a different answer. The first window's statement also returns the page (titles,
    headlines) as it would be if no other window were needed, which is the usual case.

    as_of=None (the benchmark's baseline only) anchors the windows just after the newest article
    and lets the last window include undated articles too.
    """
    want = SEARCH_CANDIDATES + 1
    found: list[tuple[int, float]] = []
    details: dict[int, tuple[Any, ...]] = {}
    with connection.cursor() as cursor:
        oldest, newest = _pg_date_bounds(cursor)
        if oldest is None or newest is None:
            oldest = newest = datetime.now(UTC)
        hi: datetime = as_of if as_of is not None else newest + timedelta(microseconds=1)
        top = hi
        corpus_span = max((newest - oldest).total_seconds(), 1.0)
        density = max(_pg_match_estimate(cursor, query), 1.0) / corpus_span  # matches per second
        span = _seconds(_WINDOW_MARGIN * want / density)
        for attempt in range(_MAX_WINDOWS):
            lo: datetime | None = None if span >= hi - oldest or attempt == _MAX_WINDOWS - 1 else hi - span
            bounds = "a.published_at < %(hi)s"
            if lo is not None:
                bounds += " AND a.published_at >= %(lo)s"
            elif as_of is None:
                bounds = "(a.published_at < %(hi)s OR a.published_at IS NULL)"
            params: dict[str, Any] = {
                "q": query,
                "hi": hi,
                "lo": lo,
                "n": want - len(found),
                "limit": limit,
                "offset": offset,
            }
            # Only the rows kept are ranked, and the sort carries (ctid, id, date), not whole
            # vectors; the join by ctid re-reads each kept row from the heap page just visited.
            window = f"""
                w AS (SELECT a.ctid AS tid, a.id, a.published_at FROM ingestion_article a
                      WHERE a.search_vector @@ websearch_to_tsquery('english', %(q)s) AND {bounds}
                      ORDER BY a.published_at DESC, a.id DESC LIMIT %(n)s),
                r AS (SELECT w.id, w.published_at,
                             ts_rank(x.search_vector, websearch_to_tsquery('english', %(q)s)) AS score,
                             row_number() OVER (ORDER BY w.published_at DESC, w.id DESC) AS rn
                      FROM w JOIN ingestion_article x ON x.ctid = w.tid)"""
            if attempt == 0:
                # rn <= SEARCH_CANDIDATES leaves out the extra row fetched only to learn whether more exist.
                cursor.execute(
                    f"""WITH {window},
                        p AS MATERIALIZED (SELECT id, score FROM r WHERE rn <= {SEARCH_CANDIDATES}
                              ORDER BY score DESC, id DESC LIMIT %(limit)s OFFSET %(offset)s),
                        d AS MATERIALIZED (SELECT a.id, a.title, a.url, s.name, a.published_at, {_HEADLINE_SQL} AS headline
                              FROM p JOIN ingestion_article a ON a.id = p.id
                              LEFT JOIN ingestion_source s ON s.id = a.source_id)
                        SELECT r.id, r.score, d.id, d.title, d.url, d.name, d.published_at, d.headline
                        FROM r LEFT JOIN d ON d.id = r.id ORDER BY r.rn""",
                    params,
                )
                rows = cursor.fetchall()
                details = {row[0]: row[2:] for row in rows if row[2] is not None}
            else:
                cursor.execute(f"WITH {window} SELECT r.id, r.score FROM r ORDER BY r.rn", params)
                rows = cursor.fetchall()
            found.extend((row[0], float(row[1])) for row in rows)
            if len(found) >= want or lo is None:
                break
            covered = max((top - lo).total_seconds(), 1.0)
            # Re-size from what the windows so far actually held; an empty stretch only says the
            # density is below one match per covered span.
            density = len(found) / covered if found else min(density, 1.0 / covered) / 4
            span = max(2 * span, _seconds(_WINDOW_MARGIN * (want - len(found)) / density))
            hi = lo
        exact = len(found) <= SEARCH_CANDIDATES
        ranked = sorted(found[:SEARCH_CANDIDATES], key=lambda c: (-c[1], -c[0]))
        page = ranked[offset : offset + limit]
        if any(pk not in details for pk, _ in page):
            details = _pg_page_details(cursor, query, as_of, [pk for pk, _ in page])
    results = [_row_result((pk, *details[pk][1:5], score), details[pk][5]) for pk, score in page if pk in details]
    return SearchPage(total=len(ranked), total_is_exact=exact, results=results)


def _pg_page_details(cursor: Any, query: str, as_of: datetime | None, ids: list[int]) -> dict[int, tuple[Any, ...]]:
    """(id, title, url, source, published_at, headline) of the page's articles, by id."""
    # The date condition is repeated so that no id can reach the page without passing it here.
    date_filter = "AND a.published_at IS NOT NULL AND a.published_at < %(as_of)s" if as_of is not None else ""
    cursor.execute(
        f"""SELECT a.id, a.title, a.url, s.name, a.published_at, {_HEADLINE_SQL}
            FROM ingestion_article a LEFT JOIN ingestion_source s ON s.id = a.source_id
            WHERE a.id = ANY(%(ids)s)
              AND a.search_vector @@ websearch_to_tsquery('english', %(q)s) {date_filter}""",
        {"q": query, "as_of": as_of, "ids": ids},
    )
    return {row[0]: row for row in cursor.fetchall()}


_WEB_TOKEN = re.compile(r'(-?)"([^"]*)"?|(\S+)')


def fts5_query(query: str) -> str | None:
    """Translate web-search syntax into an FTS5 expression with every term quoted.

    Quoting each term means no user input is ever parsed as FTS5 syntax (columns, NEAR, ^);
    ``a b or c -d`` becomes ``"a" AND ("b" OR "c") NOT "d"``, as websearch_to_tsquery reads it.
    None when nothing searchable remains (only exclusions, or only punctuation).
    """
    groups: list[list[str]] = []
    excluded: list[str] = []
    pending_or = False
    for match in _WEB_TOKEN.finditer(query):
        negate, phrase, word = match.group(1), match.group(2), match.group(3)
        if phrase is None:
            if word.lower() == "or":
                pending_or = bool(groups)
                continue
            negate = "-" if word.startswith("-") else ""
            phrase = word.lstrip("-")
        if not any(ch.isalnum() for ch in phrase):
            continue
        term = '"' + phrase.replace('"', '""') + '"'
        if negate:
            excluded.append(term)
            pending_or = False
        elif pending_or:
            groups[-1].append(term)
            pending_or = False
        else:
            groups.append([term])
    if not groups:
        return None
    expression = " AND ".join(g[0] if len(g) == 1 else "(" + " OR ".join(g) + ")" for g in groups)
    for term in excluded:
        expression += f" NOT {term}"
    return expression


def _sqlite_ensure_fts(cursor: Any) -> None:
    """Recreate the sync triggers if a table remake dropped them, and re-index what they missed.

    Django rebuilds a SQLite table (new table, copy, drop, rename) to alter it, and dropping the
    old table drops its triggers; without this check, articles added afterwards would be unsearchable.
    """
    names = (FTS_TABLE, *FTS_TRIGGERS)
    cursor.execute(
        f"SELECT count(*) FROM sqlite_master WHERE name IN ({', '.join('%s' for _ in names)})",
        list(names),
    )
    if cursor.fetchone()[0] == len(names):
        return
    for statement in sqlite_fts_schema():
        cursor.execute(statement)
    cursor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")


def _search_sqlite(query: str, as_of: datetime | None, limit: int, offset: int) -> SearchPage:
    """The same contract as on PostgreSQL: bm25 over the SEARCH_CANDIDATES most recent matches.

    The FTS5 subquery yields matching rowids only (no ranking), the published_at index orders
    them newest first, and bm25() and snippet() then run on the kept rows alone.
    """
    expression = fts5_query(query)
    if expression is None:
        return SearchPage(total=0)
    params: list[Any] = [expression]
    date_filter = ""
    if as_of is not None:
        date_filter = "AND a.published_at IS NOT NULL AND a.published_at < %s"
        params.append(connection.ops.adapt_datetimefield_value(as_of))
    with connection.cursor() as cursor:
        _sqlite_ensure_fts(cursor)
        cursor.execute(
            f"""SELECT a.id FROM ingestion_article a
                WHERE a.id IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s) {date_filter}
                ORDER BY a.published_at DESC, a.id DESC LIMIT %s""",
            [*params, SEARCH_CANDIDATES + 1],
        )
        candidates = [row[0] for row in cursor.fetchall()]
        exact = len(candidates) <= SEARCH_CANDIDATES
        candidates = candidates[:SEARCH_CANDIDATES]
        if not candidates:
            return SearchPage(total=0)
        cursor.execute(
            f"""SELECT rowid, {_BM25} FROM {FTS_TABLE}
                WHERE {FTS_TABLE} MATCH %s AND rowid IN (SELECT value FROM json_each(%s))""",
            [expression, json.dumps(candidates)],
        )
        # bm25() is lower for better matches; the API's score is higher for better ones.
        ranked = sorted(((pk, -float(rank)) for pk, rank in cursor.fetchall()), key=lambda c: (-c[1], -c[0]))
        page = ranked[offset : offset + limit]
        if not page:
            return SearchPage(total=len(candidates), total_is_exact=exact)
        # snippet() needs the MATCH context, so it runs again restricted to the page's rows only.
        cursor.execute(
            f"""SELECT {FTS_TABLE}.rowid, a.title, a.url, s.name, a.published_at,
                       snippet({FTS_TABLE}, -1, char(2), char(3), ' … ', 24)
                FROM {FTS_TABLE} JOIN ingestion_article a ON a.id = {FTS_TABLE}.rowid
                LEFT JOIN ingestion_source s ON s.id = a.source_id
                WHERE {FTS_TABLE} MATCH %s AND {FTS_TABLE}.rowid IN (SELECT value FROM json_each(%s)) {date_filter}""",
            [expression, json.dumps([pk for pk, _ in page]), *params[1:]],
        )
        details = {r[0]: r for r in cursor.fetchall()}
    results = []
    for pk, score in page:
        if pk in details:
            _, title, url, source, published_at, snippet = details[pk]
            results.append(_row_result((pk, title, url, source, published_at, score), snippet))
    return SearchPage(total=len(candidates), total_is_exact=exact, results=results)


def article_ids_naming(*, words: list[str], start: datetime, end: datetime, limit: int) -> list[int]:
    """Ids of the articles published in [start, end] whose text holds any of ``words`` (full text,
    stemmed as search stems them), newest first, at most ``limit``: how a builder narrows a window
    too large to read whole (a million-item archive) to the items that can tell a question's story."""
    query = " or ".join(w for w in dict.fromkeys(words) if any(ch.isalnum() for ch in w))
    if not query:
        return []
    start, end = require_aware(start, "start"), require_aware(end, "end")
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                """SELECT id FROM ingestion_article
                   WHERE published_at >= %s AND published_at <= %s
                     AND search_vector @@ websearch_to_tsquery('english', %s)
                   ORDER BY published_at DESC, id DESC LIMIT %s""",
                [start, end, query, limit],
            )
        elif connection.vendor == "sqlite":
            expression = fts5_query(query)
            if expression is None:
                return []
            _sqlite_ensure_fts(cursor)
            cursor.execute(
                f"""SELECT a.id FROM ingestion_article a
                    WHERE a.id IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s)
                      AND a.published_at >= %s AND a.published_at <= %s
                    ORDER BY a.published_at DESC, a.id DESC LIMIT %s""",
                [
                    expression,
                    connection.ops.adapt_datetimefield_value(start),
                    connection.ops.adapt_datetimefield_value(end),
                    limit,
                ],
            )
        else:
            raise NotImplementedError(f"Full-text search is not available on {connection.vendor}.")
        return [row[0] for row in cursor.fetchall()]


def article_get(*, article_id: int, as_of: datetime) -> Article | None:
    """The article if it was published strictly before as_of; None otherwise, as for a missing one."""
    return visible_articles(as_of=as_of).select_related("source").filter(pk=article_id).first()


# --------------------------------------------------------------------------------------- prices


def prices_history(*, market: Market | int, as_of: datetime) -> QuerySet[PricePoint]:
    """The market's price points strictly before as_of, oldest first; never its later settlement."""
    as_of = require_aware(as_of)
    market_id = market.pk if isinstance(market, Market) else market
    return PricePoint.objects.filter(market_id=market_id, time__lt=as_of).order_by("time", "outcome", "id")
