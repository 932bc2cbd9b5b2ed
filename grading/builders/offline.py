"""Deterministic offline hindsight builder (used when no LLM is configured). Labelled "offline".

Same corpus in, same graph out. In order:

1. **Relevance** (:mod:`grading.builders.story`). Articles published from ``HISTORY_DAYS`` before
   t0 (or the lookback's first day, ``HINDSIGHT_GRAPH_LOOKBACK_DAYS``, when earlier) to the
   resolution that name the question's specific names, and the story's history: articles naming the
   people and bodies the story brings in. None: no graph, the attempt is recorded as
   ``insufficient_evidence`` rather than a graph of unrelated stories.
2. **Events.** Reports of one development are merged: headline-and-lead stems with an IDF-weighted
   cosine of at least ``MERGE_SIMILARITY`` at most ``MERGE_DAYS`` apart, or of at least
   ``MERGE_SIMILARITY_NEXT_DAY`` within a day. An event is dated on its first report, titled by that
   report's headline (markup removed, ticker symbols such as "<TX>" kept), described by its first
   sentence (not cut at an initial such as "J.") or, when the first report was a one-line flash, by
   the first fuller report's. Reports from the resolution day are the outcome node's sources. The
   ``HINDSIGHT_GRAPH_MAX_EVENTS`` most relevant events are kept. The sources threshold is fitted to
   the story's reports per development (:func:`grading.quality.fit_to_archive`).
3. **Direction** (:mod:`grading.builders.direction`): toward YES for binary questions, toward the
   resolved value, period, relations, option or gold events otherwise, read with negation, targets
   ("rejects a challenge to the bill" supports the bill) and words of opposition or relief ("in
   protest at the cuts", "relief from the bond").
4. **Impact.** Magnitude ``0.1 + 0.8 r`` (``r`` the relevance; Neutral capped at 0.3); confidence
   ``min(0.9, 0.45 + 0.15 n)`` with ``n`` the distinct outlets (URL hosts) that reported it.
5. **Links from evidence** (:mod:`grading.builders.linking`): shared actors and objects beyond the
   question's own names, causal cue phrases, chains closed at the outcome node by the events that
   move it.
6. **Correct** (B.3). When the graph misses the thresholds, the next round lowers the support a link
   needs (``LINK_SUPPORT`` per round, within the budget) to add intermediate causes, and the last
   round follows a brief's developments where no report names a cause; weak links are deleted. A
   graph still short of the thresholds is stored with ``graph_built = False``.

Limits: lexical cues do not understand sarcasm, reported speech or domain causation they do not
name ("heavy rain" raises a river only because *rain* is an upward cue). Reviewers correct events
on the review pages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from urllib.parse import urlsplit

from grading.builders.common import BuildContext, BuildError, BuildResult
from grading.builders.direction import Target
from grading.builders.draft import NEUTRAL_MAX_MAGNITUDE, DraftEvent, DraftImpact, GraphDraft
from grading.builders.linking import Node, event_links, node_after_cues, outcome_links
from grading.builders.relevance import Doc, SubjectTerms, cosine, idf_of, stems
from grading.builders.story import select_story
from grading.quality import Thresholds, check, delete_weak_links, fit_to_archive
from ingestion.canonical import strip_tags
from ingestion.models import Article, Question
from ingestion.periods import parse_period

BUILDER_VERSION = "offline-3.0"
MERGE_SIMILARITY = 0.5
MERGE_DAYS = 3
# Reports within a day of each other merge at a lower similarity (outlets word one development differently).
MERGE_SIMILARITY_NEXT_DAY = 0.3
BODY_CHARS = 1000
LEAD_CHARS = 300
# How far before the question opened the builder follows the story's causes (an early election's
# protests and resignations come months before the vote).
HISTORY_DAYS = 180
HISTORY_MAX_ARTICLES = 20_000
# Least support of a causal link, per correction round.
LINK_SUPPORT = (0.35, 0.25)
TYPE_CUES: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "ExternalShock",
        frozenset(
            stems(
                "crisis attack war storm hurricane earthquake crash pandemic outbreak explosion flood wildfire "
                "shock sanctions coup drone shortage outage"
            )
        ),
    ),
    (
        "Decision",
        frozenset(
            stems(
                "decide decision vote votes rule ruling approve approves reject rejects sign signs announce "
                "announces order orders veto appoint appoints grants files tables passes recalls agrees"
            )
        ),
    ),
    ("Milestone", frozenset(stems("launch launches complete completes reach reaches record first milestone opens"))),
)


@dataclass
class _Cluster:
    docs: list[Doc] = field(default_factory=list)

    @property
    def day(self) -> date:
        return min(d.published_at.date() for d in self.docs)

    @property
    def best(self) -> Doc:
        """The report that stands for the event: the first published (the plain news, before the
        follow-ups and analyses), the most relevant among reports of the same minute."""
        return min(self.docs, key=lambda d: (d.published_at, -d.relevance, d.id))

    @property
    def description(self) -> str:
        """The first report's lead, or, when it was a one-line flash with none, the lead of the
        first fuller report that followed."""
        for doc in sorted(self.docs, key=lambda d: (d.published_at, -d.relevance, d.id)):
            if doc.lead.strip():
                return doc.lead
        return ""

    @property
    def relevance(self) -> float:
        return max(d.relevance for d in self.docs)

    @property
    def outlets(self) -> int:
        return len({d.host for d in self.docs})


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


def _lead(summary: str, body: str) -> str:
    return first_sentence(strip_tags(summary or body or ""))[:LEAD_CHARS]


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


def _host(url: str) -> str:
    """The outlet of a report: its URL's host (the URL itself when it has none or cannot be read)."""
    try:
        return urlsplit(url).hostname or url
    except ValueError:  # "http://[not an address]/"
        return url


def article_doc(*, id: int, title: str, summary: str, body: str, url: str, published_at: datetime) -> Doc:
    """An article as the builder reads it: its headline without markup, its lead sentence, the start
    of its text and its outlet."""
    return Doc.make(
        id=id,
        title=strip_tags(title)[:500],
        lead=_lead(summary, body),
        body=f"{summary} {body}"[:BODY_CHARS],
        host=_host(url),
        published_at=published_at,
    )


def _window_docs(ctx: BuildContext) -> list[Doc]:
    start = datetime.combine(history_start(ctx), time.min, tzinfo=UTC)
    rows = (
        Article.objects.filter(published_at__isnull=False, published_at__gte=start, published_at__lte=ctx.t_res)
        .order_by("published_at", "id")
        .values("id", "title", "summary", "body", "url", "published_at")
    )
    docs = [
        article_doc(
            id=r["id"],
            title=r["title"],
            summary=r["summary"] or "",
            body=r["body"] or "",
            url=r["url"],
            published_at=r["published_at"],
        )
        for r in rows
        if r["published_at"] is not None  # excluded by the query; keeps the type honest
    ]
    if not docs:
        raise BuildError(
            "no_articles",
            f"No articles were published between {start.isoformat()} and the resolution ({ctx.t_res.isoformat()}).",
        )
    return docs


def _clusters(docs: list[Doc]) -> list[_Cluster]:
    idf = idf_of(d.head for d in docs)
    clusters: list[_Cluster] = []
    for doc in sorted(docs, key=lambda d: (d.published_at, d.id)):
        home = next(
            (
                c
                for c in clusters
                if (gap := abs((doc.published_at.date() - c.day).days)) <= MERGE_DAYS
                and max(cosine(doc.head, d.head, idf) for d in c.docs)
                >= (MERGE_SIMILARITY_NEXT_DAY if gap <= 1 else MERGE_SIMILARITY)
            ),
            None,
        )
        if home is None:
            clusters.append(_Cluster(docs=[doc]))
        else:
            home.docs.append(doc)
    return clusters


def event_type(text: str) -> str:
    words = set(stems(text))
    for name, cues in TYPE_CUES:
        if words & cues:
            return name
    return "Indicator"


def _target(ctx: BuildContext) -> Target:
    resolved_start = None
    if ctx.question_type == Question.Type.TIMEFRAME and ctx.granularity and isinstance(ctx.outcome, str):
        try:
            resolved_start = parse_period(ctx.granularity, ctx.outcome).start
        except ValueError:
            resolved_start = None
    return Target.for_question(
        question_type=ctx.question_type,
        title=ctx.title,
        background=f"{ctx.background} {ctx.resolution_criteria}",
        outcome=ctx.outcome,
        options=ctx.options,
        resolved_start=resolved_start,
    )


def _alignment(ctx: BuildContext, direction_name: str) -> int:
    """+1 when the direction supports the resolved outcome, -1 when it opposes it, 0 otherwise."""
    d = {"Positive": 1, "Negative": -1}.get(direction_name, 0)
    if ctx.question_type == Question.Type.BINARY and not ctx.outcome:
        d = -d
    return d


def _events(ctx: BuildContext, clusters: list[_Cluster]) -> tuple[list[DraftEvent], list[Node]]:
    target = _target(ctx)
    events: list[DraftEvent] = []
    nodes: list[Node] = []
    for index, cluster in enumerate(clusters, start=1):
        key = f"e{index}"
        best = cluster.best
        text = f"{best.title}. {cluster.description}"
        direction = target.direction(text)
        magnitude = round(0.1 + 0.8 * cluster.relevance, 2)
        if direction == "Neutral":
            magnitude = min(magnitude, NEUTRAL_MAX_MAGNITUDE)
        confidence = round(min(0.9, 0.45 + 0.15 * cluster.outlets), 2)
        source_ids = tuple(sorted(d.id for d in cluster.docs))
        events.append(
            DraftEvent(
                key=key,
                title=best.title,
                description=cluster.description,
                occurred_on=cluster.day,
                event_type=event_type(text),
                source_ids=source_ids,
                impact=DraftImpact(direction=direction, magnitude=magnitude, confidence=confidence),
            )
        )
        full = " ".join(f"{d.title}. {d.lead} {d.body}" for d in cluster.docs)
        terms = set().union(*(set(d.head) for d in cluster.docs))
        terms |= {s for d in cluster.docs for phrase in d.entities for s in phrase}
        nodes.append(
            Node(
                key=key,
                day=cluster.day,
                text=full,
                terms=frozenset(terms),
                alignment=_alignment(ctx, direction),
                relevance=cluster.relevance,
                confidence=confidence,
                source_ids=source_ids,
                after=node_after_cues(full),
            )
        )
    return events, nodes


def build(
    ctx: BuildContext, *, thresholds: Thresholds, max_articles: int, max_events: int, budget: int = 2
) -> BuildResult:
    return build_from_docs(
        ctx, _window_docs(ctx), thresholds=thresholds, max_articles=max_articles, max_events=max_events, budget=budget
    )


def build_from_docs(
    ctx: BuildContext,
    docs: list[Doc],
    *,
    thresholds: Thresholds,
    max_articles: int,
    max_events: int,
    budget: int = 2,
) -> BuildResult:
    """The graph of the articles ``docs`` (the question's window, oldest first): steps 1 to 6 of the
    module docstring, without the database. Raises :class:`BuildError` when no graph can be built."""
    subject = SubjectTerms.for_question(
        title=ctx.title, criteria=ctx.resolution_criteria, background=ctx.background, options=ctx.options
    )
    story, names = select_story(docs, subject)
    relevant = sorted(story, key=lambda d: (-d.relevance, d.id))[:max_articles]
    if not relevant:
        raise BuildError(
            "insufficient_evidence",
            f"None of the {len(docs)} articles published in the question's window is about its subject "
            f"({', '.join(' '.join(p) for p in subject.title_entities) or ctx.title}); no graph is built.",
        )
    closing_day = ctx.t_res.date()
    closing = [d for d in relevant if d.published_at.date() == closing_day]
    reports = [d for d in relevant if d.published_at.date() != closing_day] or closing
    every = _clusters(reports)
    # One report per development in a brief, several in a wire archive: the sources threshold follows.
    thresholds = fit_to_archive(thresholds, len(reports) / len(every))
    clusters = sorted(every, key=lambda c: (-c.relevance, c.day, c.best.id))[:max_events]
    clusters.sort(key=lambda c: (c.day, c.best.id))
    events, nodes = _events(ctx, clusters)
    events.append(
        DraftEvent(
            key="outcome",
            title=f"Outcome: {ctx.title} — {ctx.outcome_text}"[:500],
            description=f"The question resolved {ctx.outcome_text} on {closing_day.isoformat()}.",
            occurred_on=closing_day,
            event_type="Outcome",
            is_outcome=True,
            source_ids=tuple(sorted(d.id for d in closing)),
        )
    )
    draft = GraphDraft(events=tuple(events), links=(), explanation=_explanation(ctx, events))
    log: list[dict[str, object]] = []
    rounds = LINK_SUPPORT[: max(1, min(budget, len(LINK_SUPPORT)))]
    report = check(draft, thresholds)
    for number, minimum in enumerate(rounds, start=1):
        # The last round also follows the story from development to development where no report
        # names a cause (a brief, one line per development).
        between = event_links(nodes, minimum=minimum, subject=names, chronicle=number == len(rounds))
        closing_links = outcome_links(
            nodes,
            between,
            "outcome",
            min_strength=thresholds.min_link_strength,
            min_confidence=thresholds.min_link_confidence,
        )
        links = [*between, *closing_links]
        draft = delete_weak_links(
            GraphDraft(events=draft.events, links=tuple(links), explanation=draft.explanation), thresholds
        )
        report = check(draft, thresholds)
        log.append(
            {
                "round": number,
                "action": f"link events with support >= {minimum} (shared actors, causal cues), close chains at the outcome",
                "relevant_articles": len(relevant),
                "quality": report.as_dict(),
            }
        )
        if report.passed:
            break
    return BuildResult(
        draft=draft,
        quality=report,
        builder="offline",
        builder_version=BUILDER_VERSION,
        log=[dict(entry) for entry in log],
    )


def _explanation(ctx: BuildContext, events: list[DraftEvent]) -> str:
    ranked = sorted(
        (e for e in events if e.impact is not None),
        key=lambda e: (-(e.impact.score if e.impact else 0), e.occurred_on, e.key),
    )[:5]
    lines = [
        f"Offline-built explanation (no LLM): the question resolved {ctx.outcome_text} on "
        f"{ctx.t_res.date().isoformat()}. The most relevant reported events, by impact score, were:"
    ]
    for event in sorted(ranked, key=lambda e: (e.occurred_on, e.key)):
        assert event.impact is not None
        lines.append(f"- {event.occurred_on.isoformat()}: {event.title} ({event.impact.direction}).")
    return "\n".join(lines)
