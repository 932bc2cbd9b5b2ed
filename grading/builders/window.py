"""The offline builder's one read of the database: the question's window as plain data ("read the window").

Everything after this module works on what :func:`read_window` returns: the articles published
from the history's first day (:func:`history_start`) to the resolution as :class:`Doc` records
(headline, first sentence, the first ``BODY_CHARS`` of summary and body, host, time, the archive's
story headings), and the articles staff added to earlier graphs of the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from urllib.parse import urlsplit

from django.db.models.functions import Substr

from grading.builders.common import BuildContext, BuildError
from grading.builders.relevance import QUESTION_WORDS, Doc, stem_word
from grading.models import HindsightEvent
from ingestion.canonical import strip_tags
from ingestion.models import Article
from ingestion.selectors.evidence import article_ids_naming
from ingestion.text import STOPWORDS

BODY_CHARS = 1000
LEAD_CHARS = 300
# How far before the question opened the builder follows the story's causes (an early election's
# protests and resignations come months before the vote).
HISTORY_DAYS = 180
HISTORY_MAX_ARTICLES = 20_000
# A window holding more articles than this (a million-item archive) is first narrowed by full-text
# search to the WINDOW_CANDIDATES newest articles naming any of the question's words.
WINDOW_MAX_ARTICLES = 20_000
WINDOW_CANDIDATES = 5_000


@dataclass(frozen=True)
class Window:
    """What the builder reads: the window's articles and the articles staff added."""

    start: date
    docs: list[Doc]
    pinned: frozenset[int] = frozenset()


# Where a sentence does not end although a full stop follows: an initial ("J.", "L.K."), an
# initialism ("U.S."), or a common abbreviation of a name or title ("Co.", "Inc.", "Mr.", "St.").
_NOT_AN_END = re.compile(
    r"(?:\b[A-Z]\.(?:[A-Z]\.)*|\b(?:Co|Corp|Inc|Ltd|Mr|Mrs|Ms|Dr|Sr|Jr|St|Mt|Gen|Gov|Sen|Rep|Lt|Col|Sgt|"
    r"Capt|Prof|No|Vol|vs|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.)$"
)


def first_sentence(text: str) -> str:
    """The first sentence of ``text``: up to the first full stop, question or exclamation mark that
    is followed by a space (or the end) and does not close an initial or an abbreviation."""
    for match in re.finditer(r"[.!?](?=\s|$)", text):
        if match.group(0) == "." and _NOT_AN_END.search(text[: match.end()]):
            continue
        return text[: match.end()]
    return text


def lead_of(summary: str, body: str) -> str:
    return first_sentence(strip_tags(summary or body or ""))[:LEAD_CHARS]


def _host(url: str) -> str:
    """The outlet of a report: its URL's host (the URL itself when it has none or cannot be read)."""
    try:
        return urlsplit(url).hostname or url
    except ValueError:  # "http://[not an address]/"
        return url


def article_doc(
    *,
    id: int,
    title: str,
    summary: str,
    body: str,
    url: str,
    published_at: datetime,
    topics: Sequence[str] = (),
) -> Doc:
    """An article as the builder reads it: its headline without markup, its lead sentence, the start
    of its text, its outlet and the archive's story headings."""
    return Doc.make(
        id=id,
        title=strip_tags(title)[:500],
        lead=lead_of(summary, body),
        body=f"{summary} {body}"[:BODY_CHARS],
        host=_host(url),
        published_at=published_at,
        topics=topics,
    )


def history_start(ctx: BuildContext) -> date:
    """The first day the builder reads: ``HISTORY_DAYS`` before the question opened (or the
    lookback's first day, when earlier), so the causes that led to the question are in reach;
    the lookback's first day alone when that history holds more than ``HISTORY_MAX_ARTICLES``
    articles (a dense wire archive reports the causes within the lookback, and reading half a
    year of it would make every build slow)."""
    start = min(ctx.earliest, (ctx.t0 - timedelta(days=HISTORY_DAYS)).date())
    if start < ctx.earliest:
        history = Article.objects.filter(
            published_at__gte=datetime.combine(start, time.min, tzinfo=UTC), published_at__lte=ctx.t_res
        )
        if history[: HISTORY_MAX_ARTICLES + 1].count() > HISTORY_MAX_ARTICLES:
            return ctx.earliest
    return start


def question_words(ctx: BuildContext) -> list[str]:
    """The words a story of the question is told in: the title's and options' words and the names of
    the criteria and background (capitalised words), stop words and question words left out."""
    words = re.findall(r"[^\W_][\w'\-]*", " ".join([ctx.title, *ctx.options]))
    words += [
        w for w in re.findall(r"[^\W_][\w'\-]*", f"{ctx.resolution_criteria} {ctx.background}") if w[:1].isupper()
    ]
    return [
        w
        for w in dict.fromkeys(words)
        if len(w) > 2 and stem_word(w.lower()) not in QUESTION_WORDS and w.lower() not in STOPWORDS
    ]


def read_window(ctx: BuildContext) -> Window:
    """The question's window (module docstring); ``BuildError("no_articles")`` when it is empty. A
    window of more than ``WINDOW_MAX_ARTICLES`` articles is narrowed first (``WINDOW_CANDIDATES``)."""
    first = history_start(ctx)
    start = datetime.combine(first, time.min, tzinfo=UTC)
    window = Article.objects.filter(published_at__isnull=False, published_at__gte=start, published_at__lte=ctx.t_res)
    if window[: WINDOW_MAX_ARTICLES + 1].count() > WINDOW_MAX_ARTICLES:
        ids = article_ids_naming(words=question_words(ctx), start=start, end=ctx.t_res, limit=WINDOW_CANDIDATES)
        window = window.filter(id__in=ids)
    rows = (
        window.order_by("published_at", "id")
        .annotate(summary_start=Substr("summary", 1, BODY_CHARS), body_start=Substr("body", 1, BODY_CHARS))
        .values("id", "title", "summary_start", "body_start", "url", "published_at", "extra")
    )
    docs = []
    for r in rows.iterator(chunk_size=2000):
        if r["published_at"] is None:  # excluded by the query; keeps the type honest
            continue
        extra = r["extra"] if isinstance(r["extra"], dict) else {}
        path = extra.get("topic_path")
        docs.append(
            article_doc(
                id=r["id"],
                title=r["title"],
                summary=r["summary_start"] or "",
                body=r["body_start"] or "",
                url=r["url"],
                published_at=r["published_at"],
                topics=[t for t in path if isinstance(t, str)] if isinstance(path, list) else (),
            )
        )
    if not docs:
        raise BuildError(
            "no_articles",
            f"No articles were published between {start.isoformat()} and the resolution ({ctx.t_res.isoformat()}).",
        )
    pinned = frozenset(
        HindsightEvent.objects.filter(graph__question_id=ctx.question_id, added_by__isnull=False)
        .exclude(review_status=HindsightEvent.ReviewStatus.REJECTED)
        .filter(sources__isnull=False)
        .values_list("sources__id", flat=True)
    )
    return Window(start=first, docs=docs, pinned=pinned)
