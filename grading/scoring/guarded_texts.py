"""The texts the ``guarded`` matcher embeds and parses, as it sends them to the embedder and the
parser, for computing their vectors and parse facts ahead of grading (pure; no Django): the grading
app stores them when a hindsight graph is stored and when a forecast with a graph is accepted, so
that grading reads them instead."""

from __future__ import annotations

from collections.abc import Iterable

from grading.scoring.guarded import EMBEDDED_CHARS, guarded_matcher_settings
from grading.scoring.matching import Event, MatcherSettings
from grading.scoring.pair_verdicts import reads_as_english
from grading.scoring.polarity import shape
from grading.scoring.reasoning import _event_text

__all__ = ["embeddable_texts", "parsed_texts"]


def embeddable_texts(
    events: Iterable[Event], settings: MatcherSettings | None = None, *, hindsight: bool = False
) -> list[str]:
    """The texts of ``events`` the matcher may embed (as it sends them to the model), for computing
    their vectors ahead of grading. Forecast events: every event of more than one content word
    (grading embeds those with a hindsight event inside their date window). Hindsight events
    (``hindsight=True``): every one but the outcome node and rejected events."""
    fields = (settings or guarded_matcher_settings()).text_fields
    if hindsight:
        texts = (_event_text(e, fields) for e in events if not e.is_outcome and not e.rejected)
        return [t[:EMBEDDED_CHARS] for t in dict.fromkeys(texts)]
    texts = (_event_text(e, fields) for e in events)
    return [t[:EMBEDDED_CHARS] for t in dict.fromkeys(texts) if shape(t)[0] > 1]


def parsed_texts(
    events: Iterable[Event], settings: MatcherSettings | None = None, *, hindsight: bool = False
) -> list[str]:
    """The texts of ``events`` the learned decision may parse, for computing their facts ahead of
    grading. Forecast events: every English event of more than one content word (grading parses
    those in a candidate pair). Hindsight events (``hindsight=True``): every one but the outcome node
    and rejected events."""
    fields = (settings or guarded_matcher_settings()).text_fields
    if hindsight:
        return list(dict.fromkeys(_event_text(e, fields) for e in events if not e.is_outcome and not e.rejected))
    texts = dict.fromkeys(_event_text(e, fields) for e in events)
    return [t for t in texts if shape(t)[0] > 1 and reads_as_english(t)]
