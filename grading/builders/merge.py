"""Reports of one development become one event: the offline builder's "merge" stage (pure; no Django).

Single-pass clustering in publication order (topic detection and tracking, Allan, Papka and
Lavrenko, SIGIR 1998): a report joins the first event whose reports it resembles, headline-and-lead
stems with an IDF-weighted cosine of at least ``MERGE_SIMILARITY`` at most ``MERGE_DAYS`` apart, or
of at least ``MERGE_SIMILARITY_NEXT_DAY`` within a day (outlets word one development differently);
otherwise it starts an event of its own. An event keeps every report as a source.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from grading.builders.relevance import Doc, cosine, idf_of

MERGE_SIMILARITY = 0.5
MERGE_DAYS = 3
MERGE_SIMILARITY_NEXT_DAY = 0.3


@dataclass
class Cluster:
    """The reports of one development."""

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

    @property
    def source_ids(self) -> tuple[int, ...]:
        return tuple(sorted(d.id for d in self.docs))


def merge_reports(docs: Sequence[Doc]) -> list[Cluster]:
    """The events of ``docs`` (module docstring), in order of their first report."""
    idf = idf_of(d.head for d in docs)
    clusters: list[Cluster] = []
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
            clusters.append(Cluster(docs=[doc]))
        else:
            home.docs.append(doc)
    return clusters
