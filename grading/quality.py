"""Quality enforcement of WorldReasoner, Appendix B.3 (pure; no Django).

A graph passes when all of these hold:

* **depth** >= ``min_depth``: the longest directed chain of *included* links ending at the outcome
  event, counted in hops ("causal chain length from an initiating event to the outcome");
* **events** >= ``min_events``: event nodes, the outcome node included;
* **sources** >= ``min_sources``: distinct articles cited by events (sources) or links (evidence),
  fitted by builders to the archive's density (:func:`fit_to_archive`);
* **links** >= ``min_links``: directed causal links;
* **weak links**: every link is an *included* link, i.e. confidence >= ``min_link_confidence`` and
  |strength| >= ``min_link_strength``. Strength is a signed causal effect in [-1, 1] (B.1), so an
  inhibiting link of strength -0.7 is as strong as an enabling one of 0.7; the threshold applies to
  the magnitude. A graph holding a weak link fails until the builder deletes or strengthens it.

Builders correct a failing graph (delete weak links, add intermediate causes) and re-check within
their budget; a graph that still fails is stored with ``graph_built = False``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import networkx as nx

from grading.builders.draft import DraftLink, GraphDraft


@dataclass(frozen=True)
class Thresholds:
    min_depth: int = 3
    min_events: int = 10
    min_sources: int = 20
    min_links: int = 1
    min_link_confidence: float = 0.6
    min_link_strength: float = 0.3
    # Reports per development in the archive the graph was built from, when the sources threshold
    # was fitted to it (see :func:`fit_to_archive`); None: the threshold as configured.
    reports_per_event: float | None = None


def fit_to_archive(thresholds: Thresholds, reports_per_event: float) -> Thresholds:
    """The sources threshold fitted to how densely the archive reports a story.

    WorldReasoner's 10 events and 20 sources assume about two reports per development (several
    outlets). A brief that gives each development one item (a chronicle such as Wikipedia's
    Current events portal) cannot cite 20 sources for a 16-item storyline, so the sources needed
    become ``ceil(min_events x reports per event)``, never more than configured and never fewer than
    the events needed. The other checks stand: a graph still needs ``min_events`` events and a chain
    of ``min_depth`` included links to the outcome, so a thin graph of a few items does not pass.
    """
    density = max(1.0, reports_per_event)
    fitted = max(thresholds.min_events, math.ceil(thresholds.min_events * density - 1e-9))
    return replace(
        thresholds, min_sources=min(thresholds.min_sources, fitted), reports_per_event=round(reports_per_event, 2)
    )


@dataclass(frozen=True)
class QualityReport:
    passed: bool
    depth: int
    events: int
    sources: int
    links: int
    weak_links: list[tuple[str, str]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    thresholds: Thresholds = field(default_factory=Thresholds)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["weak_links"] = [list(pair) for pair in self.weak_links]
        return data


def is_included(link: DraftLink, thresholds: Thresholds) -> bool:
    return link.confidence >= thresholds.min_link_confidence and abs(link.strength) >= thresholds.min_link_strength


def outcome_depth(draft: GraphDraft, links: list[DraftLink] | tuple[DraftLink, ...] | None = None) -> int:
    """Hops of the longest chain of ``links`` (default: all) that ends at the outcome event."""
    outcome = draft.outcome()
    if outcome is None:
        return 0
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(e.key for e in draft.events)
    graph.add_edges_from((link.source, link.target) for link in (draft.links if links is None else links))
    if not nx.is_directed_acyclic_graph(graph):
        return 0
    # Longest path ending at each node, in topological order.
    longest: dict[str, int] = {}
    for node in nx.topological_sort(graph):
        longest[node] = max((longest[p] + 1 for p in graph.predecessors(node)), default=0)
    return longest[outcome.key]


def check(draft: GraphDraft, thresholds: Thresholds) -> QualityReport:
    weak = [(link.source, link.target) for link in draft.links if not is_included(link, thresholds)]
    included = [link for link in draft.links if is_included(link, thresholds)]
    depth = outcome_depth(draft, included)
    events = len(draft.events)
    sources = len(draft.source_ids())
    links = len(draft.links)
    failures: list[str] = []
    if draft.outcome() is None:
        failures.append("The graph has no outcome event.")
    if depth < thresholds.min_depth:
        failures.append(
            f"Causal depth is {depth} hop(s) to the outcome; at least {thresholds.min_depth} are needed: "
            "add intermediate cause events and link them in a chain to the outcome."
        )
    if events < thresholds.min_events:
        failures.append(f"The graph has {events} events; at least {thresholds.min_events} are needed.")
    if sources < thresholds.min_sources:
        fitted = (
            f" (fitted to {thresholds.reports_per_event} reports per development in the archive)"
            if thresholds.reports_per_event is not None
            else ""
        )
        failures.append(
            f"The graph cites {sources} distinct source articles; at least {thresholds.min_sources} are needed{fitted}."
        )
    if links < thresholds.min_links:
        failures.append(f"The graph has {links} causal links; at least {thresholds.min_links} are needed.")
    if weak:
        failures.append(
            f"{len(weak)} link(s) are below confidence {thresholds.min_link_confidence} or |strength| "
            f"{thresholds.min_link_strength}: "
            + ", ".join(f"{s}->{t}" for s, t in weak)
            + ". Delete them or support them with stronger evidence."
        )
    return QualityReport(
        passed=not failures,
        depth=depth,
        events=events,
        sources=sources,
        links=links,
        weak_links=weak,
        failures=failures,
        thresholds=thresholds,
    )


def delete_weak_links(draft: GraphDraft, thresholds: Thresholds) -> GraphDraft:
    """The correction of B.3's DeleteHypothesisTool: drop every link below the thresholds."""
    return draft.without_links(
        {(link.source, link.target) for link in draft.links if not is_included(link, thresholds)}
    )
