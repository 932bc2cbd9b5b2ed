"""Deterministic offline hindsight builder (used when no LLM is configured). Labelled "offline".

Heuristic, in order (same corpus in, same graph out):

1. **Retrieve.** Articles published in [t0, t_res] are ranked by BM25 (rank_bm25's Okapi) over
   headline + summary + the first 1,000 characters of the body, with the query made of the
   question title, resolution criteria and the resolved outcome text. Articles scoring <= 0 are
   dropped; the best ``HINDSIGHT_GRAPH_MAX_ARTICLES`` are kept. Relevance r = score / best score.
2. **Events.** Each article is a candidate event dated on its publication day, titled by its
   headline, described by its lead (summary or body, first sentence). Two candidates are the same
   event when their headline token sets overlap (Jaccard) >= 0.5 and they are at most 3 days apart;
   a merged event keeps the earliest date, the headline of its most relevant article and every
   article as a source. The ``HINDSIGHT_GRAPH_MAX_EVENTS`` most relevant events are kept.
3. **Direction** (Appendix D: toward a "Yes" resolution for binary questions). Lexical cues in the
   headline and lead: affirmative verbs (approve, pass, win, launch, sign, ...) count +1, adverse
   ones (reject, delay, cancel, block, fail, ...) -1, a negation (not, no, never, without) within
   the two preceding tokens flips a cue. If the question itself is phrased adversely ("Will the
   launch be delayed?") cues are flipped. More + than - cues: Positive; more -: Negative; a tie
   with cues: Mixed; none: Neutral. For non-binary questions Positive means "supports the resolved
   outcome": an event naming outcome-specific words is Positive (Mixed if its cues are adverse), one
   naming only another option's words is Negative, otherwise Neutral.
4. **Impact.** Magnitude = 0.1 + 0.8 r (the B.1 rubric's 0.1-0.9 range; Neutral capped at 0.3);
   confidence = min(0.9, 0.4 + 0.15 n) with n the number of distinct outlets (URL hosts) reporting it.
5. **Chain.** Events are chained in date order and the last one links to the outcome node (dated at
   t_res, marked is_outcome). A link from event e is Causes (e supports the resolved outcome, strength
   +(0.1 + 0.8 r_e)), Inhibits (e opposes it, strength -(0.1 + 0.8 r_e)) or Correlates (Neutral/Mixed,
   strength capped at 0.2, weak); its confidence is the smaller of its two ends' confidences.
6. **Correct** (B.3). Weak links (confidence < 0.6 or |strength| < 0.3) are deleted and the events
   that kept strong links are re-chained in date order (the intermediate causes), then re-checked.
   The weakly linked events stay in the graph as dated events with their impacts.

Limits: cue words do not understand sarcasm, reported speech or questions phrased with unusual
polarity; magnitudes measure topical relevance, not causal effect. Review pages exist for this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime
from urllib.parse import urlsplit

from rank_bm25 import BM25Okapi

from grading.builders.common import BuildContext, BuildError, BuildResult, tokens


def words_set(text: str) -> frozenset[str]:
    return frozenset(text.split())

from grading.builders.draft import NEUTRAL_MAX_MAGNITUDE, DraftEvent, DraftImpact, DraftLink, GraphDraft
from grading.quality import Thresholds, check, delete_weak_links, is_included
from ingestion.models import Article, Question

BUILDER_VERSION = "offline-1.0"
MERGE_JACCARD = 0.5
MERGE_DAYS = 3
BODY_CHARS = 1000
LEAD_CHARS = 300
# A neutral or mixed event carries no net causal push: its link is "weak" in the B.1 rubric.
CORRELATES_MAX_STRENGTH = 0.2

POSITIVE_CUES = words_set(
    """approve approved approves approval pass passed passes win wins won winning agree agreed agrees
    agreement launch launched launches confirm confirmed confirms sign signed signs succeed succeeded
    succeeds success successful rise rises rose rising gain gains gained advance advances advanced
    support supports supported back backs backed secure secures secured clear clears cleared complete
    completes completed accept accepts accepted boost boosts boosted grant granted grants ratify
    ratified ratifies adopt adopted adopts reach reached reaches beat beats record surge surged
    surges progress breakthrough endorse endorsed endorses elected"""
)
NEGATIVE_CUES = words_set(
    """reject rejected rejects rejection fail failed fails failure delay delayed delays cancel cancelled
    canceled cancels block blocked blocks lose lost loses veto vetoed vetoes deny denied denies fall
    falls fell drop drops dropped suspend suspended suspends postpone postponed postpones halt halted
    halts collapse collapsed collapses oppose opposed opposes withdraw withdrew withdraws stall stalled
    stalls scrap scrapped scraps miss missed misses decline declined declines ban banned bans setback
    defeat defeated slump slumped doubt doubts abandon abandoned"""
)
NEGATIONS = frozenset({"not", "no", "never", "without", "nor", "cannot"})
TYPE_CUES: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "ExternalShock",
        words_set(
            "crisis attack attacks war storm hurricane earthquake crash pandemic outbreak strike strikes "
            "explosion flood wildfire shock sanctions coup"
        ),
    ),
    (
        "Decision",
        words_set(
            "decide decided decides decision vote voted votes rule ruled rules ruling approve approved "
            "approves reject rejected sign signed announce announced announces order ordered veto vetoed "
            "appoint appointed"
        ),
    ),
    (
        "Milestone",
        words_set(
            "launch launched launches complete completed completes reach reached reaches record first "
            "milestone finish finished opens opened deliver delivered"
        ),
    ),
    (
        "Indicator",
        words_set("poll polls survey data report reports index price prices rate rates forecast estimate"),
    ),
)


@dataclass(frozen=True)
class _Doc:
    id: int
    title: str
    lead: str
    host: str
    day: date
    published_at: datetime
    relevance: float
    title_tokens: frozenset[str]


@dataclass
class _Cluster:
    docs: list[_Doc]

    @property
    def day(self) -> date:
        return min(d.day for d in self.docs)

    @property
    def best(self) -> _Doc:
        return min(self.docs, key=lambda d: (-d.relevance, d.id))

    @property
    def relevance(self) -> float:
        return self.best.relevance

    @property
    def outlets(self) -> int:
        return len({d.host for d in self.docs})


def _lead(summary: str, body: str) -> str:
    text = re.sub(r"<[^>]+>", " ", summary or body or "")
    text = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    lead = match.group(1) if match else text
    return lead[:LEAD_CHARS]


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _cue_balance(words: list[str]) -> tuple[int, int]:
    pos = neg = 0
    for i, word in enumerate(words):
        sign = 1 if word in POSITIVE_CUES else -1 if word in NEGATIVE_CUES else 0
        if not sign:
            continue
        if any(w in NEGATIONS for w in words[max(0, i - 2) : i]):
            sign = -sign
        if sign > 0:
            pos += 1
        else:
            neg += 1
    return pos, neg


def _raw_tokens(text: str) -> list[str]:
    # Cue detection keeps stop words out but needs negations in order, which tokens() preserves.
    return tokens(text)


def direction(ctx: BuildContext, text: str) -> str:
    """The event's direction (module docstring, step 3)."""
    words = _raw_tokens(text)
    pos, neg = _cue_balance(words)
    if ctx.question_type == Question.Type.BINARY:
        q_pos, q_neg = _cue_balance(_raw_tokens(ctx.title))
        if q_neg > q_pos:
            pos, neg = neg, pos
        if pos > neg:
            return "Positive"
        if neg > pos:
            return "Negative"
        return "Mixed" if pos else "Neutral"
    question_words = set(tokens(ctx.title))
    outcome_words = set(tokens(ctx.outcome_text)) - question_words
    other_words: set[str] = set()
    for option in ctx.options:
        if option != ctx.outcome:
            other_words |= set(tokens(option))
    other_words -= outcome_words | question_words
    present = set(words)
    if outcome_words & present:
        return "Mixed" if neg > pos else "Positive"
    if other_words & present:
        return "Negative"
    return "Neutral"


def event_type(text: str) -> str:
    words = set(_raw_tokens(text))
    for name, cues in TYPE_CUES:
        if words & cues:
            return name
    return "Indicator"


def _retrieve(ctx: BuildContext, max_articles: int) -> list[_Doc]:
    rows = list(
        Article.objects.filter(published_at__isnull=False, published_at__gte=ctx.t0, published_at__lte=ctx.t_res)
        .order_by("published_at", "id")
        .values("id", "title", "summary", "body", "url", "published_at")
    )
    if not rows:
        raise BuildError(
            "no_articles",
            f"No articles were published between t0 ({ctx.t0.isoformat()}) and the resolution "
            f"({ctx.t_res.isoformat()}).",
        )
    corpus = [tokens(f"{r['title']} {r['summary']} {(r['body'] or '')[:BODY_CHARS]}") for r in rows]
    query = tokens(f"{ctx.title} {ctx.resolution_criteria} {ctx.outcome_text}")
    scores = BM25Okapi(corpus).get_scores(query) if any(corpus) and query else [0.0] * len(rows)
    ranked = sorted(
        ((float(s), r) for s, r in zip(scores, rows, strict=True) if s > 0), key=lambda x: (-x[0], x[1]["id"])
    )[:max_articles]
    if not ranked:
        raise BuildError(
            "no_articles",
            f"None of the {len(rows)} articles in [t0, t_res] matches the question or its outcome.",
        )
    best = ranked[0][0]
    return [
        _Doc(
            id=r["id"],
            title=" ".join(r["title"].split())[:500],
            lead=_lead(r["summary"], r["body"]),
            host=urlsplit(r["url"]).hostname or r["url"],
            day=_aware(r["published_at"]).date(),
            published_at=_aware(r["published_at"]),
            relevance=round(score / best, 4),
            title_tokens=frozenset(tokens(r["title"])),
        )
        for score, r in ranked
    ]


def _aware(value: datetime | None) -> datetime:
    # The query excludes undated articles; this keeps the type honest.
    if value is None:
        raise ValueError("an undated article reached the offline builder")
    return value


def _cluster(docs: list[_Doc]) -> list[_Cluster]:
    clusters: list[_Cluster] = []
    for doc in sorted(docs, key=lambda d: (d.published_at, d.id)):
        home = next(
            (
                c
                for c in clusters
                if abs((doc.day - c.day).days) <= MERGE_DAYS
                and max(_jaccard(doc.title_tokens, d.title_tokens) for d in c.docs) >= MERGE_JACCARD
            ),
            None,
        )
        if home is None:
            clusters.append(_Cluster(docs=[doc]))
        else:
            home.docs.append(doc)
    return clusters


def _alignment(ctx: BuildContext, direction_name: str) -> int:
    """+1 when the direction supports the resolved outcome, -1 when it opposes it, 0 otherwise."""
    d = {"Positive": 1, "Negative": -1}.get(direction_name, 0)
    if ctx.question_type == Question.Type.BINARY and not ctx.outcome:
        d = -d
    return d


def _chain(ctx: BuildContext, events: list[DraftEvent], relevance: dict[str, float]) -> tuple[DraftLink, ...]:
    confidence = {e.key: (e.impact.confidence if e.impact else 1.0) for e in events}
    ordered = sorted((e for e in events if not e.is_outcome), key=lambda e: (e.occurred_on, e.key))
    outcome = next(e for e in events if e.is_outcome)
    links: list[DraftLink] = []
    for i, event in enumerate(ordered):
        target = ordered[i + 1] if i + 1 < len(ordered) else outcome
        align = _alignment(ctx, event.impact.direction if event.impact else "Neutral")
        size = round(0.1 + 0.8 * relevance[event.key], 2)
        if align > 0:
            relation, strength, stance = "Causes", size, "supports"
        elif align < 0:
            relation, strength, stance = "Inhibits", -size, "opposes"
        else:
            relation, strength, stance = "Correlates", min(size, CORRELATES_MAX_STRENGTH), "is neutral toward"
        gap = (target.occurred_on - event.occurred_on).days
        links.append(
            DraftLink(
                source=event.key,
                target=target.key,
                relation=relation,
                strength=strength,
                confidence=round(min(confidence[event.key], confidence[target.key]), 2),
                reasoning=(
                    f"Offline builder: precedes '{target.title[:80]}' by {gap} day(s) and {stance} the resolved "
                    f"outcome ({ctx.outcome_text}); relevance {relevance[event.key]:.2f}."
                ),
                evidence_ids=event.source_ids,
            )
        )
    return tuple(links)


def build(
    ctx: BuildContext, *, thresholds: Thresholds, max_articles: int, max_events: int, budget: int = 2
) -> BuildResult:
    docs = _retrieve(ctx, max_articles)
    clusters = sorted(_cluster(docs), key=lambda c: (-c.relevance, c.day, c.best.id))[:max_events]
    clusters.sort(key=lambda c: (c.day, c.best.id))
    events: list[DraftEvent] = []
    relevance: dict[str, float] = {}
    for index, cluster in enumerate(clusters, start=1):
        key = f"e{index}"
        best = cluster.best
        text = f"{best.title}. {best.lead}"
        dir_name = direction(ctx, text)
        magnitude = round(0.1 + 0.8 * cluster.relevance, 2)
        if dir_name == "Neutral":
            magnitude = min(magnitude, NEUTRAL_MAX_MAGNITUDE)
        relevance[key] = cluster.relevance
        events.append(
            DraftEvent(
                key=key,
                title=best.title,
                description=best.lead,
                occurred_on=max(cluster.day, ctx.earliest),
                event_type=event_type(text),
                source_ids=tuple(sorted(d.id for d in cluster.docs)),
                impact=DraftImpact(
                    direction=dir_name,
                    magnitude=magnitude,
                    confidence=round(min(0.9, 0.4 + 0.15 * cluster.outlets), 2),
                ),
            )
        )
    closing = sorted((d for d in docs if (ctx.t_res.date() - d.day).days <= MERGE_DAYS), key=lambda d: -d.relevance)
    events.append(
        DraftEvent(
            key="outcome",
            title=f"Outcome: {ctx.title} — {ctx.outcome_text}"[:500],
            description=f"The question resolved {ctx.outcome_text} on {ctx.t_res.date().isoformat()}.",
            occurred_on=ctx.t_res.date(),
            event_type="Outcome",
            is_outcome=True,
            source_ids=tuple(sorted(d.id for d in closing[:3])),
        )
    )
    explanation = _explanation(ctx, events)
    draft = GraphDraft(events=tuple(events), links=_chain(ctx, events, relevance), explanation=explanation)
    log: list[dict[str, object]] = []
    report = check(draft, thresholds)
    log.append({"round": 1, "action": "chain events in date order", "quality": report.as_dict()})
    if not report.passed and budget >= 2:
        # One correction suffices: after it every remaining link is strong, so a second changes nothing.
        trimmed = delete_weak_links(draft, thresholds)
        strong = {link.source for link in trimmed.links}
        kept = [e for e in events if e.is_outcome or e.key in strong]
        # Re-chain only the strongly linked events: they become each other's intermediate causes.
        rechained = tuple(link for link in _chain(ctx, kept, relevance) if is_included(link, thresholds))
        draft = replace(draft, links=rechained)
        report = check(draft, thresholds)
        log.append(
            {"round": 2, "action": "delete weak links, re-chain strongly linked events", "quality": report.as_dict()}
        )
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
