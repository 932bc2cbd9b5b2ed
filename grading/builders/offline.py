"""Deterministic offline hindsight builder (used when no LLM is configured). Labelled "offline".

Same archive in, same graph out. One pass of named stages; the first reads the database, every
other is a pure function over plain data with its own tests:

1. **Read the window** (:mod:`grading.builders.window`): articles from ``HISTORY_DAYS`` before t0
   (or the lookback's first day) to the resolution, and staff-added articles.
2. **Seed** (:func:`grading.builders.story.seed_items`): the items that certainly belong: they name
   the question's specific names (or staff added them).
3. **Link items** (:mod:`grading.builders.itemgraph`): shared rare names and terms (hubs capped),
   the archive's story headings.
4. **Spread relevance** (:mod:`grading.builders.spread`): Personalized PageRank from the seeds.
5. **Choose the story** (:func:`grading.builders.story.choose_story`): the seeds and the items the
   spread reaches through a strong enough link. None: no graph, the attempt is recorded as
   ``insufficient_evidence`` rather than a graph of unrelated stories.
6. **Merge** (:mod:`grading.builders.merge`): reports of one development become one event with all
   their sources; reports from the resolution day are the outcome node's sources. The sources
   threshold is fitted to the story's reports per development (:func:`grading.quality.fit_to_archive`).
7. **Orient** and 8. **choose chains** (:mod:`grading.builders.chains`): candidate links earlier to
   later, and the chains into the outcome whose weakest link is strongest, within
   ``HINDSIGHT_GRAPH_MAX_EVENTS`` events.
9. **Judge direction** (:mod:`grading.builders.direction`): read against what the question asks.
10. **Draft** (:func:`draft_graph`): events with impacts (magnitude ``0.1 + 0.8 r``, ``r`` the
    relevance, Neutral capped at 0.3; confidence ``min(0.9, 0.45 + 0.15 n)``, ``n`` the outlets
    that reported it), the chains' links (support ``min(1, coherence / LINK_FULL)``: strength
    ``0.2 + 0.6 s``, confidence ``0.55 + 0.4 s``), the quality check, and an explanation that says
    why a graph is thin when the archive holds too little of the story.

Limits: lexical cues do not understand sarcasm or reported speech; "precedes and is linked" is not
causation (a recall-oriented reference; reviewers correct events on the review pages).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from grading.builders.chains import CHAIN_MIN, OUTCOME, Hop, choose_chains, orient, widest_paths
from grading.builders.common import BuildContext, BuildError, BuildResult
from grading.builders.direction import Target
from grading.builders.draft import NEUTRAL_MAX_MAGNITUDE, DraftEvent, DraftImpact, DraftLink, GraphDraft
from grading.builders.itemgraph import link_items
from grading.builders.merge import Cluster, merge_reports
from grading.builders.relevance import Doc, SubjectTerms, stems
from grading.builders.story import seed_items, spread_story
from grading.builders.window import (
    HISTORY_DAYS,
    HISTORY_MAX_ARTICLES,
    Window,
    article_doc,
    first_sentence,
    read_window,
)
from grading.quality import Thresholds, check, delete_weak_links, fit_to_archive
from ingestion.canonical import strip_tags
from ingestion.models import Question
from ingestion.periods import parse_period

__all__ = [
    "BUILDER_VERSION",
    "HISTORY_DAYS",
    "HISTORY_MAX_ARTICLES",
    "article_doc",
    "build",
    "build_from_docs",
    "first_sentence",
    "strip_tags",
]

BUILDER_VERSION = "offline-4.0"
LINK_FULL = 0.4
# The days before the question opened where its story is read first (see find_story).
STORY_DAYS = 60
# Developments less relevant than this (relative to the story's most relevant) are left out.
EVENT_RELEVANCE = 0.13
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


def event_type(text: str) -> str:
    words = set(stems(text))
    for name, cues in TYPE_CUES:
        if words & cues:
            return name
    return "Indicator"


def question_target(ctx: BuildContext) -> Target:
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


def alignment(ctx: BuildContext, direction_name: str) -> int:
    """+1 when the direction supports the resolved outcome, -1 when it opposes it, 0 otherwise."""
    d = {"Positive": 1, "Negative": -1}.get(direction_name, 0)
    if ctx.question_type == Question.Type.BINARY and not ctx.outcome:
        d = -d
    return d


@dataclass(frozen=True)
class Story:
    """What the stages before drafting found: the events (key -> reports), the chosen chains."""

    items: int
    seeds: int
    window: int
    events: dict[str, Cluster]
    kept: list[str]
    hops: dict[str, Hop]
    closing: tuple[int, ...]
    reports_per_event: float


def find_story(ctx: BuildContext, window: Window, *, max_articles: int, max_events: int, min_events: int = 0) -> Story:
    """Stages 2-8 over the window's last ``STORY_DAYS`` before the question opened, or over the whole
    window (``HISTORY_DAYS``) when those days hold fewer than ``min_events`` developments of the
    story: a story told over a few weeks is read there, a thin one is followed further back (the
    protests and the resignation months before an early election)."""
    recent = ctx.t0 - timedelta(days=STORY_DAYS)
    docs = [d for d in window.docs if d.published_at >= recent]
    if len(docs) < len(window.docs):
        try:
            story = _find_story(ctx, docs, window, max_articles=max_articles, max_events=max_events)
        except BuildError:
            story = None
        if story is not None and len(story.events) >= min_events:
            return story
    return _find_story(ctx, window.docs, window, max_articles=max_articles, max_events=max_events)


def _find_story(ctx: BuildContext, docs: list[Doc], window: Window, *, max_articles: int, max_events: int) -> Story:
    subject = SubjectTerms.for_question(
        title=ctx.title, criteria=ctx.resolution_criteria, background=ctx.background, options=ctx.options
    )
    seeds = seed_items(docs, subject, pinned=window.pinned)
    if not seeds.shares:
        names = ", ".join(" ".join(p) for p in subject.title_entities) or ctx.title
        raise BuildError(
            "insufficient_evidence",
            f"None of the {len(docs)} articles published in the question's window is about its subject "
            f"({names}); no graph is built.",
        )
    graph = link_items(docs)
    story = sorted(spread_story(graph, seeds), key=lambda d: (-d.relevance, d.id))[:max_articles]
    closing_day = ctx.t_res.date()
    closing = [d for d in story if d.published_at.date() == closing_day]
    reports = [d for d in story if d.published_at.date() != closing_day] or closing
    clusters = merge_reports(reports)
    events = {f"e{n}": c for n, c in enumerate(clusters, start=1)}
    # Chains are read within the story: its own items, its own rarities, the question's names
    # linking its developments like any other shared name.
    told = link_items([d for c in clusters for d in c.docs] + closing, subject=seeds.anchors.stems)
    edges = orient(
        list(events.items()),
        (told.names + told.headings).tocsr(),
        told.index,
        outcome_docs=[d.id for d in closing],
        closing_day=closing_day,
    )
    relevance = {k: c.relevance for k, c in events.items() if c.relevance >= EVENT_RELEVANCE}
    edges = [e for e in edges if e.cause in relevance and (e.effect in relevance or e.effect == OUTCOME)]
    hops = widest_paths({k: events[k].day for k in relevance}, edges)
    kept = choose_chains(hops, relevance, max_events)
    return Story(
        items=len(story),
        seeds=len(seeds.shares),
        window=len(docs),
        events=events,
        kept=kept,
        hops=hops,
        closing=tuple(sorted(d.id for d in closing)),
        reports_per_event=len(reports) / max(1, len(clusters)),
    )


def _support(coherence: float) -> float:
    return min(1.0, coherence / LINK_FULL)


def draft_graph(ctx: BuildContext, story: Story, target: Target) -> tuple[GraphDraft, dict[str, int]]:
    """Stages 9-10: events with their direction and impact, the chains' links, the outcome node."""
    kept = sorted(story.kept, key=lambda k: (story.events[k].day, story.events[k].best.id))
    keys = {old: f"e{n}" for n, old in enumerate(kept, start=1)}
    events: list[DraftEvent] = []
    aligned: dict[str, int] = {}
    towards = "Negative" if ctx.question_type == Question.Type.BINARY and not ctx.outcome else "Positive"
    for old in kept:
        cluster = story.events[old]
        best = cluster.best
        text = f"{best.title}. {cluster.description}"
        direction = target.in_hindsight(text, towards=towards)
        magnitude = round(0.1 + 0.8 * cluster.relevance, 2)
        if direction == "Neutral":
            magnitude = min(magnitude, NEUTRAL_MAX_MAGNITUDE)
        confidence = round(min(0.9, 0.45 + 0.15 * cluster.outlets), 2)
        aligned[keys[old]] = alignment(ctx, direction)
        events.append(
            DraftEvent(
                key=keys[old],
                title=best.title,
                description=cluster.description,
                occurred_on=cluster.day,
                event_type=event_type(text),
                source_ids=cluster.source_ids,
                impact=DraftImpact(direction=direction, magnitude=magnitude, confidence=confidence),
            )
        )
    closing_day = ctx.t_res.date()
    events.append(
        DraftEvent(
            key=OUTCOME,
            title=f"Outcome: {ctx.title} — {ctx.outcome_text}"[:500],
            description=f"The question resolved {ctx.outcome_text} on {closing_day.isoformat()}.",
            occurred_on=closing_day,
            event_type="Outcome",
            is_outcome=True,
            source_ids=story.closing,
        )
    )
    # An event whose chain is weaker than CHAIN_MIN is kept without its chain: it stays unlinked.
    links = [_link(story, old, keys, aligned) for old in kept if story.hops[old].next in (*keys, OUTCOME)]
    return GraphDraft(events=tuple(events), links=tuple(links)), aligned


def _link(story: Story, old: str, keys: dict[str, str], aligned: dict[str, int]) -> DraftLink:
    hop = story.hops[old]
    edge = hop.edge
    s = _support(edge.coherence)
    strength = round(0.2 + 0.6 * s, 2)
    confidence = round(0.55 + 0.4 * s, 2)
    source = keys[old]
    evidence = story.events[old].source_ids
    if hop.next == OUTCOME:
        sign = aligned.get(source, 0)
        relation = "Inhibits" if sign < 0 else "Causes" if sign > 0 else "Enables"
        why = (
            f"the last development of its chain before the outcome, which it "
            f"{'opposes' if sign < 0 else 'supports' if sign > 0 else 'leads to'}"
        )
        return DraftLink(
            source=source,
            target=OUTCOME,
            relation=relation,
            strength=-strength if sign < 0 else strength,
            confidence=confidence,
            reasoning=f"Offline builder: {why}; {edge.gap_days} day(s) before it; coherence {edge.coherence:.2f}.",
            evidence_ids=evidence,
        )
    relation = ("Triggers" if edge.gap_days <= 3 else "Causes") if edge.cue else "Enables"
    why = "the later report names it as a cause" if edge.cue else "their reports share names or headings"
    return DraftLink(
        source=source,
        target=keys[hop.next],
        relation=relation,
        strength=strength,
        confidence=confidence,
        reasoning=(
            f"Offline builder: {why}; {edge.gap_days} day(s) apart; the chain's weakest link "
            f"{hop.bottleneck:.2f}, this link {edge.coherence:.2f}."
        ),
        evidence_ids=story.events[hop.next].source_ids,
    )


def build_from_window(
    ctx: BuildContext, window: Window, *, thresholds: Thresholds, max_articles: int, max_events: int
) -> BuildResult:
    """Every stage after reading the window (pure): the graph, its quality and the build log."""
    story = find_story(
        ctx, window, max_articles=max_articles, max_events=max_events, min_events=thresholds.min_events - 1
    )
    # One report per development in a brief, several in a wire archive: the sources threshold follows.
    thresholds = fit_to_archive(thresholds, story.reports_per_event)
    draft, _ = draft_graph(ctx, story, question_target(ctx))
    draft = delete_weak_links(draft, thresholds)
    report = check(draft, thresholds)
    explanation = _explanation(ctx, draft.events, story, report.failures)
    draft = GraphDraft(events=draft.events, links=draft.links, explanation=explanation)
    log = [
        {
            "stage": "story",
            "window_articles": len(window.docs),
            "seeds": story.seeds,
            "relevant_articles": story.items,
            "developments": len(story.events),
            "kept_events": len(story.kept),
            "quality": report.as_dict(),
        }
    ]
    return BuildResult(draft=draft, quality=report, builder="offline", builder_version=BUILDER_VERSION, log=log)


def build_from_docs(
    ctx: BuildContext, docs: list[Doc], *, thresholds: Thresholds, max_articles: int, max_events: int
) -> BuildResult:
    """The graph of the articles ``docs`` (the question's window, oldest first, as
    :func:`article_doc` makes them) without the database: no stored vectors, no staff-added items.
    Raises :class:`BuildError` when no graph can be built."""
    if not docs:
        raise BuildError("no_articles", "No articles were published in the question's window.")
    window = Window(start=min(d.published_at for d in docs).date(), docs=docs)
    return build_from_window(ctx, window, thresholds=thresholds, max_articles=max_articles, max_events=max_events)


def build(
    ctx: BuildContext, *, thresholds: Thresholds, max_articles: int, max_events: int, budget: int = 2
) -> BuildResult:
    """Read the window (the one database read), then build from it. ``budget`` is unused: the
    offline builder makes one pass."""
    return build_from_window(
        ctx, read_window(ctx), thresholds=thresholds, max_articles=max_articles, max_events=max_events
    )


def _explanation(ctx: BuildContext, events: Sequence[DraftEvent], story: Story, failures: Sequence[str]) -> str:
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
    if failures:
        lines.append(thin_story_note(story, first_day=min((e.occurred_on for e in events), default=None)))
    return "\n".join(lines)


def thin_story_note(story: Story, *, first_day: date | None) -> str:
    """Why a graph is thin: how much of the story the archive holds."""
    chained = sum(1 for k in story.kept if story.hops[k].bottleneck >= CHAIN_MIN)
    since = f" from {first_day.isoformat()}" if first_day else ""
    return (
        f"Why this graph is thin: of the {story.window} articles in the question's window, {story.items} tell "
        f"its story ({story.seeds} name the question's subject), reporting {len(story.events)} distinct "
        f"developments{since}; {chained} of them chain to the outcome through links the reports support. "
        "The archive holds no more of this story; staff can add items from the review page."
    )
