"""The poller of each source kind, in one table: what ``source_poll`` calls to fetch and store a
source, and what ``source_validate`` asks about a source's options."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ingestion.markets import kalshi, manifold, polymarket
from ingestion.markets.selection import SELECTION_OPTIONS
from ingestion.models import Source
from ingestion.polls import Poller
from ingestion.services.feed_poll import FEED_OPTIONS, feed_fetch, feed_options_problem, feed_store
from ingestion.services.market_poll import market_fetch, market_options_problem, market_store


def _market_poller(client_options: frozenset[str]) -> Poller:
    return Poller(
        fetch=market_fetch,
        store=market_store,
        options=SELECTION_OPTIONS | client_options,
        options_problem=market_options_problem,
    )


POLLERS: Mapping[str, Poller] = MappingProxyType(
    {
        Source.Kind.RSS.value: Poller(
            fetch=feed_fetch, store=feed_store, options=FEED_OPTIONS, options_problem=feed_options_problem
        ),
        Source.Kind.POLYMARKET.value: _market_poller(polymarket.PolymarketClient.OPTIONS),
        Source.Kind.MANIFOLD.value: _market_poller(manifold.ManifoldClient.OPTIONS),
        Source.Kind.KALSHI.value: _market_poller(kalshi.KalshiClient.OPTIONS),
    }
)
