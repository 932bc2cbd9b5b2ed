"""Causal links from evidence: the offline builder's linking step (pure; no Django).

Two events are linked, earlier to later (at most ``WINDOW_DAYS`` apart), when the evidence supports it:

* **Shared actors and objects**: the stems both events' headlines, leads and named entities share,
  leaving out those most events of the story share (the question's own subject, which links
  everything and so nothing). Each shared stem weighs its rarity among the story's events (IDF);
  ``SHARED_FULL`` of weight is full support.
* **Causal cues** in the later event's text (*after*, *following*, *in response to*, *because of*,
  *due to*, *prompted*, *amid*, ...) followed within eight words by a stem of the earlier event:
  the report itself says what led to it.

Support ``s = 0.6 x min(1, shared weight / SHARED_FULL) + 0.4 x [cue]``. A later event keeps its two
best-supported causes with ``s`` at least the round's minimum. Strength ``0.2 + 0.6 s`` and confidence
``0.55 + 0.4 s`` grow with the support, so a link that the thresholds call weak is one the evidence
does not carry. Relation: *Triggers* (a cue, within three days), *Causes* (a cue), *Enables* (shared
actors alone).

Chains are closed at the outcome node, latest events first: an event that moves the outcome
(Positive or Negative) strongly enough to make an included link links to it, unless an event it
causes already reaches the outcome; *Causes* with strength ``+(0.1 + 0.8 r)`` when it supports the
resolved outcome, *Inhibits* with ``-(0.1 + 0.8 r)`` when it opposes it (``r`` its relevance), at the
event's own confidence. Depth then follows the story: the longest chain of developments that share
actors and end in the outcome.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from grading.builders.draft import DraftLink
from grading.builders.relevance import idf_of, stems

WINDOW_DAYS = 30
# A development no evidence links to a cause continues the story's previous development (a brief
# gives each development one line, weeks apart): a weak but included link, in the correction round.
CHRONICLE_SUPPORT = 0.2
CHRONICLE_DAYS = 180
SHARED_FULL = 4.0
COMMON_SHARE = 0.5
MAX_CAUSES = 2
CUE_REACH = 8
_CUES = re.compile(
    r"\b(after|following|in response to|in reaction to|because of|due to|as a result of|prompted by|"
    r"triggered by|amid|in the wake of|since|citing|blamed|blames|blaming|led to|leads to|prompted|"
    r"prompts|forced|sparked|caused)\b",
    re.IGNORECASE,
)


@dataclass
class Node:
    """An event as the linker sees it."""

    key: str
    day: date
    text: str
    terms: frozenset[str]
    alignment: int  # +1 supports the resolved outcome, -1 opposes it, 0 neither
    relevance: float
    confidence: float
    source_ids: tuple[int, ...]
    after: list[str] = field(default_factory=list)  # stems that follow a causal cue in its text


def node_after_cues(text: str) -> list[str]:
    out: list[str] = []
    for match in _CUES.finditer(text):
        out.extend(stems(text[match.end() : match.end() + 120])[:CUE_REACH])
    return out


@dataclass(frozen=True)
class Support:
    cause: str
    effect: str
    support: float
    cue: bool
    shared: tuple[str, ...]
    gap_days: int


def supports(nodes: Sequence[Node], *, subject: frozenset[str] = frozenset()) -> list[Support]:
    """Every supported (earlier -> later) pair with its support, best first per effect. The
    question's own names (``subject``) are no shared actor: they join every story about the same
    company or country, related or not."""
    common = _common_terms(nodes) | set(subject)
    idf = idf_of(n.terms for n in nodes)
    found: list[Support] = []
    ordered = sorted(nodes, key=lambda n: (n.day, n.key))
    for j, effect in enumerate(ordered):
        cue_terms = set(effect.after) - common
        for cause in ordered[:j]:
            gap = (effect.day - cause.day).days
            if gap > WINDOW_DAYS:
                continue
            shared = sorted((cause.terms & effect.terms) - common)
            weight = sum(idf.get(t, 0.0) for t in shared)
            cue = bool(cue_terms & (cause.terms - common))
            s = 0.6 * min(1.0, weight / SHARED_FULL) + (0.4 if cue else 0.0)
            if s > 0:
                found.append(Support(cause.key, effect.key, round(s, 4), cue, tuple(shared), gap))
    return found


def _common_terms(nodes: Sequence[Node]) -> set[str]:
    counts: Counter[str] = Counter(t for n in nodes for t in n.terms)
    return {t for t, c in counts.items() if c > COMMON_SHARE * len(nodes)} if len(nodes) > 2 else set()


def event_links(
    nodes: Sequence[Node], *, minimum: float, subject: frozenset[str] = frozenset(), chronicle: bool = False
) -> list[DraftLink]:
    """Links between events: each event's ``MAX_CAUSES`` best causes with support >= ``minimum``;
    with ``chronicle``, an event left without a cause continues the previous development it shares
    a word with (within ``CHRONICLE_DAYS``)."""
    by_effect: dict[str, list[Support]] = {}
    for s in supports(nodes, subject=subject):
        if s.support >= minimum:
            by_effect.setdefault(s.effect, []).append(s)
    sources = {n.key: n.source_ids for n in nodes}
    links: list[DraftLink] = []
    for effect in sorted(by_effect):
        best = sorted(by_effect[effect], key=lambda s: (-s.support, s.gap_days, s.cause))[:MAX_CAUSES]
        for s in sorted(best, key=lambda s: s.cause):
            relation = ("Triggers" if s.gap_days <= 3 else "Causes") if s.cue else "Enables"
            why = "the later report names it as a cause" if s.cue else "they share actors and objects"
            links.append(
                DraftLink(
                    source=s.cause,
                    target=s.effect,
                    relation=relation,
                    strength=round(0.2 + 0.6 * s.support, 2),
                    confidence=round(0.55 + 0.4 * s.support, 2),
                    reasoning=(
                        f"Offline builder: {why} ({', '.join(s.shared[:5]) or 'causal cue'}); "
                        f"{s.gap_days} day(s) apart; support {s.support:.2f}."
                    ),
                    evidence_ids=sources[s.effect],
                )
            )
    if chronicle:
        links.extend(_chronicle(nodes, {link.target for link in links}))
    return links


def _chronicle(nodes: Sequence[Node], caused: set[str]) -> list[DraftLink]:
    ordered = sorted(nodes, key=lambda n: (n.day, n.key))
    strength, confidence = round(0.2 + 0.6 * CHRONICLE_SUPPORT, 2), round(0.55 + 0.4 * CHRONICLE_SUPPORT, 2)
    links = []
    for j, effect in enumerate(ordered):
        if effect.key in caused:
            continue
        for cause in reversed(ordered[:j]):
            gap = (effect.day - cause.day).days
            if gap > CHRONICLE_DAYS:
                break
            shared = sorted(cause.terms & effect.terms)
            if gap > 0 and shared:
                links.append(
                    DraftLink(
                        source=cause.key,
                        target=effect.key,
                        relation="Enables",
                        strength=strength,
                        confidence=confidence,
                        reasoning=(
                            f"Offline builder: no report names a cause; it continues the story's previous "
                            f"development ({', '.join(shared[:5])}), {gap} day(s) earlier."
                        ),
                        evidence_ids=effect.source_ids,
                    )
                )
                break
    return links


def outcome_links(
    nodes: Sequence[Node],
    event_to_event: Sequence[DraftLink],
    outcome_key: str,
    *,
    min_strength: float = 0.3,
    min_confidence: float = 0.6,
) -> list[DraftLink]:
    """Close chains at the outcome node: latest first, an event that moves the outcome strongly enough
    links to it unless one of the events it causes already reaches the outcome."""
    children: dict[str, list[str]] = {}
    for link in event_to_event:
        children.setdefault(link.source, []).append(link.target)
    reaches: dict[str, bool] = {}
    links: list[DraftLink] = []
    for node in sorted(nodes, key=lambda n: (n.day, n.key), reverse=True):
        if any(reaches.get(child, False) for child in children.get(node.key, ())):
            reaches[node.key] = True
            continue
        size = round(0.1 + 0.8 * node.relevance, 2)
        strong = node.alignment != 0 and size >= min_strength and node.confidence >= min_confidence
        reaches[node.key] = strong
        if not strong:
            continue
        supports_outcome = node.alignment > 0
        links.append(
            DraftLink(
                source=node.key,
                target=outcome_key,
                relation="Causes" if supports_outcome else "Inhibits",
                strength=size if supports_outcome else -size,
                confidence=round(node.confidence, 2),
                reasoning=(
                    f"Offline builder: the last development of its chain that moves the outcome; it "
                    f"{'supports' if supports_outcome else 'opposes'} the resolved outcome (relevance {node.relevance:.2f})."
                ),
                evidence_ids=node.source_ids,
            )
        )
    return sorted(links, key=lambda link: link.source)
