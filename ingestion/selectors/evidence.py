"""As-of evidence queries (DESIGN.md §2, Temporal gateway): the world strictly before a datetime.

Every selector here takes an aware ``as_of`` and never returns, counts, ranks, snippets or
paginates over an item dated at or after it, nor over an item without a date. Full-text search
is one API over two engines: PostgreSQL (a generated, weighted ``tsvector`` column with a GIN
index, ``websearch_to_tsquery`` and ``ts_rank_cd``) and SQLite (an FTS5 table kept in sync by
triggers, ``bm25()`` and ``snippet()``); both are created by migration ``0002_article_search``.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from django.db import connection
from django.db.models import Count, Q, QuerySet

from ingestion.models import Article, Market, PricePoint, StructuredEvent
from ingestion.reference_data import cameo_children, cameo_first_level, cameo_second_level

SEARCH_MAX_LIMIT = 50
SNIPPET_OPEN = "\x02"
SNIPPET_CLOSE = "\x03"
# The SQLite FTS5 objects; the migration creates them and _sqlite_ensure_fts() heals them.
FTS_TABLE = "ingestion_article_fts"
FTS_TRIGGERS = ("ingestion_article_fts_ai", "ingestion_article_fts_ad", "ingestion_article_fts_au")
# Title, summary, body weights: the same A/B/C emphasis as the PostgreSQL vector.
_BM25 = f"bm25({FTS_TABLE}, 10.0, 4.0, 1.0)"
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
    total: int
    results: list[SearchResult] = field(default_factory=list)


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


def _search_postgresql(query: str, as_of: datetime | None, limit: int, offset: int) -> SearchPage:
    date_filter = "AND a.published_at IS NOT NULL AND a.published_at < %(as_of)s" if as_of is not None else ""
    # Ranking every match is unavoidable, so the total rides along as a window count; the
    # expensive headline is computed for the page's rows only, in the outer query.
    sql = f"""
        WITH q AS (SELECT websearch_to_tsquery('english', %(q)s) AS tsq),
        page AS (
            SELECT a.id, ts_rank_cd(a.search_vector, q.tsq) AS score, count(*) OVER () AS total
            FROM ingestion_article a, q
            WHERE a.search_vector @@ q.tsq {date_filter}
            ORDER BY score DESC, a.id DESC
            LIMIT %(limit)s OFFSET %(offset)s
        )
        SELECT a.id, a.title, a.url, s.name, a.published_at, page.score, page.total,
               ts_headline('english',
                   concat_ws(' — ', a.title, nullif(a.summary, ''), nullif(left(a.body, 4000), '')),
                   q.tsq,
                   'StartSel=' || chr(2) || ', StopSel=' || chr(3) || ', MaxWords=35, MinWords=15, '
                   || 'MaxFragments=2, FragmentDelimiter=" … "')
        FROM page JOIN ingestion_article a ON a.id = page.id
        LEFT JOIN ingestion_source s ON s.id = a.source_id, q
        ORDER BY page.score DESC, a.id DESC
    """
    params = {"q": query, "as_of": as_of, "limit": limit, "offset": offset}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        if rows:
            total = int(rows[0][6])
        else:
            count_sql = f"""
                SELECT count(*) FROM ingestion_article a
                WHERE a.search_vector @@ websearch_to_tsquery('english', %(q)s) {date_filter}
            """
            cursor.execute(count_sql, params)
            total = int(cursor.fetchone()[0])
    return SearchPage(total=total, results=[_row_result(r, r[7]) for r in rows])


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
    expression = fts5_query(query)
    if expression is None:
        return SearchPage(total=0)
    params: list[Any] = [expression]
    date_filter = ""
    if as_of is not None:
        date_filter = "AND a.published_at IS NOT NULL AND a.published_at < %s"
        params.append(connection.ops.adapt_datetimefield_value(as_of))
    matches = f"""
        FROM {FTS_TABLE} JOIN ingestion_article a ON a.id = {FTS_TABLE}.rowid
        WHERE {FTS_TABLE} MATCH %s {date_filter}
    """
    with connection.cursor() as cursor:
        _sqlite_ensure_fts(cursor)
        # bm25() is not allowed beside a window function, so it is computed in a subquery.
        cursor.execute(
            f"""SELECT id, rank, count(*) OVER () FROM (SELECT a.id AS id, {_BM25} AS rank {matches})
                ORDER BY rank, id DESC LIMIT %s OFFSET %s""",
            [*params, limit, offset],
        )
        page = cursor.fetchall()
        if not page:
            cursor.execute(f"SELECT count(*) {matches}", params)
            return SearchPage(total=int(cursor.fetchone()[0]))
        ids = [r[0] for r in page]
        marks = ", ".join("%s" for _ in ids)
        # snippet() needs the MATCH context, so it runs again restricted to the page's rows only.
        cursor.execute(
            f"""SELECT {FTS_TABLE}.rowid, a.title, a.url, s.name, a.published_at,
                       snippet({FTS_TABLE}, -1, char(2), char(3), ' … ', 24)
                FROM {FTS_TABLE} JOIN ingestion_article a ON a.id = {FTS_TABLE}.rowid
                LEFT JOIN ingestion_source s ON s.id = a.source_id
                WHERE {FTS_TABLE} MATCH %s AND {FTS_TABLE}.rowid IN ({marks})""",
            [expression, *ids],
        )
        details = {r[0]: r for r in cursor.fetchall()}
    results = []
    for pk, rank, _total in page:
        _, title, url, source, published_at, snippet = details[pk]
        results.append(_row_result((pk, title, url, source, published_at, -rank), snippet))
    return SearchPage(total=int(page[0][2]), results=results)


def article_get(*, article_id: int, as_of: datetime) -> Article | None:
    """The article if it was published strictly before as_of; None otherwise, as for a missing one."""
    return visible_articles(as_of=as_of).select_related("source").filter(pk=article_id).first()


# --------------------------------------------------------------------------------------- events


def _relation_filter(relation: str) -> Q:
    """A first-level CAMEO code stands for itself and all its second-level children (MIRAI)."""
    code = relation.strip()
    if len(code) == 2 and code in cameo_first_level():
        return Q(relation_root=code) | Q(relation__in=sorted(cameo_children()[code]))
    if len(code) == 3 and code in cameo_second_level():
        return Q(relation=code)
    raise InvalidEvidenceQuery(
        "relation", f"{relation!r} is not a first-level (2-digit) or second-level (3-digit) CAMEO code."
    )


def _country(code: str, name: str) -> str:
    value = code.strip().upper()
    if not (len(value) == 3 and value.isalpha()):
        raise InvalidEvidenceQuery(name, f"must be an ISO 3166-1 alpha-3 code, got {code!r}.")
    return value


def events_query(
    *,
    as_of: datetime,
    subject: str | None = None,
    object: str | None = None,  # the model's (and MIRAI's) name for the tail entity
    relation: str | None = None,
    start: date | None = None,
    end: date | None = None,
) -> QuerySet[StructuredEvent]:
    """Structured events dated on days that ended before as_of, most recent first.

    subject/object are ISO alpha-3 codes; relation a CAMEO code (2-digit includes its children);
    start/end an inclusive date range, clipped to what is visible.
    """
    qs = StructuredEvent.objects.filter(date__lte=last_visible_event_day(as_of))
    if subject:
        qs = qs.filter(subject=_country(subject, "subject"))
    if object:
        qs = qs.filter(object=_country(object, "object"))
    if relation:
        qs = qs.filter(_relation_filter(relation))
    if start is not None:
        qs = qs.filter(date__gte=start)
    if end is not None:
        qs = qs.filter(date__lte=end)
    return qs.order_by("-date", "-id")


def events_count(**filters: Any) -> int:
    """Number of events matching events_query(**filters)."""
    return events_query(**filters).count()


def events_distribution_by_relation(**filters: Any) -> dict[str, int]:
    """Second-level relation code -> number of matching events, most frequent first."""
    rows = events_query(**filters).order_by().values_list("relation").annotate(n=Count("id"))
    return dict(sorted(((code, n) for code, n in rows), key=lambda kv: (-kv[1], kv[0])))


def events_distribution_by_entity(*, role: str = "both", **filters: Any) -> dict[str, int]:
    """Country code -> number of matching events it takes part in (as subject, object or both)."""
    if role not in ("head", "tail", "both"):
        raise InvalidEvidenceQuery("role", "must be 'head', 'tail' or 'both'.")
    qs = events_query(**filters).order_by()
    counts: Counter[str] = Counter()
    if role in ("head", "both"):
        counts.update(dict(qs.values_list("subject").annotate(n=Count("id"))))
    if role in ("tail", "both"):
        counts.update(dict(qs.values_list("object").annotate(n=Count("id"))))
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


# --------------------------------------------------------------------------------------- prices


def prices_history(*, market: Market | int, as_of: datetime) -> QuerySet[PricePoint]:
    """The market's price points strictly before as_of, oldest first; never its later settlement."""
    as_of = require_aware(as_of)
    market_id = market.pk if isinstance(market, Market) else market
    return PricePoint.objects.filter(market_id=market_id, time__lt=as_of).order_by("time", "outcome", "id")
