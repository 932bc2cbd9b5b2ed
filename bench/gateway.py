"""Benchmark of the temporal evidence gateway's article search.

Builds a synthetic corpus in a fresh database (realistic title/summary/body lengths, a Zipf
vocabulary whose head is English stop words, publication dates over 3 years, 1% undated), then
runs the same random searches twice through the selector: as of a random date, and with no date
filter (the baseline measured in the same run). Prints one JSON object with p50/p95/p99 latency
of both and their ratio, the median total, and the share of searches whose total was capped at
SEARCH_CANDIDATES. --exhaustive N also times N as-of searches the way the gateway searched before
it bounded its candidates (every match ranked and counted), for a before/after comparison.

    # SQLite (a temporary file unless DATABASE_URL names one):
    .venv/bin/python bench/gateway.py --articles 200000
    # PostgreSQL (a private server given the memory a production one would have; parallel COPY,
    # then one GIN build and VACUUM ANALYZE):
    HINDSIGHT_PG_OPTIONS="-c shared_buffers=6GB -c effective_cache_size=16GB -c random_page_cost=1.1" \
      bash scripts/with-services.sh .venv/bin/python bench/gateway.py --articles 1000000
    # Build once, measure many times against a server you keep running:
    DATABASE_URL=postgres://... .venv/bin/python bench/gateway.py --articles 1000000 --load-only
    DATABASE_URL=postgres://... .venv/bin/python bench/gateway.py --articles 1000000 --keep

Articles are stored in publication order, as the pollers store them (--shuffle-dates stores them
in random date order, like an unsorted backfill, the worst case for the date windows). On
PostgreSQL the table and its indexes are loaded into shared buffers first (pg_prewarm), as on a
server that has been answering searches; the JSON reports the server's memory settings.

Goal on PostgreSQL at 1,000,000 articles: p95 <= 50 ms and as-of p95 <= 1.5x unfiltered p95.
The database must be empty or disposable: the benchmark deletes every article in it first.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "platform")]

from ingestion.text import STOPWORDS  # noqa: E402  (after the sys.path lines above)

# The project's stop words head the synthetic vocabulary (the Zipf head, as in real text); sorted so
# that the corpus is the same on every run.
STOP_WORDS = sorted(STOPWORDS)
CONSONANTS = "bcdfghjklmnprstvwz"
VOWELS = "aeiou"
START = datetime(2022, 1, 1, tzinfo=UTC)
SPAN_SECONDS = 3 * 365 * 86400


def make_vocabulary(size: int, rng: np.random.Generator) -> np.ndarray:
    """Stop words first (the Zipf head, as in real text), then distinct pronounceable words."""
    words = list(dict.fromkeys(STOP_WORDS))
    seen = set(words)
    while len(words) < size:
        batch = 4 * size
        syllables = rng.integers(2, 5, batch)
        cons = rng.integers(0, len(CONSONANTS), (batch, 5))
        vows = rng.integers(0, len(VOWELS), (batch, 4))
        tail = rng.random(batch) < 0.5
        for i in range(batch):
            word = "".join(CONSONANTS[cons[i, j]] + VOWELS[vows[i, j]] for j in range(syllables[i]))
            if tail[i]:
                word += CONSONANTS[cons[i, 4]]
            if word not in seen:
                seen.add(word)
                words.append(word)
                if len(words) == size:
                    break
    return np.array(words, dtype=object)


def zipf_probabilities(size: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1) ** exponent
    return weights / weights.sum()


CHUNK = 2000
# --shuffle-dates: store articles in random date order (an out-of-order backfill) instead of the
# publication order in which the pollers store them.
SHUFFLED_DATES = False


def generate_chunk(index: int, n: int, seed: int, vocab: np.ndarray, probs: np.ndarray) -> Any:
    """Yield (title, summary, body, published_at or None) for articles [index*CHUNK, ...) of n.

    Each chunk has its own random stream, so chunks can be generated in any order, in parallel,
    and the corpus is still the same for a given seed.
    """
    rng = np.random.default_rng([seed, index])
    chunks = chunk_count(n)
    vocab_size = len(vocab)
    m = min(CHUNK, n - index * CHUNK)
    title_len = rng.integers(6, 15, m)
    summary_len = rng.integers(20, 61, m)
    body_len = np.clip(rng.lognormal(5.4, 0.6, m).astype(int), 40, 1500)
    total = int(title_len.sum() + summary_len.sum() + body_len.sum())
    words = vocab[rng.choice(vocab_size, size=total, p=probs)]
    if SHUFFLED_DATES:
        seconds = rng.integers(0, SPAN_SECONDS, m)
    else:
        # Publication order, as the pollers store articles: chunk i holds the i-th slice of the span.
        first, last = (SPAN_SECONDS * index) // chunks, (SPAN_SECONDS * (index + 1)) // chunks
        seconds = np.sort(rng.integers(first, max(last, first + 1), m))
    undated = rng.random(m) < 0.01
    pos = 0
    for i in range(m):
        parts = []
        for length in (title_len[i], summary_len[i], body_len[i]):
            parts.append(" ".join(words[pos : pos + length]))
            pos += length
        published = None if undated[i] else START + timedelta(seconds=int(seconds[i]))
        yield parts[0].capitalize(), parts[1] + ".", parts[2] + ".", published


def chunk_count(n: int) -> int:
    return (n + CHUNK - 1) // CHUNK


def generate(n: int, seed: int, vocab_size: int) -> Any:
    """Yield (title, summary, body, published_at or None) for n articles, in order."""
    vocab = make_vocabulary(vocab_size, np.random.default_rng(seed))
    probs = zipf_probabilities(vocab_size, 1.05)
    for index in range(chunk_count(n)):
        yield from generate_chunk(index, n, seed, vocab, probs)


def make_queries(count: int, seed: int, vocab_size: int) -> list[tuple[str, datetime]]:
    """Agent-like queries: 1-3 content words (Zipf over the non-stop-word vocabulary), random dates."""
    rng = np.random.default_rng(seed + 1)
    vocab = make_vocabulary(vocab_size, np.random.default_rng(seed))
    head = len(dict.fromkeys(STOP_WORDS))
    content = vocab[head:]
    probs = zipf_probabilities(len(content), 1.05)
    queries = []
    for _ in range(count):
        k = int(rng.choice([1, 2, 3], p=[0.2, 0.45, 0.35]))
        terms = content[rng.choice(len(content), size=k, replace=False, p=probs)]
        as_of = START + timedelta(seconds=int(rng.integers(30 * 86400, SPAN_SECONDS)))
        queries.append((" ".join(terms), as_of))
    return queries


COPY_SQL = (
    "COPY ingestion_article (url, title, summary, body, author, language, published_at, fetched_at, content_hash) "
    "FROM STDIN"
)


def _copy_chunks(job: tuple[dict[str, Any], list[int], int, int, int]) -> int:
    """One loader process: generate its chunks and COPY them over its own connection."""
    import psycopg

    conn_params, indexes, n, seed, vocab_size = job
    vocab = make_vocabulary(vocab_size, np.random.default_rng(seed))
    probs = zipf_probabilities(vocab_size, 1.05)
    fetched = datetime.now(UTC)
    loaded = 0
    with psycopg.connect(**conn_params, autocommit=True) as conn, conn.cursor() as cur:
        # The table is disposable while the benchmark builds it; commit without waiting for WAL.
        cur.execute("SET synchronous_commit = off")
        for index in indexes:
            with conn.transaction(), cur.copy(COPY_SQL) as copy:
                for offset, (title, summary, body, published) in enumerate(
                    generate_chunk(index, n, seed, vocab, probs)
                ):
                    i = index * CHUNK + offset
                    copy.write_row(
                        (
                            f"https://bench.example.org/{i}",
                            title,
                            summary,
                            body,
                            "",
                            "en",
                            published,
                            fetched,
                            f"{i:064x}",
                        )
                    )
                    loaded += 1
    return loaded


def load_postgresql(n: int, seed: int, vocab_size: int, workers: int) -> None:
    """COPY the corpus in parallel (to_tsvector for the generated column is most of the cost), then
    build the GIN index in one pass and VACUUM ANALYZE, as a bulk import in production would."""
    import multiprocessing

    from django.db import connection

    connection.ensure_connection()
    params = {k: v for k, v in connection.get_connection_params().items() if k not in ("cursor_factory", "context")}
    with connection.cursor() as cur:
        cur.execute("DROP INDEX IF EXISTS ingestion_article_search_gin")
    connection.close()  # no connection may cross the fork
    chunks = list(range(chunk_count(n)))
    jobs = [(params, chunks[w::workers], n, seed, vocab_size) for w in range(workers)]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        loaded = sum(pool.map(_copy_chunks, jobs))
    assert loaded == n, (loaded, n)
    with connection.cursor() as cur:
        cur.execute("SET maintenance_work_mem = '1GB'")
        cur.execute("CREATE INDEX ingestion_article_search_gin ON ingestion_article USING gin (search_vector)")
    connection.close()
    # VACUUM cannot run in a transaction block; a fresh autocommit connection is simplest.
    import psycopg

    with psycopg.connect(**params, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE) ingestion_article")


def load_sqlite(n: int, seed: int, vocab_size: int) -> None:
    from django.db import connection

    from ingestion.selectors.evidence import FTS_TABLE, FTS_TRIGGERS, _sqlite_ensure_fts

    fetched = connection.ops.adapt_datetimefield_value(datetime.now(UTC))
    with connection.cursor() as cur:
        # One 'rebuild' after the load is much faster than indexing through the per-row triggers.
        for trigger in FTS_TRIGGERS:
            cur.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        batch: list[tuple[Any, ...]] = []
        sql = (
            "INSERT INTO ingestion_article (url, title, summary, body, author, language, published_at, "
            "fetched_at, content_hash) VALUES (%s, %s, %s, %s, '', 'en', %s, %s, %s)"
        )
        for i, (title, summary, body, published) in enumerate(generate(n, seed, vocab_size)):
            when = connection.ops.adapt_datetimefield_value(published) if published else None
            batch.append((f"https://bench.example.org/{i}", title, summary, body, when, fetched, f"{i:064x}"))
            if len(batch) == 5000:
                cur.executemany(sql, batch)
                batch.clear()
        if batch:
            cur.executemany(sql, batch)
        _sqlite_ensure_fts(cur)  # recreates the triggers and rebuilds the index
        cur.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('optimize')")
        cur.execute("ANALYZE")


def postgresql_settings() -> dict[str, Any]:
    """The server settings the figures depend on (memory for caching, planner costs)."""
    from django.db import connection

    with connection.cursor() as cur:
        names = ("shared_buffers", "effective_cache_size", "work_mem", "random_page_cost", "server_version")
        found = {}
        for name in names:
            cur.execute(f"SHOW {name}")
            found[name] = cur.fetchone()[0]
    return found


def prewarm_postgresql() -> bool:
    """Load the article table and its indexes into shared buffers (pg_prewarm), as a server that
    has been answering searches would hold them; False when the extension is not available."""
    from django.db import DatabaseError, connection, transaction

    try:
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
            cur.execute(
                "SELECT pg_prewarm(c.oid::regclass) FROM pg_class c WHERE c.oid = 'ingestion_article'::regclass "
                "OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'ingestion_article'::regclass)"
            )
    except DatabaseError:
        return False
    return True


# The search before it ranked a bounded candidate set (kept to report the before/after figures):
# every match ranked with ts_rank_cd and counted exactly.
EXHAUSTIVE_SQL = """
    WITH q AS (SELECT websearch_to_tsquery('english', %(q)s) AS tsq),
    page AS (
        SELECT a.id, ts_rank_cd(a.search_vector, q.tsq) AS score, count(*) OVER () AS total
        FROM ingestion_article a, q
        WHERE a.search_vector @@ q.tsq AND a.published_at IS NOT NULL AND a.published_at < %(as_of)s
        ORDER BY score DESC, a.id DESC LIMIT %(limit)s
    )
    SELECT a.id, page.score, page.total, ts_headline('english',
        concat_ws(' — ', a.title, nullif(a.summary, ''), nullif(left(a.body, 4000), '')), q.tsq,
        'StartSel=<mark>, StopSel=</mark>, MaxWords=35, MinWords=15, MaxFragments=2')
    FROM page JOIN ingestion_article a ON a.id = page.id, q ORDER BY page.score DESC, a.id DESC
"""


def percentiles(samples: list[float]) -> dict[str, float]:
    arr = np.array(samples) * 1000
    return {f"p{q}": round(float(np.percentile(arr, q)), 2) for q in (50, 95, 99)} | {
        "mean": round(float(arr.mean()), 2)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=int, default=20_000, help="corpus size (default 20,000)")
    parser.add_argument("--searches", type=int, default=1000, help="timed searches per mode (default 1,000)")
    parser.add_argument("--vocabulary", type=int, default=50_000, help="distinct words (default 50,000)")
    parser.add_argument("--limit", type=int, default=10, help="results per search (default 10)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=int, default=2, help="parallel loaders on PostgreSQL (default 2)")
    parser.add_argument(
        "--exhaustive", type=int, default=0, help="also time N as-of searches the old exhaustive way (PostgreSQL)"
    )
    parser.add_argument("--load-only", action="store_true", help="build the corpus and stop")
    parser.add_argument("--keep", action="store_true", help="reuse the loaded corpus if the sizes match")
    parser.add_argument(
        "--shuffle-dates",
        action="store_true",
        help="store articles in random date order (a backfill) rather than publication order",
    )
    parser.add_argument("--no-prewarm", action="store_true", help="PostgreSQL: do not load the corpus into cache first")
    args = parser.parse_args()
    global SHUFFLED_DATES
    SHUFFLED_DATES = args.shuffle_dates

    tmpdir = None
    if not os.environ.get("DATABASE_URL"):
        tmpdir = tempfile.mkdtemp(prefix="hindsight-bench-")
        os.environ["DATABASE_URL"] = f"sqlite:///{tmpdir}/bench.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    os.environ.setdefault("DJANGO_LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from ingestion.models import Article
    from ingestion.selectors.evidence import SEARCH_CANDIDATES, _articles_search, articles_search

    call_command("migrate", verbosity=0)
    vendor = connection.vendor
    build_seconds = 0.0
    if not (args.keep and Article.objects.count() == args.articles):
        if vendor == "postgresql":
            with connection.cursor() as cur:  # a bulk delete of 1M rows through the ORM takes minutes
                cur.execute("TRUNCATE ingestion_article CASCADE")
        elif Article.objects.exists():
            Article.objects.all().delete()
        started = time.perf_counter()
        if vendor == "postgresql":
            load_postgresql(args.articles, args.seed, args.vocabulary, args.workers)
        else:
            load_sqlite(args.articles, args.seed, args.vocabulary)
        build_seconds = time.perf_counter() - started

    if args.load_only:
        print(json.dumps({"database": vendor, "articles": args.articles, "build_seconds": round(build_seconds, 1)}))
        return
    server: dict[str, Any] = {}
    if vendor == "postgresql":
        server = postgresql_settings()
        server["prewarmed"] = False if args.no_prewarm else prewarm_postgresql()
    queries = make_queries(args.searches + 50, args.seed, args.vocabulary)
    for q, as_of in queries[:50]:  # warm caches so neither mode pays for the first touches
        articles_search(query=q, as_of=as_of, limit=args.limit)
        _articles_search(query=q, as_of=None, limit=args.limit)
    filtered: list[float] = []
    unfiltered: list[float] = []
    totals: list[int] = []
    totals_all: list[int] = []
    capped = 0
    for i, (q, as_of) in enumerate(queries[50:]):
        order = [True, False] if i % 2 == 0 else [False, True]
        for with_date in order:
            started = time.perf_counter()
            if with_date:
                page = articles_search(query=q, as_of=as_of, limit=args.limit)
                filtered.append(time.perf_counter() - started)
                totals.append(page.total)
                capped += not page.total_is_exact
            else:
                page = _articles_search(query=q, as_of=None, limit=args.limit)
                unfiltered.append(time.perf_counter() - started)
                totals_all.append(page.total)

    extra: dict[str, Any] = {}
    if args.exhaustive and vendor == "postgresql":
        exhaustive: list[float] = []
        matches: list[int] = []
        with connection.cursor() as cur:
            for q, as_of in queries[50 : 50 + args.exhaustive]:
                started = time.perf_counter()
                cur.execute(EXHAUSTIVE_SQL, {"q": q, "as_of": as_of, "limit": args.limit})
                rows = cur.fetchall()
                exhaustive.append(time.perf_counter() - started)
                matches.append(int(rows[0][2]) if rows else 0)
        extra = {
            "exhaustive_searches": len(exhaustive),
            "exhaustive_as_of_ms": percentiles(exhaustive),
            "exhaustive_median_matches": int(np.median(matches)),
            "exhaustive_max_matches": int(max(matches)),
        }

    as_of_stats = percentiles(filtered)
    base_stats = percentiles(unfiltered)
    print(
        json.dumps(
            {
                "benchmark": "gateway.articles_search",
                "database": vendor,
                "articles": args.articles,
                "searches": args.searches,
                "limit": args.limit,
                "build_seconds": round(build_seconds, 1),
                "candidates_cap": SEARCH_CANDIDATES,
                "median_total_as_of": int(np.median(totals)),
                "median_total_unfiltered": int(np.median(totals_all)),
                "capped_share_as_of": round(capped / len(totals), 3),
                "as_of_ms": as_of_stats,
                "unfiltered_ms": base_stats,
                "ratio_p50": round(as_of_stats["p50"] / base_stats["p50"], 2),
                "ratio_p95": round(as_of_stats["p95"] / base_stats["p95"], 2),
                "ratio_p99": round(as_of_stats["p99"] / base_stats["p99"], 2),
                "goal": "PostgreSQL at 1M: as-of p95 <= 50 ms and ratio_p95 <= 1.5",
                "stored_order": "shuffled dates" if args.shuffle_dates else "publication order",
                "server": server,
            }
            | extra
        )
    )
    if tmpdir:
        import shutil

        connection.close()
        shutil.rmtree(tmpdir, ignore_errors=True)


if __name__ == "__main__":
    main()
