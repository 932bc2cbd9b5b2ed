"""Evidence quality (WorldReasoner, Appendix F.2; docs/methods.md).

* ``C``: the forecast's sources (cited ids plus ids read through the gateway for it; the caller
  builds the union). ``C^H``: the reference evidence set (union of the hindsight graph's sources).
  Overlap is exact identifier match.
* Source precision ``SrcP = |(C - L) & C^H| / |C|``, 0 when ``C`` is empty (paper F.2), where ``L``
  are the leaked items: a leak stays in the denominator but never earns a point (an agent gains
  nothing by citing what it could not have seen).
* Source recall ``|(C - L) & C^H| / |C^H|`` (diagnostic), None when ``C^H`` is empty.
* Leaks: cited items published at or after ``as_of`` (t_sim for replay, received_at for live).
  Items whose publication time is unknown (missing from the mapping, None, or a naive datetime that
  cannot be compared safely) are **not** counted as leaks; the gateway never serves such items, so
  they can only come from citations and are reported as ``unknown_time``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from grading.scoring.aggregate import safe_ratio

K = TypeVar("K", bound=Hashable)

__all__ = ["EvidenceScore", "leaked_items", "score_evidence", "source_precision", "source_recall"]


def _aware(value: dt.datetime) -> bool:
    return value.tzinfo is not None and value.tzinfo.utcoffset(value) is not None


def source_precision(
    sources: Iterable[Hashable], reference: Iterable[Hashable], *, leaked: Iterable[Hashable] = ()
) -> float:
    """``|(C - L) & C^H| / |C|``, 0.0 when ``C`` is empty."""
    c = frozenset(sources)
    return safe_ratio(len((c - frozenset(leaked)) & frozenset(reference)), len(c))


def source_recall(
    sources: Iterable[Hashable], reference: Iterable[Hashable], *, leaked: Iterable[Hashable] = ()
) -> float | None:
    """``|(C - L) & C^H| / |C^H|``, None when ``C^H`` is empty."""
    ch = frozenset(reference)
    if not ch:
        return None
    return len((frozenset(sources) - frozenset(leaked)) & ch) / len(ch)


def leaked_items(
    cited: Iterable[K], published_at: Mapping[K, dt.datetime | None], as_of: dt.datetime
) -> tuple[list[K], list[K]]:
    """(leaked ids, ids with unknown publication time) among ``cited``, each in first-seen order.

    ``as_of`` must be timezone-aware; a cited item leaks when ``published_at >= as_of``.
    """
    if not isinstance(as_of, dt.datetime) or not _aware(as_of):
        raise ValueError("as_of must be a timezone-aware datetime")
    leaked: list[K] = []
    unknown: list[K] = []
    seen: set[K] = set()
    for item in cited:
        if item in seen:
            continue
        seen.add(item)
        published = published_at.get(item)
        if published is None or not isinstance(published, dt.datetime) or not _aware(published):
            unknown.append(item)
        elif published >= as_of:
            leaked.append(item)
    return leaked, unknown


@dataclass(frozen=True, slots=True)
class EvidenceScore(Generic[K]):
    source_precision: float
    source_recall: float | None
    n_sources: int
    n_reference: int
    n_overlap: int
    leaks: int
    leaked_ids: tuple[K, ...]
    unknown_time: int


def score_evidence(
    sources: Iterable[K],
    reference: Iterable[K],
    *,
    cited: Iterable[K] = (),
    published_at: Mapping[K, dt.datetime | None] | None = None,
    as_of: dt.datetime | None = None,
    leaked: Iterable[K] = (),
) -> EvidenceScore[K]:
    """All evidence metrics at once.

    Leaks are ``leaked`` (the caller's verdict) plus, when ``as_of`` is given, the cited items
    published at or after it (:func:`leaked_items`). They count in ``|C|`` and never in the overlap.
    """
    c = frozenset(sources)
    ch = frozenset(reference)
    found: list[K] = list(dict.fromkeys(leaked))
    unknown: list[K] = []
    if as_of is not None:
        by_time, unknown = leaked_items(cited, published_at or {}, as_of)
        found.extend(k for k in by_time if k not in found)
    earning = c - frozenset(found)
    return EvidenceScore(
        source_precision=source_precision(c, ch, leaked=found),
        source_recall=source_recall(c, ch, leaked=found),
        n_sources=len(c),
        n_reference=len(ch),
        n_overlap=len(earning & ch),
        leaks=len(found),
        leaked_ids=tuple(found),
        unknown_time=len(unknown),
    )
