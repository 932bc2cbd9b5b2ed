"""From events to causal chains: the offline builder's "orient" and "choose chains" stages (pure; no Django).

**Orient** (:func:`orient`). Every pair of events is a candidate link from the earlier to the later
(same day: the first reported first). Its coherence is the strongest item link between their
reports (:mod:`grading.builders.itemgraph`, undecayed, at most 1), plus ``CUE_BONUS`` when the
later report names the earlier development after a causal cue (*after*, *following*, *in response
to*, ... : :func:`grading.builders.linking.cue_stems`), times ``1 / (1 + k / HOP_EVENTS)``
with ``k`` the story's developments between the two: a development is more likely caused by the
one just before it than by one several developments earlier, however many quiet weeks lie between
(a chronicle reports an election months after the protests that caused it, and nothing between).
Every event also has a candidate link to the outcome: its coherence with the outcome's own reports,
or (when the outcome has none) ``OUTCOME_RELEVANCE`` times its relevance, decayed the same way by
the developments after it.

**Choose chains** (:func:`widest_paths`, :func:`choose_chains`). As in Shahaf and Guestrin's
"Connecting the Dots", a chain is as strong as its weakest link. The graph is ordered in time, so
the best chain from every event into the outcome (the path whose weakest link is strongest, a
*bottleneck* or widest path) is found in one pass from the latest event back, in O(E). The events
whose best chain's weakest link is at least ``CHAIN_MIN`` are kept, strongest first, up to the
graph's event budget, each with the next hop of its chain: the union is a tree into the outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from scipy import sparse

from grading.builders.linking import cue_stems
from grading.builders.merge import Cluster

CUE_BONUS = 0.2
HOP_EVENTS = 3.0
OUTCOME_RELEVANCE = 0.5
CHAIN_MIN = 0.08
OUTCOME = "outcome"


@dataclass(frozen=True)
class Edge:
    """A candidate causal link, earlier to later, with its coherence in [0, 1]."""

    cause: str
    effect: str
    coherence: float
    cue: bool
    gap_days: int


@dataclass(frozen=True)
class Hop:
    """An event's best chain into the outcome: its weakest link and the next event on it."""

    bottleneck: float
    next: str
    edge: Edge


def _decay(between: int) -> float:
    return 1.0 / (1.0 + max(0, between) / HOP_EVENTS)


def orient(
    events: Sequence[tuple[str, Cluster]],
    links: sparse.csr_matrix,
    index: dict[int, int],
    *,
    outcome_docs: Sequence[int],
    closing_day: date,
) -> list[Edge]:
    """Candidate links between ``events`` (key, reports), earlier to later, and into the outcome."""
    rows = {key: [index[d.id] for d in cluster.docs if d.id in index] for key, cluster in events}
    cues = {key: set(cue_stems(" ".join(f"{d.title}. {d.lead}" for d in cluster.docs))) for key, cluster in events}
    terms = {key: {s for d in cluster.docs for s in d.head} for key, cluster in events}
    ordered = sorted(events, key=lambda e: (e[1].day, e[1].best.id))
    rank = {key: n for n, (key, _) in enumerate(ordered)}
    dense = {key: links[r].toarray() if r else None for key, r in rows.items()}
    out: list[Edge] = []
    for j, (effect, later) in enumerate(ordered):
        for cause, earlier in ordered[:j]:
            block = dense[cause]
            strongest = float(block[:, rows[effect]].max()) if block is not None and rows[effect] else 0.0
            cue = bool(cues[effect] & terms[cause])
            coherence = min(1.0, strongest + (CUE_BONUS if cue else 0.0))
            if coherence <= 0:
                continue
            gap = (later.day - earlier.day).days
            out.append(Edge(cause, effect, round(coherence * _decay(j - rank[cause] - 1), 4), cue, gap))
    closing_rows = [index[i] for i in outcome_docs if i in index]
    for key, cluster in ordered:
        block = dense[key]
        strongest = float(block[:, closing_rows].max()) if block is not None and closing_rows else 0.0
        coherence = min(1.0, max(strongest, OUTCOME_RELEVANCE * cluster.relevance))
        gap = (closing_day - cluster.day).days
        out.append(Edge(key, OUTCOME, round(coherence * _decay(len(ordered) - rank[key] - 1), 4), False, gap))
    return out


def widest_paths(days: dict[str, date], edges: Sequence[Edge]) -> dict[str, Hop]:
    """Per event, its best chain into the outcome (module docstring); events with none are absent."""
    leaving: dict[str, list[Edge]] = {}
    for edge in edges:
        leaving.setdefault(edge.cause, []).append(edge)
    best: dict[str, Hop] = {}
    for key in sorted(days, key=lambda k: (days[k], k), reverse=True):
        options = []
        for edge in leaving.get(key, ()):
            if edge.effect == OUTCOME:
                options.append(Hop(edge.coherence, OUTCOME, edge))
            elif edge.effect in best:
                options.append(Hop(min(edge.coherence, best[edge.effect].bottleneck), edge.effect, edge))
        if options:
            # Ties go to the longer chain (a step through an intermediate development), then the nearer.
            best[key] = max(options, key=lambda h: (h.bottleneck, h.next != OUTCOME, -h.edge.gap_days, h.next))
    return best


def choose_chains(hops: dict[str, Hop], relevance: dict[str, float], budget: int) -> list[str]:
    """The events kept: strongest chains first (then the most relevant), each with the rest of its
    chain, at most ``budget`` events; events whose chain is weaker than ``CHAIN_MIN`` only after all
    the others (they stay unlinked)."""
    order = sorted(hops, key=lambda k: (-(hops[k].bottleneck >= CHAIN_MIN), -relevance.get(k, 0.0), k))
    kept: list[str] = []
    for key in order:
        chain = []
        step = key
        while step != OUTCOME and step not in kept and step not in chain:
            chain.append(step)
            if hops[step].bottleneck < CHAIN_MIN:
                break
            step = hops[step].next
        if len(kept) + len(chain) <= budget:
            kept.extend(chain)
    return kept
