"""Forecast event texts embedded and parsed ahead of grading (the ``guarded`` matcher's vectors and
parse facts).

Grading is bound by the embedding model (tens of texts per second per core); a forecast's texts
embedded on the grade queue while its question is open are read from the store when it is graded,
so the burst after a resolution costs the store's reads instead. Only the matcher's texts are
embedded (``guarded_texts.embeddable_texts``: the first EMBEDDED_CHARS characters, no stuffed or
one-word events), so a huge graph costs at most its bounded event count times a bounded text.
Their parse facts (``guarded_texts.parsed_texts``) are stored the same way, so that a grading worker
parses none of them. ``forecast_submit`` and ``forecast_submit_batch`` send them once the forecasts
are committed.
"""

from __future__ import annotations

from collections.abc import Sequence

from grading.embeddings import event_texts_embed
from grading.scoring.guarded_texts import embeddable_texts, parsed_texts
from grading.text_facts import event_texts_parse
from leaderboard.models import Forecast
from leaderboard.selectors.grade_keys import matcher_settings
from leaderboard.services.grade_scoring import forecast_events


def forecast_embeddings_compute(*, forecast_ids: Sequence[int]) -> int:
    """Embed and parse the event texts of these forecasts' graphs that are not stored yet;
    idempotent. Returns how many texts the model embedded."""
    matcher = matcher_settings()
    if matcher.matcher != "guarded":
        return 0
    graphs = Forecast.objects.filter(pk__in=list(forecast_ids), graph__isnull=False).values_list("graph", flat=True)
    texts: list[str] = []
    parsed: list[str] = []
    for graph in graphs:
        if isinstance(graph, dict):
            events = forecast_events(graph.get("events"))
            texts.extend(embeddable_texts(events, matcher))
            parsed.extend(parsed_texts(events, matcher))
    embedded = event_texts_embed(texts=texts)
    event_texts_parse(texts=parsed)
    return embedded
